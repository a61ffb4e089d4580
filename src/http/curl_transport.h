#pragma once
#include <memory>

#include "http/transport.h"

namespace dbform {

// libcurl implementation. One easy handle per thread, reused so connections are kept alive.
class CurlTransport : public Transport {
 public:
  explicit CurlTransport(TransportOptions options = {});
  ~CurlTransport() override;
  HttpResponse send(const HttpRequest& request) override;

 private:
  TransportOptions options_;
};

}  // namespace dbform
