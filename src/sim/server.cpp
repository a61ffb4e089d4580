// SimServer: the Simulator over HTTP with cpp-httplib, at /public/api/v1/... (the vendor's base
// path) and at /..., plus unauthenticated debug routes under /_sim/.
#include <httplib.h>

#include <condition_variable>
#include <csignal>
#include <set>
#include <thread>
#include <utility>

#include "sim/connection_cut.h"
#include "sim/gzip.h"
#include "sim/simulator.h"
#include "util/log.h"
#include "util/error.h"
#include "util/json_limits.h"

namespace dbform {

namespace {

constexpr const char* kBasePath = "/public/api/v1";
// Enough workers for `apply --parallelism` well above the default of 10: a keep-alive connection
// holds a worker while it is open.
constexpr size_t kWorkerThreads = 32;

std::string strip_base_path(std::string path) {
  // The absolute form a client sends through an HTTP proxy (GET http://host/public/api/v1/...):
  // a server takes it as the path (RFC 9112, 3.2.2), so the simulator stands in as a remote API's proxy.
  for (const char* scheme : {"http://", "https://"})
    if (path.rfind(scheme, 0) == 0) {
      const size_t slash = path.find('/', std::string(scheme).size());
      path = slash == std::string::npos ? "/" : path.substr(slash);
    }
  std::string base = kBasePath;
  if (path == base) return "/";
  if (path.rfind(base + "/", 0) == 0) return path.substr(base.size());
  return path;
}

// Answers are compressed here, as a gateway would (gzip at its fastest level, bodies of 1 KiB and
// more), never by httplib: it picks brotli at its slowest setting whenever a client accepts it,
// which costs the simulator milliseconds a call. httplib compresses only a Content-Type it knows
// exactly, and "application/json; charset=utf-8" is not one.
constexpr const char* kJson = "application/json; charset=utf-8";
constexpr size_t kCompressFrom = 1024;

void send_body(const httplib::Request& req, httplib::Response& res, std::string body) {
  if (body.size() >= kCompressFrom && !res.has_header("Content-Encoding") &&
      sim::accepts_gzip(req.get_header_value("Accept-Encoding"))) {
    body = sim::gzip(body, 1);
    res.set_header("Content-Encoding", "gzip");
  }
  res.set_content(std::move(body), kJson);
}

void send_answer(const SimResponse& answer, const httplib::Request& req, httplib::Response& res) {
  if (answer.lose_answer) sim::cut_connection_silently(req.local_port, req.remote_port);
  res.status = answer.status;
  for (const auto& [name, value] : answer.headers) {
    if (name != "Content-Type") res.set_header(name, value);
  }
  if (!answer.drop_connection) return send_body(req, res, answer.body);
  // The work is done but the answer must never arrive: httplib sends the status line and headers,
  // then the provider fails before the first body byte and httplib closes the connection. The
  // client sees a truncated response, a transport error (curl: "transfer closed with N bytes
  // remaining"), never a success it could use.
  res.set_content_provider(answer.body.size(), kJson, [](size_t, size_t, httplib::DataSink&) { return false; });
}

// The body of a POST. One without a body may come without Content-Length (`curl -X POST URL`), which
// httplib would answer 400 with nothing at all: only an announced body is read.
std::string body_of(const httplib::Request& req, const httplib::ContentReader& reader) {
  std::string body;
  if (!req.has_header("Content-Length") && !req.has_header("Transfer-Encoding")) return body;
  reader([&](const char* data, size_t size) {
    body.append(data, size);
    return true;
  });
  return body;
}

void serve_json(const httplib::Request& req, httplib::Response& res, const nlohmann::json& body) {
  res.status = 200;
  send_body(req, res, dump_json(body, 2));
}

}  // namespace

namespace {

std::unique_ptr<httplib::Server> make_server(const std::optional<SimTls>& tls) {
  if (!tls) return std::make_unique<httplib::Server>();
  auto server = std::make_unique<httplib::SSLServer>(tls->cert_file.c_str(), tls->key_file.c_str());
  if (!server->is_valid())
    throw Error("cannot serve HTTPS with certificate " + tls->cert_file + " and key " + tls->key_file +
                ": they cannot be read, are not PEM, or do not belong together");
  return server;
}

}  // namespace

struct SimServer::Impl {
  Impl(Simulator& s, Duration delay, const std::optional<SimTls>& tls)
      : sim(s), connection_delay(delay), owned_server(make_server(tls)), server(*owned_server) {}

