#include "sql/session.h"

#include <libpq-fe.h>
#include <poll.h>

#include <algorithm>
#include <cerrno>

#include "util/error.h"
#include "util/text.h"

namespace dbform {

namespace {

std::string error_field(const PGresult* r, int code) {
  const char* value = PQresultErrorField(r, code);
  return value ? one_line(value) : "";
}

SqlResult result_of(PGconn* conn, PGresult* r) {
  SqlResult out;
  const auto status = r ? PQresultStatus(r) : PGRES_FATAL_ERROR;
  out.ok = status == PGRES_TUPLES_OK || status == PGRES_COMMAND_OK || status == PGRES_EMPTY_QUERY;
  if (!out.ok) {
    out.error.message = r ? error_field(r, PG_DIAG_MESSAGE_PRIMARY) : "";
    if (out.error.message.empty()) out.error.message = one_line(r ? PQresultErrorMessage(r) : PQerrorMessage(conn));
    if (r) {
      out.error.detail = error_field(r, PG_DIAG_MESSAGE_DETAIL);
      out.error.hint = error_field(r, PG_DIAG_MESSAGE_HINT);
      out.error.sqlstate = error_field(r, PG_DIAG_SQLSTATE);
      const std::string position = error_field(r, PG_DIAG_STATEMENT_POSITION);
      if (!position.empty()) out.error.position = std::atoi(position.c_str());
    }
  } else if (status == PGRES_TUPLES_OK) {
    const int rows = PQntuples(r), columns = PQnfields(r);
    out.rows.reserve(rows);
    for (int i = 0; i < rows; ++i) {
      SqlRow row;
      for (int j = 0; j < columns; ++j)
        row.push_back(PQgetisnull(r, i, j) ? std::nullopt : std::optional<std::string>(PQgetvalue(r, i, j)));
      out.rows.push_back(std::move(row));
    }
  }
  PQclear(r);
  return out;
}

class LibpqSession : public SqlSession {
 public:
  explicit LibpqSession(PGconn* conn) : conn_(conn) {
    // A migration's NOTICEs ("relation exists, skipping") are not dbform's to print on stderr.
    PQsetNoticeProcessor(conn_, [](void*, const char*) {}, nullptr);
  }
  ~LibpqSession() override { PQfinish(conn_); }
  SqlResult exec(const std::string& sql) override { return result_of(conn_, PQexec(conn_, sql.c_str())); }
  SqlResult exec_limited(const std::string& sql, const StatementLimit& limit) override;
  SqlResult exec_params(const std::string& sql, const std::vector<std::string>& params) override {
    std::vector<const char*> values;
    for (const auto& p : params) values.push_back(p.c_str());
    return result_of(conn_, PQexecParams(conn_, sql.c_str(), static_cast<int>(values.size()), nullptr, values.data(),
                                         nullptr, nullptr, 0));
  }
  std::string password_verifier(const std::string& role, const std::string& password) override {
    if (!conn_) throw Error("no connection to compute a password verifier with");
    char* verifier = PQencryptPasswordConn(conn_, password.c_str(), role.c_str(), "scram-sha-256");
    if (!verifier) throw Error("libpq could not compute a SCRAM-SHA-256 verifier: " + one_line(PQerrorMessage(conn_)));
    std::string out = verifier;
    PQfreemem(verifier);
    return out;
  }

