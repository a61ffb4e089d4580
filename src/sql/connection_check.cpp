#include "sql/connection_check.h"

#include <libpq-fe.h>

#include <algorithm>
#include <chrono>
#include <memory>

#include "util/text.h"

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

ConnectAttempt libpq_connect_attempt(const ConnectTarget& target, Duration timeout) {
  const auto started = std::chrono::steady_clock::now();
  const std::string port = std::to_string(target.port);
  const std::string connect_timeout =
      std::to_string(std::max<long long>(2, (static_cast<long long>(timeout.count()) + 999) / 1000));
  const char* keys[] = {"host", "port", "user", "dbname", "password", "sslmode", "connect_timeout",
                        "application_name", nullptr};
  const char* values[] = {target.host.c_str(), port.c_str(),          target.user.c_str(),
                          target.database.c_str(), target.password.c_str(), target.sslmode.c_str(),
                          connect_timeout.c_str(), "dbform", nullptr};
  PGconn* conn = PQconnectdbParams(keys, values, 0);
  ConnectAttempt result;
  if (!conn) {
    result.reason = "libpq could not allocate a connection";
    return result;
  }
  if (PQstatus(conn) != CONNECTION_OK) {
    result.reason = one_line(PQerrorMessage(conn));
    result.verdict = login_refused(result.reason) ? ConnectAttempt::Verdict::Refused : ConnectAttempt::Verdict::NotYet;
    PQfinish(conn);
    return result;
  }
  PGresult* answer = PQexec(conn, "SELECT 1");
  if (PQresultStatus(answer) == PGRES_TUPLES_OK) {
    result.verdict = ConnectAttempt::Verdict::Accepted;
    if (const char* version = PQparameterStatus(conn, "server_version")) result.server_version = version;
    result.round_trip = std::chrono::duration_cast<Duration>(std::chrono::steady_clock::now() - started);
  } else {
    result.reason = "SELECT 1 failed: " + one_line(PQresultErrorMessage(answer));
  }
  PQclear(answer);
  PQfinish(conn);
  return result;
}

bool login_refused(const std::string& message) {
  for (const char* permanent : {"password authentication failed", "no pg_hba.conf entry", "does not exist",
                                "server does not support SSL", "no password supplied", "permission denied"})
    if (message.find(permanent) != std::string::npos) return true;
  return false;
}

}  // namespace dbform
