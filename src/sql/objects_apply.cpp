// Applying a database's object statements as one transaction: all of them or none.
#include <string>

#include "sql/objects.h"

namespace dbform {

namespace {

// PostgreSQL's words about a refused statement, with its detail and hint. A secret statement's
// verifier is cut out of them, should the server quote the statement back (a syntax error's
// "at or near").
std::string server_words(const SqlError& e, const DbStatement* statement) {
  std::string out = e.message.empty() ? "no answer from the server" : e.message;
  if (!e.detail.empty()) out += " (" + e.detail + ")";
  if (!e.hint.empty()) out += "; hint: " + e.hint;
  if (statement && statement->secret)
    for (size_t at = out.find("SCRAM-SHA-256$"); at != std::string::npos; at = out.find("SCRAM-SHA-256$", at + 1)) {
      size_t end = at;
      while (end < out.size() && out[end] != ' ' && out[end] != '\'' && out[end] != '"') ++end;
      out.replace(at, end - at, "[verifier]");
    }
  return out;
}

}  // namespace

ObjectsOutcome apply_objects(SqlSession& session, const std::vector<DbStatement>& statements,
                             const StatementLimit& limit) {
  ObjectsOutcome out;
  if (statements.empty()) return out;
  auto failed = [&](const SqlResult& r, const DbStatement* statement, const std::string& kind) {
    out.result = ObjectsOutcome::Result::Failed;
    out.object = statement ? statement->object : "";
    out.kind = kind;
    out.message = server_words(r.error, statement);
    out.cancelled = r.cancelled;
    session.exec("ROLLBACK");  // when the connection is gone, the server ends the transaction itself
    return out;
  };
  SqlResult begin = session.exec("BEGIN");
  if (!begin.ok) return failed(begin, nullptr, "BEGIN");
  for (const auto& statement : statements) {
    SqlResult r = session.exec_limited(statement.sql, limit);
    if (!r.ok) return failed(r, &statement, statement.kind);
    ++out.applied;
  }
  SqlResult commit = session.exec_limited("COMMIT", limit);
  if (!commit.ok) {
    // No SQLSTATE: libpq lost the connection, so whether the server committed is not known (the
    // caller reads the catalogs again); with one, the server refused and rolled back.
    if (commit.error.sqlstate.empty()) {
      out.result = ObjectsOutcome::Result::Unknown;
      out.kind = "COMMIT";
      out.message = server_words(commit.error, nullptr);
      out.cancelled = commit.cancelled;
      return out;
    }
    return failed(commit, nullptr, "COMMIT");
  }
  return out;
}

}  // namespace dbform
