#pragma once
// The HTTP seam. Only curl_transport.cpp includes curl; the API client and its tests see this.
#include <chrono>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "util/error.h"

namespace dbform {

struct HttpRequest {
  std::string method;  // "GET", "POST"
  std::string url;     // absolute
  std::vector<std::pair<std::string, std::string>> headers;
  std::string body;
  // Sent at most once by the transport (creates: at most once per decision; a lost
  // answer is looked up by name, never sent again blindly). libcurl
  // silently re-sends a request whose reused keep-alive connection closes before any answer; such a
  // request's body can be read once and never rewound, so that re-send fails instead (an unknown
  // outcome, which the caller resolves), while the request still rides a kept-alive connection.
  bool never_replay = false;
};

struct HttpResponse {
  int status = 0;
  std::map<std::string, std::string> headers;  // names lower-cased
  std::string body;

  std::string header(const std::string& lower_name) const {
    auto it = headers.find(lower_name);
    return it == headers.end() ? std::string() : it->second;
  }
};

// A request that got no HTTP response. `may_have_reached_server` is false only when the request
// certainly never left (DNS failure, connection refused): then even a create may be sent again.
// `worth_retrying` is false when trying again would fail the same way (the server's certificate was
// refused): the call fails at once.
class TransportError : public Error {
 public:
  TransportError(const std::string& what, bool may_have_reached_server, bool worth_retrying = true)
      : Error(what), may_have_reached_server_(may_have_reached_server), worth_retrying_(worth_retrying) {}
  bool may_have_reached_server() const { return may_have_reached_server_; }
  bool worth_retrying() const { return worth_retrying_; }

 private:
  bool may_have_reached_server_;
  bool worth_retrying_;
};

class Transport {
 public:
  virtual ~Transport() = default;
  // Sends one request; returns any HTTP response (including 4xx/5xx) or throws TransportError.
  // Must be safe to call from several threads at once.
  virtual HttpResponse send(const HttpRequest& request) = 0;
};

struct TransportOptions {
  std::chrono::milliseconds connect_timeout{10'000};
  std::chrono::milliseconds request_timeout{60'000};
  // The largest answer body read, after decompression: a larger one (a compression bomb, a
  // runaway list) is cut off and the call fails as a transport error that reached the server.
  size_t max_body_bytes = size_t{64} << 20;
  // The CA bundle (PEM) that https:// servers' certificates must chain to, instead of the system's
  // (the CLI takes it from SSL_CERT_FILE); empty: the system's.
  std::string ca_file{};
  // Directories of hashed CA certificates (c_rehash), ':'-separated, trusted instead of the
  // system's directory and beside the bundle (the CLI takes it from SSL_CERT_DIR); empty: the system's.
  std::string ca_dir{};
};

}  // namespace dbform
