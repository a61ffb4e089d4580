#pragma once
// Whether a database accepts connections: one attempt through libpq to log in as tsdbadmin with
// the recorded password and run SELECT 1 (PQconnectdbParams: the password never in a connection
// string or a command line). The apply engine makes it through its seam (ConnectionCheck, which
// its tests fake), `dbform connect --check` through the same.
#include <memory>
#include <string>

#include "util/duration.h"

namespace dbform {

struct ConnectTarget {
  std::string host;
  int port = 0;
  std::string user = "tsdbadmin";
  std::string database = "tsdb";
  std::string password;
  std::string sslmode = "require";  // as `dbform output` writes connection strings
};

struct ConnectAttempt {
  enum class Verdict {
    Accepted,  // logged in and SELECT 1 answered
    NotYet,    // refused, unreachable, starting up, shutting down: worth trying again
    Refused,   // the login was refused (a wrong password, no such role or database): trying again cannot help
  };
  Verdict verdict = Verdict::NotYet;
  std::string reason;          // libpq's message when not accepted (never holds the password)
  std::string server_version;  // when accepted, e.g. "15.8"
  Duration round_trip{0};      // when accepted: connecting, SELECT 1 and its answer
};

// One attempt through libpq, bounded by `timeout`. Thread-safe.
ConnectAttempt libpq_connect_attempt(const ConnectTarget& target, Duration timeout);

// The seam through which the apply engine asks whether a database accepts connections: the engine
// and its tests see only this interface, the tests with a fake.
class ConnectionCheck {
 public:
  virtual ~ConnectionCheck() = default;
  // One attempt, bounded by `timeout`. Thread-safe.
  virtual ConnectAttempt attempt(const ConnectTarget& target, Duration timeout) const = 0;
};

// The check through libpq (libpq_connect_attempt).
std::unique_ptr<ConnectionCheck> libpq_connection_check();

// A login refused for good, told from a server that is not there yet by libpq's message.
bool login_refused(const std::string& libpq_message);

}  // namespace dbform
