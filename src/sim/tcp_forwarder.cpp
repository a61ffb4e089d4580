#include "sim/tcp_forwarder.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <string>

#include "util/error.h"

namespace dbform::sim {

sockaddr_in loopback_address(int port) {
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  address.sin_port = htons(static_cast<uint16_t>(port));
  return address;
}

namespace {

// A connection to 127.0.0.1:port, or -1 when nothing listens there (a stopped server).
int connect_loopback(int port) {
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return -1;
  const sockaddr_in address = loopback_address(port);
  if (::connect(fd, reinterpret_cast<const sockaddr*>(&address), sizeof address) != 0) {
    ::close(fd);
    return -1;
  }
  return fd;
}

bool send_all(int fd, const char* data, size_t size) {
  while (size > 0) {
    const ssize_t sent = ::send(fd, data, size, MSG_NOSIGNAL);
    if (sent < 0 && errno == EINTR) continue;
    if (sent <= 0) return false;
    data += sent;
    size -= static_cast<size_t>(sent);
  }
  return true;
}

}  // namespace

TcpForwarder::TcpForwarder(int listen_port, int target_port) : listen_port_(listen_port), target_port_(target_port) {
  listener_ = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (listener_ < 0) throw Error(std::string("the pooler cannot open a socket: ") + std::strerror(errno));
  const int one = 1;
  ::setsockopt(listener_, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  const sockaddr_in address = loopback_address(listen_port);
  if (::bind(listener_, reinterpret_cast<const sockaddr*>(&address), sizeof address) != 0 ||
      ::listen(listener_, 64) != 0) {
    const std::string why = std::strerror(errno);
    ::close(listener_);
    throw Error("the pooler cannot listen on 127.0.0.1:" + std::to_string(listen_port) + ": " + why);
  }
  acceptor_ = std::thread([this] { accept_loop(); });
}

TcpForwarder::~TcpForwarder() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stopping_ = true;
    for (int fd : open_) ::shutdown(fd, SHUT_RDWR);  // their carriers see the end and close them
  }
  ::shutdown(listener_, SHUT_RDWR);  // accept() returns
  acceptor_.join();
  ::close(listener_);
  for (auto& c : carriers_) c.thread.join();
}

void TcpForwarder::accept_loop() {
  for (;;) {
    const int client = ::accept4(listener_, nullptr, nullptr, SOCK_CLOEXEC);
    if (client < 0) {
      std::lock_guard<std::mutex> lock(mu_);
      if (stopping_ || errno == EBADF || errno == EINVAL) return;
      continue;  // EINTR, a connection aborted before it was taken, a passing shortage of descriptors
    }
    // The server refuses while it is stopped (a paused service): so does its pooler.
    const int server = connect_loopback(target_port_);
    if (server < 0) {
      ::close(client);
      continue;
    }
    std::lock_guard<std::mutex> lock(mu_);
    if (stopping_) {
      ::close(client);
      ::close(server);
      return;
    }
    for (auto it = carriers_.begin(); it != carriers_.end();) {  // those whose connection ended
      if (!it->done->load()) {
        ++it;
        continue;
      }
      it->thread.join();
      it = carriers_.erase(it);
    }
    open_.insert(client);
    open_.insert(server);
    auto done = std::make_shared<std::atomic<bool>>(false);
    carriers_.push_back({std::thread([this, client, server, done] {
                           carry(client, server);
                           done->store(true);
                         }),
                         done});
  }
}

void TcpForwarder::carry(int client, int server) {
  pollfd fds[2] = {{client, POLLIN, 0}, {server, POLLIN, 0}};
  char buffer[16384];
  for (bool open = true; open;) {
    if (::poll(fds, 2, -1) < 0) {
      if (errno == EINTR) continue;
      break;
    }
    for (int i = 0; i < 2 && open; ++i) {
      if (!(fds[i].revents & (POLLIN | POLLHUP | POLLERR))) continue;
      const ssize_t got = ::recv(fds[i].fd, buffer, sizeof buffer, 0);
      if (got < 0 && errno == EINTR) continue;
      // Either side's end (or an error) ends both: PostgreSQL's protocol has no half-closed use.
      open = got > 0 && send_all(fds[1 - i].fd, buffer, static_cast<size_t>(got));
    }
  }
  {
    std::lock_guard<std::mutex> lock(mu_);
    open_.erase(client);
    open_.erase(server);
  }
  ::close(client);
  ::close(server);
}

}  // namespace dbform::sim
