#include "engine/connection_check.h"

namespace dbform {

namespace {

class LibpqConnectionCheck : public ConnectionCheck {
 public:
  ConnectAttempt attempt(const ConnectTarget& target, Duration timeout) const override {
    return libpq_connect_attempt(target, timeout);
  }
};

}  // namespace

std::unique_ptr<ConnectionCheck> libpq_connection_check() { return std::make_unique<LibpqConnectionCheck>(); }

}  // namespace dbform
