#include "sql/session.h"

#include <libpq-fe.h>

#include <algorithm>

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
  SqlResult exec_params(const std::string& sql, const std::vector<std::string>& params) override {
    std::vector<const char*> values;
    for (const auto& p : params) values.push_back(p.c_str());
    return result_of(conn_, PQexecParams(conn_, sql.c_str(), static_cast<int>(values.size()), nullptr, values.data(),
                                         nullptr, nullptr, 0));
  }

 private:
  PGconn* conn_;
};

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
