#pragma once
#include <memory>
#include <string>

#include "http/transport.h"

namespace dbform {

// libcurl implementation. Easy handles are reused, one per request at a time, so connections are
// kept alive; any number of threads may send at once.
class CurlTransport : public Transport {
 public:
  explicit CurlTransport(TransportOptions options = {});
  ~CurlTransport() override;
  HttpResponse send(const HttpRequest& request) override;

 private:
  struct Handles;
  TransportOptions options_;
  std::unique_ptr<Handles> handles_;
};

// Why `url` cannot be an API base URL ("" when it can): it must parse as a URL (libcurl's parser),
// with the scheme https, or http to a loopback host only unless `plain_http_anywhere` (a key must
// never travel in clear text by accident), and a host. `url` itself is never quoted (it may hold a
// password); its host may be.
std::string base_url_problem(const std::string& url, bool plain_http_anywhere = false);

// Whether `host`, as a URL spells it, is this machine's loopback: 127.0.0.0/8, [::1] (or an IPv4
// loopback address mapped into IPv6) or localhost.
bool is_loopback_host(const std::string& host);

// A PostgreSQL connection URI, postgres://USER:PASSWORD@HOST:PORT/DATABASE?QUERY, built by libcurl's
// URL API so that the user and password are percent-encoded as libpq decodes them. No password: no
// `:PASSWORD`.
struct PostgresUri {
  std::string user, password, host;
  int port = 0;
  std::string database, query;
};
std::string postgres_uri(const PostgresUri& uri);

}  // namespace dbform
