#pragma once
// A scripted Transport for tests of the API client and the engine: answers requests from queues of
// responses (or failures) per route, or from a handler function, and records every request so tests
// can assert exactly what was sent. Thread-safe; handlers run outside the lock, so they may block.
//
//   FakeTransport fake;
//   fake.on("POST", "/projects/p1/services", FakeTransport::response(503));
//   fake.on("POST", "/projects/p1/services", FakeTransport::response(202, R"({"service_id":"s1"})"));
//   fake.fail("GET", "/auth/info", /*may_have_reached_server=*/false);
//   fake.always("GET", "/services/s1", FakeTransport::response(200, R"({"status":"READY"})"));
//   fake.set_handler([](const HttpRequest& r) { return FakeTransport::response(404); });
#include <cctype>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "http/transport.h"

namespace dbform {

class FakeTransport : public Transport {
 public:
  using Handler = std::function<HttpResponse(const HttpRequest&)>;

  static HttpResponse response(int status, std::string body = "",
                               std::map<std::string, std::string> headers = {}) {
    HttpResponse r;
    r.status = status;
    r.body = std::move(body);
    r.headers = std::move(headers);
    return r;
  }

  // Queues one answer for requests whose method matches and whose URL path ends with
  // `path_suffix`. Queued answers are used in order; when several routes match, the longest
  // suffix with something left to give wins.
  void on(const std::string& method, const std::string& path_suffix, HttpResponse answer) {
    std::lock_guard<std::mutex> lock(mu_);
    route(method, path_suffix).queue.push_back(Step{std::move(answer), std::nullopt});
  }

  // Puts one answer in front of the route's queue: it is used before anything queued earlier.
  void first(const std::string& method, const std::string& path_suffix, HttpResponse answer) {
    std::lock_guard<std::mutex> lock(mu_);
    auto& queue = route(method, path_suffix).queue;
    queue.insert(queue.begin(), Step{std::move(answer), std::nullopt});
  }
  // Queues a TransportError, as a refused connection (false) or a lost response (true) would give.
  void fail(const std::string& method, const std::string& path_suffix, bool may_have_reached_server,
            const std::string& what = "fake transport failure") {
    std::lock_guard<std::mutex> lock(mu_);
    route(method, path_suffix)
        .queue.push_back(Step{std::nullopt, TransportError(method + " " + path_suffix + ": " + what,
                                                          may_have_reached_server)});
  }

  // The answer for a route once its queue is empty, for as long as the test runs.
  void always(const std::string& method, const std::string& path_suffix, HttpResponse answer) {
    std::lock_guard<std::mutex> lock(mu_);
    route(method, path_suffix).fallback = std::move(answer);
  }

  // Answers every request no scripted route answers. It may throw TransportError.
  void set_handler(Handler handler) {
    std::lock_guard<std::mutex> lock(mu_);
    handler_ = std::move(handler);
  }

  HttpResponse send(const HttpRequest& request) override {
    Handler handler;
    {
      std::lock_guard<std::mutex> lock(mu_);
      requests_.push_back(request);
      if (auto step = next_step(request)) {
        if (step->error) throw *step->error;
        return *step->response;
      }
      handler = handler_;
    }
    if (handler) return handler(request);
    throw std::logic_error("FakeTransport: nothing scripted for " + request.method + " " + request.url);
  }

  std::vector<HttpRequest> requests() const {
    std::lock_guard<std::mutex> lock(mu_);
    return requests_;
  }

  // How many requests with this method had a URL path ending in `path_suffix`.
  size_t count(const std::string& method, const std::string& path_suffix) const {
    std::lock_guard<std::mutex> lock(mu_);
    size_t n = 0;
    for (const auto& r : requests_) n += (r.method == method && ends_with(path_of(r.url), path_suffix)) ? 1 : 0;
    return n;
  }

  // The URL's path: "https://h/v1/auth/info?x=1" -> "/v1/auth/info".
  static std::string path_of(const std::string& url) {
    auto scheme_end = url.find("://");
    auto path_start = url.find('/', scheme_end == std::string::npos ? 0 : scheme_end + 3);
    if (path_start == std::string::npos) return "/";
    auto path_end = url.find_first_of("?#", path_start);
    return url.substr(path_start, path_end == std::string::npos ? std::string::npos : path_end - path_start);
  }

  // The value of a request header, matched case-insensitively; "" when absent.
  static std::string header_of(const HttpRequest& request, const std::string& name) {
    for (const auto& [key, value] : request.headers) {
      if (equal_ignoring_case(key, name)) return value;
    }
    return "";
  }

 private:
  struct Step {
    std::optional<HttpResponse> response;
    std::optional<TransportError> error;
  };
  struct Route {
    std::string method;
    std::string path_suffix;
    std::vector<Step> queue;
    std::optional<HttpResponse> fallback;
  };

  static bool ends_with(const std::string& text, const std::string& suffix) {
    return text.size() >= suffix.size() && text.compare(text.size() - suffix.size(), suffix.size(), suffix) == 0;
  }

  static bool equal_ignoring_case(const std::string& a, const std::string& b) {
    if (a.size() != b.size()) return false;
    for (size_t i = 0; i < a.size(); ++i) {
      if (std::tolower(static_cast<unsigned char>(a[i])) != std::tolower(static_cast<unsigned char>(b[i]))) {
        return false;
      }
    }
    return true;
  }

  Route& route(const std::string& method, const std::string& path_suffix) {
    for (auto& r : routes_) {
      if (r.method == method && r.path_suffix == path_suffix) return r;
    }
    routes_.push_back(Route{method, path_suffix, {}, std::nullopt});
    return routes_.back();
  }

  // Caller holds mu_.
  std::optional<Step> next_step(const HttpRequest& request) {
    std::string path = path_of(request.url);
    Route* best = nullptr;
    for (auto& r : routes_) {
      bool has_answer = !r.queue.empty() || r.fallback;
      if (r.method != request.method || !has_answer || !ends_with(path, r.path_suffix)) continue;
      if (!best || r.path_suffix.size() > best->path_suffix.size()) best = &r;
    }
    if (!best) return std::nullopt;
    if (best->queue.empty()) return Step{best->fallback, std::nullopt};
    Step step = std::move(best->queue.front());
    best->queue.erase(best->queue.begin());
    return step;
  }

  mutable std::mutex mu_;
  std::vector<Route> routes_;
  std::vector<HttpRequest> requests_;
  Handler handler_;
};

}  // namespace dbform
