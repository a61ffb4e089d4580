// CurlTransport against a real HTTP server on loopback (cpp-httplib), including the failures whose
// classification decides whether a create may be re-sent.
#include "http/curl_transport.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <httplib.h>

#include <atomic>
#include <condition_variable>
#include <future>
#include <mutex>
#include <thread>

#include "sim/connection_cut.h"

using dbform::CurlTransport;
using dbform::HttpRequest;
using dbform::TransportError;
using std::chrono::milliseconds;

namespace {

const std::string kAuthorization = "Bearer transport-test-secret";

struct SeenRequest {
  std::string method, path, body, authorization, content_type;
  int remote_port = -1;
};

// A loopback server with a few routes; records what it received. The socket listens from the
// constructor on, so requests queue in the backlog until the accept loop runs.
class TestServer {
 public:
  TestServer() {
    server_.Post("/echo", [this](const httplib::Request& req, httplib::Response& res) {
      record(req);
      res.status = 201;
      res.set_header("X-Request-Id", "abc-123");
      res.set_content("you sent: " + req.body, "text/plain");
    });
    server_.Post("/lose", [this](const httplib::Request& req, httplib::Response& res) {
      // Performed, then the connection ends before one byte of the answer leaves.
      record(req);
      // If no socket is found the answer arrives, and the test fails on it.
      dbform::sim::cut_connection_silently(req.local_port, req.remote_port);
      res.set_content("never arrives", "text/plain");
    });
    server_.Get("/status/503", [this](const httplib::Request& req, httplib::Response& res) {
      record(req);
      res.status = 503;
      res.set_header("Retry-After", "3");
      res.set_content(R"({"message":"busy"})", "application/json");
    });
    server_.Get("/truncated", [](const httplib::Request&, httplib::Response& res) {
      // Promises 100 bytes, sends 7, then the provider fails and the server drops the connection.
      res.set_content_provider(100, "text/plain", [](size_t, size_t, httplib::DataSink& sink) {
        sink.write("partial", 7);
        return false;
      });
    });
    server_.Get("/hang", [this](const httplib::Request&, httplib::Response& res) {
      std::unique_lock<std::mutex> lock(mu_);
      released_cv_.wait_for(lock, std::chrono::seconds(10), [this] { return released_; });
      res.set_content("too late", "text/plain");
    });
    port_ = server_.bind_to_any_port("127.0.0.1");
    REQUIRE(port_ > 0);
    thread_ = std::thread([this] { server_.listen_after_bind(); });
  }

  ~TestServer() {
    release_hanging();
    server_.stop();
    thread_.join();
  }

  std::string url(const std::string& path) const { return "http://127.0.0.1:" + std::to_string(port_) + path; }

  std::vector<SeenRequest> seen() {
    std::lock_guard<std::mutex> lock(mu_);
    return seen_;
  }

  void release_hanging() {
    std::lock_guard<std::mutex> lock(mu_);
    released_ = true;
    released_cv_.notify_all();
  }

 private:
  void record(const httplib::Request& req) {
    std::lock_guard<std::mutex> lock(mu_);
    seen_.push_back({req.method, req.path, req.body, req.get_header_value("Authorization"),
                     req.get_header_value("Content-Type"), req.remote_port});
  }

  httplib::Server server_;
  int port_ = -1;
  std::thread thread_;
  std::mutex mu_;
  std::condition_variable released_cv_;
  bool released_ = false;
  std::vector<SeenRequest> seen_;
};

// A port that is bound but not listening: connecting to it is refused, and nobody else can take
// it while the test runs.
// A TCP socket bound to a free port of 127.0.0.1: its descriptor, and the port in `port`.
int bound_loopback_socket(int& port) {
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  REQUIRE(::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0);
  socklen_t len = sizeof addr;
  REQUIRE(::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) == 0);
  port = ntohs(addr.sin_port);
  return fd;
}

