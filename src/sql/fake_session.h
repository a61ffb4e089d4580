#pragma once
// A SqlSession for the tests: it records every statement sent and answers from a script (a
// statement containing a given text fails with a given error, a query gets given rows).
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "sql/session.h"
#include "util/error.h"

namespace dbform {

class FakeSqlSession : public SqlSession {
 public:
  std::vector<std::string> sent;                    // every statement, in order (parameters after " | ")
  std::map<std::string, SqlError> fail_when;        // a statement containing the key fails so
  std::map<std::string, std::vector<SqlRow>> rows;  // a statement containing the key answers these rows
  std::map<std::string, Cancelled> cancel_when;     // a watched statement containing the key is cancelled so
  std::vector<StatementLimit> limits;               // the limit of each watched statement, in order
  std::vector<std::string> verifiers_for;           // the roles whose verifier was asked, in order

  // Fixed, so tests can spell it; never the password.
  std::string password_verifier(const std::string& role, const std::string& password) override {
    (void)password;
    verifiers_for.push_back(role);
    return "SCRAM-SHA-256$fake:" + role;
  }

  SqlResult exec(const std::string& sql) override { return answer(sql); }
  SqlResult exec_limited(const std::string& sql, const StatementLimit& limit) override {
    limits.push_back(limit);
    for (const auto& [text, why] : cancel_when)
      if (sql.find(text) != std::string::npos) {
        sent.push_back(sql);
        SqlResult r;
        r.error = {"canceling statement", "", "", "57014", 0};
        r.cancelled = why;
        return r;
      }
    return answer(sql);
  }
  SqlResult exec_params(const std::string& sql, const std::vector<std::string>& params) override {
    std::string line = sql;
    for (const auto& p : params) line += " | " + p;
    return answer(line);
  }

 private:
  SqlResult answer(const std::string& sql) {
    sent.push_back(sql);
    SqlResult r;
    for (const auto& [text, error] : fail_when)
      if (sql.find(text) != std::string::npos) {
        r.error = error;
        return r;
      }
    r.ok = true;
    for (const auto& [text, answer] : rows)
      if (sql.find(text) != std::string::npos) r.rows = answer;
    return r;
  }
};

// Hands out FakeSqlSessions, one per connection, each kept (with its target "host:port") for the
// test to look at after the session was closed.
class FakeSqlConnector : public SqlConnector {
 public:
  std::function<void(FakeSqlSession&, const ConnectTarget&)> prepare;  // scripts each new session
  mutable std::vector<std::pair<std::string, std::shared_ptr<FakeSqlSession>>> made;
  mutable std::vector<SqlSessionOptions> options;
  mutable int refusals = 0;  // the next this many connections fail with `refusal`
  std::string refusal = "connection to server at \"127.0.0.1\", port 5101 failed: Connection refused";
  mutable int attempts = 0;

  std::unique_ptr<SqlSession> connect(const ConnectTarget& target, const SqlSessionOptions& opts) const override {
    ++attempts;
    if (refusals > 0) {
      --refusals;
      throw Error("could not connect to " + target.host + ":" + std::to_string(target.port) + ": " + refusal);
    }
    auto session = std::make_shared<FakeSqlSession>();
    if (prepare) prepare(*session, target);
    made.emplace_back(target.host + ":" + std::to_string(target.port), session);
    options.push_back(opts);
    return std::make_unique<Shared>(session);
  }

 private:
  struct Shared : SqlSession {
    explicit Shared(std::shared_ptr<FakeSqlSession> s) : session(std::move(s)) {}
    SqlResult exec(const std::string& sql) override { return session->exec(sql); }
    SqlResult exec_limited(const std::string& sql, const StatementLimit& limit) override {
      return session->exec_limited(sql, limit);
    }
    SqlResult exec_params(const std::string& sql, const std::vector<std::string>& p) override {
      return session->exec_params(sql, p);
    }
    std::string password_verifier(const std::string& role, const std::string& password) override {
      return session->password_verifier(role, password);
    }
    std::shared_ptr<FakeSqlSession> session;
  };
};

}  // namespace dbform
