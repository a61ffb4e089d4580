#pragma once
// The seam through which the apply engine asks whether a database accepts connections (one login
// attempt: sql/connection_check.h): the engine and its tests see only this interface, the tests
// with a fake.
#include <memory>

#include "sql/connection_check.h"
#include "util/duration.h"

namespace dbform {

class ConnectionCheck {
 public:
  virtual ~ConnectionCheck() = default;
  // One attempt, bounded by `timeout`. Thread-safe.
  virtual ConnectAttempt attempt(const ConnectTarget& target, Duration timeout) const = 0;
};

// The check through libpq (libpq_connect_attempt).
std::unique_ptr<ConnectionCheck> libpq_connection_check();

}  // namespace dbform