class RefusingPort {
 public:
  RefusingPort() : fd_(bound_loopback_socket(port_)) {}
  ~RefusingPort() { ::close(fd_); }
  std::string url(const std::string& path) const { return "http://127.0.0.1:" + std::to_string(port_) + path; }

 private:
  int port_ = 0;  // before fd_: set while fd_ is initialised
  int fd_ = -1;
};

// One connection served by hand: its first request is answered and the connection kept alive;
// its second is read whole (performed), then the port stops listening and the connection closes
// before one byte of the answer. libcurl retries on a fresh connection, which is refused.
class DyingServer {
 public:
  DyingServer() : fd_(bound_loopback_socket(port_)) {
    REQUIRE(::listen(fd_, 4) == 0);
    thread_ = std::thread([this] { serve(); });
  }
  ~DyingServer() {
    ::shutdown(fd_, SHUT_RDWR);  // ends an accept still waiting if the test failed early
    thread_.join();
    ::close(fd_);
  }
  std::string url(const std::string& path) const { return "http://127.0.0.1:" + std::to_string(port_) + path; }
  int performed() const { return performed_; }  // read after the request's outcome is known

 private:
  void serve() {
    const int connection = ::accept4(fd_, nullptr, nullptr, SOCK_CLOEXEC);
    if (connection < 0) return;
    std::string pending;
    if (read_request(connection, pending)) {
      const std::string answer = "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok";
      if (::write(connection, answer.data(), answer.size()) == static_cast<ssize_t>(answer.size()) &&
          read_request(connection, pending)) {
        performed_ = 1;
        ::shutdown(fd_, SHUT_RDWR);  // the port, still bound, refuses new connections
      }
    }
    ::close(connection);
  }

  // Reads one request (headers and a Content-Length body) off `connection`; `pending` keeps what
  // arrived beyond it.
  static bool read_request(int connection, std::string& pending) {
    char buf[4096];
    auto fill = [&] {
      const ssize_t n = ::read(connection, buf, sizeof buf);
      if (n > 0) pending.append(buf, static_cast<size_t>(n));
      return n > 0;
    };
    size_t end;
    while ((end = pending.find("\r\n\r\n")) == std::string::npos)
      if (!fill()) return false;
    size_t body = 0;
    const size_t at = pending.find("Content-Length: ");
    if (at != std::string::npos && at < end) body = std::stoul(pending.substr(at + 16));
    while (pending.size() < end + 4 + body)
      if (!fill()) return false;
    pending.erase(0, end + 4 + body);
    return true;
  }

  int port_ = 0;  // before fd_: set while fd_ is initialised
  int fd_ = -1;
  std::thread thread_;
  std::atomic<int> performed_ = 0;
};

HttpRequest request(const std::string& method, const std::string& url, const std::string& body = "") {
  HttpRequest r{method, url, {{"Authorization", kAuthorization}}, body};
  if (!body.empty()) r.headers.emplace_back("Content-Type", "application/json");
  return r;
}

// Each thread keeps its curl handle, and with it a kept-alive connection, until the thread ends;
// the test server's stop() would wait out its keep-alive timeout for such a connection. Sending
// from a thread of its own closes the connection as soon as the call returns.
dbform::HttpResponse send_on_own_thread(CurlTransport& transport, const HttpRequest& req) {
  return std::async(std::launch::async, [&] { return transport.send(req); }).get();
}

TransportError send_expecting_failure(CurlTransport& transport, const HttpRequest& req) {
  try {
    send_on_own_thread(transport, req);
  } catch (const TransportError& e) {
    return e;
  }
  FAIL("the request did not fail");
  throw std::logic_error("unreachable");
}

