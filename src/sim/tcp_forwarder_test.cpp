// The pooler's forwarder: bytes both ways between loopback ports, a refused target refuses, and
// stopping it cuts what it carries.
#include <catch2/catch.hpp>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <string>
#include <memory>

#include "sim/tcp_forwarder.h"
#include "util/error.h"

using dbform::sim::loopback_address;
using dbform::sim::TcpForwarder;

namespace {

// A listening socket on a free loopback port; its port.
int listen_free(int& port) {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a = loopback_address(0);
  REQUIRE(::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0);
  REQUIRE(::listen(fd, 8) == 0);
  socklen_t size = sizeof a;
  REQUIRE(::getsockname(fd, reinterpret_cast<sockaddr*>(&a), &size) == 0);
  port = ntohs(a.sin_port);
  return fd;
}

int free_port() {
  int port = 0;
  ::close(listen_free(port));
  return port;
}

int dial(int port) {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a = loopback_address(port);
  REQUIRE(::connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0);
  return fd;
}

std::string read_some(int fd) {
  char buffer[256];
  const ssize_t n = ::recv(fd, buffer, sizeof buffer, 0);
  return n > 0 ? std::string(buffer, static_cast<size_t>(n)) : std::string();
}

}  // namespace

TEST_CASE("sim forwarder: bytes go both ways, and each connection is its own") {
  int target_port = 0;
  const int target = listen_free(target_port);
  TcpForwarder forwarder(free_port(), target_port);
  const int a = dial(forwarder.listen_port());
  const int b = dial(forwarder.listen_port());
  const int server_a = ::accept(target, nullptr, nullptr);
  const int server_b = ::accept(target, nullptr, nullptr);
  REQUIRE(::send(a, "ping", 4, 0) == 4);
  CHECK(read_some(server_a) == "ping");
  REQUIRE(::send(server_b, "pong", 4, 0) == 4);
  CHECK(read_some(b) == "pong");
  ::close(server_a);  // the server's end ends the client's
  CHECK(read_some(a).empty());
  for (int fd : {a, b, server_b, target}) ::close(fd);
}

TEST_CASE("sim forwarder: with nothing behind it the connection is closed, and stopping it cuts the open ones") {
  int closed_port = 0;
  ::close(listen_free(closed_port));
  {
    TcpForwarder forwarder(free_port(), closed_port);
    const int c = dial(forwarder.listen_port());
    CHECK(read_some(c).empty());  // the server refuses (a paused service): so does its pooler
    ::close(c);
  }
  int target_port = 0;
  const int target = listen_free(target_port);
  auto forwarder = std::make_unique<TcpForwarder>(free_port(), target_port);
  const int port = forwarder->listen_port();
  const int c = dial(port);
  const int server = ::accept(target, nullptr, nullptr);
  forwarder.reset();
  CHECK(read_some(c).empty());
  CHECK(read_some(server).empty());
  const int again = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a = loopback_address(port);
  CHECK(::connect(again, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0);  // no longer listening
  for (int fd : {c, server, target, again}) ::close(fd);
}

TEST_CASE("sim forwarder: a port taken is an error naming it") {
  int port = 0;
  const int taken = listen_free(port);
  CHECK_THROWS_WITH(TcpForwarder(port, 1), Catch::Contains("cannot listen on 127.0.0.1:" + std::to_string(port)));
  ::close(taken);
}
