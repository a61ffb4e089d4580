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
// with the scheme http or https and a host. `url` itself is never quoted (it may hold a password).
std::string base_url_problem(const std::string& url);

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