// On a thread of its own: a POST to `warm` (which leaves a kept-alive connection), then a create
// to `create` on that connection. Says how the create ended: "answered", "unknown" (may have been
// performed) or "not sent" (certainly never reached the server).
std::string create_after_warm_connection(CurlTransport& transport, const std::string& warm, const std::string& create,
                                         bool never_replay) {
  return std::async(std::launch::async, [&]() -> std::string {
    transport.send(request("POST", warm, "{}"));
    HttpRequest req = request("POST", create, R"({"name":"orders"})");
    req.never_replay = never_replay;
    try {
      transport.send(req);
    } catch (const TransportError& e) {
      return e.may_have_reached_server() ? "unknown" : "not sent";
    }
    return "answered";
  }).get();
}

}  // namespace

TEST_CASE("http: curl transport sends method, headers and body and returns the response") {
  TestServer server;
  CurlTransport transport;
  auto response = send_on_own_thread(transport, request("POST", server.url("/echo"), R"({"name":"orders"})"));
  CHECK(response.status == 201);
  CHECK(response.body == R"(you sent: {"name":"orders"})");
  CHECK(response.header("x-request-id") == "abc-123");  // names lower-cased
  CHECK(response.header("content-type") == "text/plain");

  auto seen = server.seen();
  REQUIRE(seen.size() == 1);
  CHECK(seen[0].method == "POST");
  CHECK(seen[0].path == "/echo");
  CHECK(seen[0].body == R"({"name":"orders"})");
  CHECK(seen[0].authorization == kAuthorization);
  CHECK(seen[0].content_type == "application/json");
}

TEST_CASE("http: curl transport returns error statuses as responses") {
  TestServer server;
  CurlTransport transport;
  auto response = send_on_own_thread(transport, request("GET", server.url("/status/503")));
  CHECK(response.status == 503);
  CHECK(response.header("retry-after") == "3");
  CHECK(response.body == R"({"message":"busy"})");
  CHECK(send_on_own_thread(transport, request("GET", server.url("/no/such/route"))).status == 404);
}

TEST_CASE("http: curl transport keeps the connection alive between requests of a thread") {
  TestServer server;
  CurlTransport transport;
  std::async(std::launch::async, [&] {
    transport.send(request("GET", server.url("/status/503")));
    transport.send(request("POST", server.url("/echo"), "{}"));
  }).get();
  auto seen = server.seen();
  REQUIRE(seen.size() == 2);
  CHECK(seen[0].remote_port == seen[1].remote_port);
}

TEST_CASE("http: curl transport is safe to use from several threads") {
  TestServer server;
  CurlTransport transport;
  std::vector<std::thread> threads;
  std::mutex mu;
  std::vector<int> statuses;
  int mixed_up = 0;  // answers carrying another request's body: a handle shared by two requests
  for (int i = 0; i < 8; ++i) {
    threads.emplace_back([&, i] {
      for (int j = 0; j < 100; ++j) {
        const std::string body = std::to_string(i) + "-" + std::to_string(j);
        dbform::HttpResponse answer = transport.send(request("POST", server.url("/echo"), body));
        std::lock_guard<std::mutex> lock(mu);
        statuses.push_back(answer.status);
        mixed_up += answer.body != "you sent: " + body;
      }
    });
  }
  for (auto& t : threads) t.join();
  CHECK(statuses == std::vector<int>(800, 201));
  CHECK(mixed_up == 0);
  CHECK(server.seen().size() == 800);
}

TEST_CASE("http: a refused connection certainly did not reach the server") {
  RefusingPort port;
  CurlTransport transport;
  auto error = send_expecting_failure(transport, request("POST", port.url("/projects/p1/services"), "{}"));
  CHECK_FALSE(error.may_have_reached_server());
  std::string what = error.what();
  CHECK(what.find("POST " + port.url("/projects/p1/services") + ": ") == 0);
  CHECK(what.find("transport-test-secret") == std::string::npos);
}