  Simulator& sim;
  const Duration connection_delay;
  std::mutex connections_mu;
  std::set<std::pair<std::string, int>> connections;  // (address, port) of each connection seen
  std::unique_ptr<httplib::Server> owned_server;     // an httplib::SSLServer when serving HTTPS
  httplib::Server& server;
  std::mutex observer_mu;
  std::function<void(const SimRequest&)> observer;  // see set_observer
  std::thread listener;
  std::mutex stop_mu;  // one stop() at a time; held while joining the listener
  std::mutex mu;       // guards the two flags below
  std::condition_variable listen_done;
  bool started = false;
  bool finished = false;  // listen_after_bind returned
  socket_t listening_socket = INVALID_SOCKET;

  void install_routes();

  void observe(const SimRequest& request) {
    std::function<void(const SimRequest&)> call;
    {
      std::lock_guard<std::mutex> lock(observer_mu);
      call = observer;
    }
    if (call) call(request);  // unlocked: it may hold this thread until the test lets it go
  }

  // A connection's first request waits connection_delay; the next ones on it do not.
  void charge_new_connection(const httplib::Request& req) {
    if (connection_delay.count() == 0) return;
    {
      std::lock_guard<std::mutex> lock(connections_mu);
      if (!connections.emplace(req.remote_addr, req.remote_port).second) return;
    }
    std::this_thread::sleep_for(connection_delay);
  }
};

void SimServer::Impl::install_routes() {
  // What the simulator holds, for tests and demos to read: each path answers one view as JSON.
  using View = nlohmann::json (Simulator::*)() const;
  const std::pair<const char*, View> views[] = {
      {"/_sim/requests", &Simulator::request_counts},
      {"/_sim/services", &Simulator::all_services},
      {"/_sim/faults", &Simulator::fault_counts},
      {"/_sim/vpcs", &Simulator::all_vpcs},
      {"/_sim/replica_sets", &Simulator::all_replica_sets},
      {"/_sim/peerings", &Simulator::all_peerings},
  };
  for (const auto& route : views)
    server.Get(route.first, [this, view = route.second](const httplib::Request& req, httplib::Response& res) {
      serve_json(req, res, (sim.*view)());
    });
  // Changes made "outside dbform", as in the vendor's console: no key, no waiting.
  auto console = [this](const httplib::Request& req, httplib::Response& res, const std::string& action,
                        const std::string& body) {
    SimResponse answer = sim.console(req.matches[1], action, body);
    res.status = answer.status;
    send_body(req, res, answer.body);
  };
  server.Post(R"(/_sim/services/([^/]+)/([A-Za-z]+))",
              [console](const httplib::Request& req, httplib::Response& res, const httplib::ContentReader& reader) {
                console(req, res, req.matches[2], body_of(req, reader));
              });
  server.Post(R"(/_sim/(replica_sets|peerings)/([^/]+)/([A-Za-z]+))",
              [this](const httplib::Request& req, httplib::Response& res, const httplib::ContentReader& reader) {
                SimResponse answer = sim.console_nested(req.matches[1], req.matches[2], req.matches[3], body_of(req, reader));
                res.status = answer.status;
                send_body(req, res, answer.body);
              });
  server.Post(R"(/_sim/projects/([^/]+)/(services|vpcs))",
              [this](const httplib::Request& req, httplib::Response& res, const httplib::ContentReader& reader) {
                SimResponse answer = sim.console_create(req.matches[1], req.matches[2], body_of(req, reader));
                res.status = answer.status;
                send_body(req, res, answer.body);
              });
  server.Delete(R"(/_sim/services/([^/]+))", [console](const httplib::Request& req, httplib::Response& res) {
    console(req, res, "delete", req.body);
  });
  // Every other request, whatever its method, goes to the Simulator, which answers 404 and 405
  // itself so that they are counted like any other call.
  auto api = [this](const httplib::Request& req, httplib::Response& res) {
    SimRequest request{req.method, strip_base_path(req.path), req.get_header_value("Authorization"), req.body};
    SimResponse answer = sim.handle(request);
    observe(request);
    send_answer(answer, req, res);
  };
  const char* any_path = ".*";
  server.Get(any_path, api);
  // A POST without a body (stop, start, the pooler) may come without Content-Length.
  server.Post(any_path, [this](const httplib::Request& req, httplib::Response& res, const httplib::ContentReader& reader) {
    SimRequest request{req.method, strip_base_path(req.path), req.get_header_value("Authorization"), body_of(req, reader)};
    SimResponse answer = sim.handle(request);
    observe(request);
    send_answer(answer, req, res);
  });
  server.Put(any_path, api);
  server.Patch(any_path, api);
  server.Delete(any_path, api);
  server.Options(any_path, api);
  server.set_logger([](const httplib::Request& req, const httplib::Response& res) {
    if (log::enabled(log::Level::Debug)) log::debug("sim: " + req.method + " " + req.path + " -> " + std::to_string(res.status));  // never the headers: they hold keys
  });
}

SimServer::SimServer(Simulator& sim, Duration connection_delay, const std::optional<SimTls>& tls)
    : impl_(std::make_unique<Impl>(sim, connection_delay, tls)) {
  // spdlog creates its registry on first use; let that be here, before any worker thread logs a
  // request, rather than racing between two of them.
  log::enabled(log::Level::Debug);
  impl_->server.new_task_queue = [] { return new httplib::ThreadPool(kWorkerThreads); };
  impl_->server.set_keep_alive_max_count(1000);
  // stop() waits for every open connection's keep-alive wait to run out (httplib does not cut
  // idle connections short), so keep it short: reconnecting on loopback costs next to nothing.
  impl_->server.set_keep_alive_timeout(1);
  // httplib writes an answer's head and body apart: with Nagle's algorithm on, the body waits for
  // the client's delayed ACK of the head, 40 ms on every call of a reused connection.
  impl_->server.set_tcp_nodelay(true);
  // httplib's default sets SO_REUSEPORT, which lets a second simulator bind the same port and
  // silently take half the connections. SO_REUSEADDR alone still allows a quick restart.
  impl_->server.set_socket_options([impl = impl_.get()](socket_t sock) {
    int yes = 1;
    setsockopt(sock, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof yes);
    impl->listening_socket = sock;
  });
  impl_->server.set_pre_routing_handler([impl = impl_.get()](const httplib::Request& req, httplib::Response&) {
    impl->charge_new_connection(req);
    return httplib::Server::HandlerResponse::Unhandled;
  });
  impl_->install_routes();
}

SimServer::~SimServer() { stop(); }

void SimServer::set_observer(std::function<void(const SimRequest&)> observer) {
  std::lock_guard<std::mutex> lock(impl_->observer_mu);
  impl_->observer = std::move(observer);
}

long long SimServer::connections_charged() const {
  std::lock_guard<std::mutex> lock(impl_->connections_mu);
  return static_cast<long long>(impl_->connections.size());
}

int SimServer::start(const std::string& host, int port) {
  std::lock_guard<std::mutex> lock(impl_->mu);
  if (impl_->started) throw Error("the simulator server is already started");
  // A client that hangs up while we write must not kill the process (httplib sends without
  // MSG_NOSIGNAL on Linux).
  std::signal(SIGPIPE, SIG_IGN);
  int bound = port == 0 ? impl_->server.bind_to_any_port(host) : (impl_->server.bind_to_port(host, port) ? port : -1);
  if (bound < 0) {
    std::string shown_host = host.find(':') != std::string::npos ? "[" + host + "]" : host;  // IPv6
    throw Error("cannot listen on " + shown_host + ":" + std::to_string(port) +
                ": the address is in use or not available here; pick another --listen address or port 0");
  }
  // httplib 0.11 listens with a backlog of 5: past five connections arriving at once (ten workers
  // of an apply starting together) the kernel drops the SYNs, which a client sends again only a
  // second later. A real API's front end takes far more; listening again raises it (Linux).
  ::listen(impl_->listening_socket, SOMAXCONN);
  impl_->started = true;
  impl_->listener = std::thread([impl = impl_.get()] {
    impl->server.listen_after_bind();
    std::lock_guard<std::mutex> done_lock(impl->mu);
    impl->finished = true;
    impl->listen_done.notify_all();
  });
  return bound;
}

void SimServer::stop() {
  std::lock_guard<std::mutex> stopping(impl_->stop_mu);
  auto listener_state = [this] {
    std::lock_guard<std::mutex> lock(impl_->mu);
    return std::make_pair(impl_->started, impl_->finished);
  };
  if (!listener_state().first) return;
  // httplib's stop() does nothing until the listener has entered its loop; wait for that so that
  // a stop right after start cannot be lost (a matter of microseconds).
  while (!impl_->server.is_running() && !listener_state().second) std::this_thread::yield();
  impl_->server.stop();
  if (impl_->listener.joinable()) impl_->listener.join();
}

void SimServer::wait() {
  std::unique_lock<std::mutex> lock(impl_->mu);
  if (!impl_->started) return;
  impl_->listen_done.wait(lock, [this] { return impl_->finished; });
}

}  // namespace dbform