 private:
  PGconn* conn_;
};

// How long after the timeout dbform cancels a statement itself (the server's statement_timeout is
// the first to end it; this ends one that set its own), and how long it then waits for the server
// to answer the cancel before it gives the connection up.
constexpr auto kClientGrace = std::chrono::milliseconds(500);
constexpr auto kCancelAnswer = std::chrono::seconds(10);

// Asks the server to cancel what the connection runs (PQcancel: a connection of its own).
void send_cancel(PGconn* conn) {
  PGcancel* cancel = PQgetCancel(conn);
  if (!cancel) return;
  char why[256];
  PQcancel(cancel, why, sizeof why);  // when it cannot be sent, the wait for its answer ends the statement
  PQfreeCancel(cancel);
}

// The result of what was sent, as PQexec gives it: the first error, else the last result. A COPY
// that wants data is ended with an error, one that sends data is read to its end.
PGresult* result_of_sent(PGconn* conn) {
  PGresult* kept = nullptr;
  while (PGresult* r = PQgetResult(conn)) {
    const auto status = PQresultStatus(r);
    if (status == PGRES_COPY_IN) PQputCopyEnd(conn, "a migration cannot read from dbform's standard input");
    if (status == PGRES_COPY_OUT)
      for (char* row = nullptr; PQgetCopyData(conn, &row, 0) > 0; row = nullptr) PQfreemem(row);
    if (status == PGRES_COPY_IN || status == PGRES_COPY_OUT || status == PGRES_COPY_BOTH ||
        (kept && PQresultStatus(kept) == PGRES_FATAL_ERROR)) {
      PQclear(r);
      continue;
    }
    if (kept) PQclear(kept);
    kept = r;
  }
  return kept;
}

SqlResult LibpqSession::exec_limited(const std::string& sql, const StatementLimit& limit) {
  if (limit.stop && limit.stop->load()) {  // stopped between two statements: the next is not sent
    SqlResult stopped;
    stopped.error.message = "not sent: dbform was stopped by a signal";
    stopped.cancelled = Cancelled::Stopped;
    return stopped;
  }
  if (!PQsendQuery(conn_, sql.c_str())) return result_of(conn_, nullptr);
  using Steady = std::chrono::steady_clock;
  const auto started = Steady::now();
  Cancelled cancelled = Cancelled::No;
  Steady::time_point cancel_sent{};
  while (PQisBusy(conn_)) {
    const auto now = Steady::now();
    if (cancelled == Cancelled::No) {
      if (limit.stop && limit.stop->load()) cancelled = Cancelled::Stopped;
      else if (limit.timeout.count() > 0 && now - started >= limit.timeout + kClientGrace) cancelled = Cancelled::TimedOut;
      if (cancelled != Cancelled::No) {
        send_cancel(conn_);
        cancel_sent = now;
      }
    } else if (now - cancel_sent >= kCancelAnswer) {
      SqlResult lost;  // the connection is given up: closing it ends the statement's transaction
      lost.error.message = "the server did not end the statement within " +
                           std::to_string(std::chrono::duration_cast<std::chrono::seconds>(kCancelAnswer).count()) +
                           "s of dbform's cancel request";
      lost.cancelled = cancelled;
      PQfinish(conn_);
      conn_ = nullptr;
      return lost;
    }
    pollfd watched{PQsocket(conn_), POLLIN, 0};
    if (::poll(&watched, 1, 100) < 0 && errno != EINTR) break;  // a signal wakes it: looked at again at once
    if (!PQconsumeInput(conn_)) break;                          // the connection failed: its error is the result
  }
  SqlResult out = result_of(conn_, result_of_sent(conn_));
  if (!out.ok && out.error.sqlstate == "57014") {  // query_canceled: by dbform, or by the server's timeout
    if (cancelled == Cancelled::Stopped) out.cancelled = Cancelled::Stopped;
    else if (cancelled == Cancelled::TimedOut || (limit.timeout.count() > 0 && Steady::now() - started >= limit.timeout))
      out.cancelled = Cancelled::TimedOut;
  }
  return out;
}

class LibpqConnector : public SqlConnector {
 public:
  std::unique_ptr<SqlSession> connect(const ConnectTarget& target, const SqlSessionOptions& options) const override {
    const std::string port = std::to_string(target.port);
    const std::string timeout = std::to_string(std::max<long long>(2, (options.connect_timeout.count() + 999) / 1000));
    // Set at login, so that no statement of the session (dbform's first included) runs otherwise.
    std::string settings;
    if (options.read_only) settings += "-c default_transaction_read_only=on ";
    if (options.statement_timeout.count() > 0)
      settings += "-c statement_timeout=" + std::to_string(options.statement_timeout.count());
    const char* keys[] = {"host",     "port",    "user",           "dbname",          "password",
                          "sslmode",  "connect_timeout", "application_name", "client_encoding", "options", nullptr};
    const char* values[] = {target.host.c_str(), port.c_str(), target.user.c_str(), target.database.c_str(),
                            target.password.c_str(), target.sslmode.c_str(), timeout.c_str(), "dbform", "UTF8",
                            settings.c_str(), nullptr};
    PGconn* conn = PQconnectdbParams(keys, values, 0);
    if (!conn) throw Error("libpq could not allocate a connection");
    if (PQstatus(conn) != CONNECTION_OK) {
      const std::string why = one_line(PQerrorMessage(conn));
      PQfinish(conn);
      throw Error("could not connect to " + target.host + ":" + port + ": " + why);
    }
    return std::make_unique<LibpqSession>(conn);
  }
};

}  // namespace

std::unique_ptr<SqlConnector> libpq_connector() { return std::make_unique<LibpqConnector>(); }

size_t byte_of_character(const std::string& text, int position) {
  size_t i = 0;
  for (int c = 1; c < position && i < text.size(); ++c) {
    ++i;
    while (i < text.size() && (static_cast<unsigned char>(text[i]) & 0xC0) == 0x80) ++i;  // continuation bytes
  }
  return std::min(i, text.size());
}

}  // namespace dbform