TEST_CASE("http: unsupported URLs never leave, and credentials in a URL are not quoted") {
  CurlTransport transport;
  auto ftp = send_expecting_failure(transport, request("GET", "ftp://127.0.0.1/x"));
  CHECK_FALSE(ftp.may_have_reached_server());

  RefusingPort port;
  std::string url = port.url("/x");
  url.insert(url.find("127.0.0.1"), "user:url-secret@");
  auto error = send_expecting_failure(transport, request("GET", url));
  CHECK(std::string(error.what()).find("url-secret") == std::string::npos);
  CHECK(std::string(error.what()).find("user@127.0.0.1") != std::string::npos);
}

TEST_CASE("http: a connection dropped mid-response may have reached the server") {
  TestServer server;
  CurlTransport transport;
  auto error = send_expecting_failure(transport, request("GET", server.url("/truncated")));
  CHECK(error.may_have_reached_server());
  CHECK(std::string(error.what()).find("GET " + server.url("/truncated")) == 0);
}

TEST_CASE("http: a request timeout may have reached the server") {
  TestServer server;
  CurlTransport transport(dbform::TransportOptions{milliseconds(2000), milliseconds(200)});
  auto error = send_expecting_failure(transport, request("GET", server.url("/hang")));
  server.release_hanging();
  CHECK(error.may_have_reached_server());
  std::string what = error.what();
  CHECK(what.find("GET " + server.url("/hang")) == 0);
  CHECK(what.find("timed out") != std::string::npos);
  CHECK(what.find("transport-test-secret") == std::string::npos);
}

// libcurl re-sends a request whose reused keep-alive connection closes before any answer arrives:
// a create exposed to that is performed twice while the caller sees a single failure.
TEST_CASE("http: an answer lost on a reused connection is never replayed for a never-replay request") {
  auto lose_after_warm_connection = [](bool never_replay) {
    TestServer server;
    CurlTransport transport;
    const std::string outcome =
        create_after_warm_connection(transport, server.url("/echo"), server.url("/lose"), never_replay);
    CHECK(outcome == "unknown");  // never "certainly not sent"
    int performed = 0;
    for (const auto& seen : server.seen()) performed += seen.path == "/lose";
    return performed;
  };
  // The fault is real: libcurl re-sends an ordinary request, which reaches the server twice.
  CHECK(lose_after_warm_connection(false) == 2);
  CHECK(lose_after_warm_connection(true) == 1);
}

TEST_CASE("http: a never-replay request rides a kept-alive connection, and so do the requests after it") {
  TestServer server;
  CurlTransport transport;
  std::async(std::launch::async, [&] {
    transport.send(request("GET", server.url("/status/503")));
    HttpRequest create = request("POST", server.url("/echo"), R"({"name":"orders"})");
    create.never_replay = true;
    dbform::HttpResponse answer = transport.send(create);
    CHECK(answer.status == 201);
    transport.send(request("POST", server.url("/echo"), "{}"));
  }).get();
  auto seen = server.seen();
  REQUIRE(seen.size() == 3);
  CHECK(seen[1].body == R"({"name":"orders"})");  // the whole body, read through the callback
  CHECK(seen[0].remote_port == seen[1].remote_port);
  CHECK(seen[1].remote_port == seen[2].remote_port);
}

// libcurl's re-send on a fresh connection may fail to connect before it asks to rewind the body:
// a create whose body went out is then an unknown outcome, never "certainly not sent".
TEST_CASE("http: a never-replay request whose retry finds the port closed may have reached the server") {
  auto lose_then_refuse = [](bool never_replay) {
    DyingServer server;
    CurlTransport transport(dbform::TransportOptions{milliseconds(2000), milliseconds(5000)});
    const std::string outcome =
        create_after_warm_connection(transport, server.url("/warm"), server.url("/services"), never_replay);
    CHECK(server.performed() == 1);
    return outcome;
  };
  CHECK(lose_then_refuse(true) == "unknown");
  // The fault is real: an ordinary request was performed, yet libcurl's error is "could not connect".
  CHECK(lose_then_refuse(false) == "not sent");
}
