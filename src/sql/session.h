#pragma once
// A connection to a service's own database, as a seam: the migrations and the schema reader run
// their SQL through SqlSession, LibpqConnector makes real ones (TLS as `dbform output` writes
// connection strings), and the tests use a fake.
#include <atomic>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "sql/connection_check.h"
#include "util/duration.h"

namespace dbform {

// What the server said about a statement it refused (libpq's error fields).
struct SqlError {
  std::string message;   // PostgreSQL's primary message, one line
  std::string detail;    // optional
  std::string hint;      // optional
  std::string sqlstate;  // "42P01"
  int position = 0;      // 1-based character in the statement sent; 0 when the server gave none
};

using SqlRow = std::vector<std::optional<std::string>>;  // nullopt: NULL

// Why dbform cancelled a statement on the server (libpq's cancel request).
enum class Cancelled { No, Stopped, TimedOut };

struct SqlResult {
  bool ok = false;
  std::vector<SqlRow> rows;
  SqlError error;  // when !ok
  Cancelled cancelled = Cancelled::No;  // when !ok: ended by dbform, a stop signal or the timeout
};

// What ends a statement before it does: `stop` set (a signal's flag) or `timeout` passed (0: none).
struct StatementLimit {
  const std::atomic<bool>* stop = nullptr;
  Duration timeout{0};
};

class SqlSession {
 public:
  virtual ~SqlSession() = default;
  // One statement (or several, for fixed text of dbform's own) through the simple query protocol.
  virtual SqlResult exec(const std::string& sql) = 0;
  // One statement with text parameters ($1, $2...), through the extended protocol.
  virtual SqlResult exec_params(const std::string& sql, const std::vector<std::string>& params) = 0;
  // As exec, watched while it runs: cancelled on the server once `limit.stop` is set or a little
  // after `limit.timeout` has passed (the server's own statement_timeout, set by the caller, usually
  // ends it first); the result says which. Its default (the tests' fake) is exec.
  virtual SqlResult exec_limited(const std::string& sql, const StatementLimit& limit) {
    (void)limit;
    return exec(sql);
  }
  // The SCRAM-SHA-256 verifier of `password` for `role`, computed here (libpq's
  // PQencryptPasswordConn): what ALTER ROLE ... PASSWORD sends, so that the password itself never
  // reaches the server's text nor its log. Throws Error when it cannot be computed.
  virtual std::string password_verifier(const std::string& role, const std::string& password) = 0;
};

struct SqlSessionOptions {
  bool read_only = false;  // every transaction of the session is READ ONLY (default_transaction_read_only)
  Duration statement_timeout{0};  // 0: the server's
  Duration connect_timeout{std::chrono::seconds(10)};
};

class SqlConnector {
 public:
  virtual ~SqlConnector() = default;
  // Throws Error with libpq's reason (never the password) when the login fails.
  virtual std::unique_ptr<SqlSession> connect(const ConnectTarget& target, const SqlSessionOptions& options) const = 0;
};

// Through libpq (PQconnectdbParams: the password never in a connection string or a command line).
std::unique_ptr<SqlConnector> libpq_connector();

// The byte offset in `text` (UTF-8) of its 1-based character `position`; text.size() past the end.
size_t byte_of_character(const std::string& text, int position);

}  // namespace dbform
