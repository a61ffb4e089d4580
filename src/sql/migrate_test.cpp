// Applying migration files over a fake session: each pending file in its own transaction with its
// ledger row, a failure located at its statement and PostgreSQL's position, the ledger's checks.
#include <catch2/catch.hpp>

#include "sql/fake_session.h"
#include "sql/migrate.h"

using namespace dbform;

namespace {

std::vector<MigrationFile> files_of(const std::vector<std::pair<std::string, std::string>>& named) {
  std::vector<MigrationFile> files;
  Diagnostics diags;
  for (const auto& [name, text] : named) files.push_back(parse_migration(name, "db/" + name, text, diags));
  REQUIRE_FALSE(diags.has_errors());
  return files;
}

std::vector<const MigrationFile*> all(const std::vector<MigrationFile>& files) {
  std::vector<const MigrationFile*> out;
  for (const auto& f : files) out.push_back(&f);
  return out;
}

}  // namespace

TEST_CASE("each file runs in its own transaction, statement by statement, with its ledger row", "[sql]") {
  auto files = files_of({{"0001_a.sql", "CREATE TABLE a (v int);\nINSERT INTO a VALUES (1);"},
                         {"0002_b.sql", "CREATE TABLE b (v int);"}});
  FakeSqlSession session;
  MigrationRun run = apply_pending(session, all(files));
  CHECK_FALSE(run.failure);
  CHECK(run.applied == std::vector<std::string>{"0001_a.sql", "0002_b.sql"});
  REQUIRE(session.sent.size() == 11);
  CHECK(session.sent[0] == "BEGIN");
  CHECK_THAT(session.sent[1], Catch::StartsWith("CREATE TABLE IF NOT EXISTS public.dbform_migrations"));
  CHECK(session.sent[2] == "CREATE TABLE a (v int)");
  CHECK(session.sent[3] == "\nINSERT INTO a VALUES (1)");
  CHECK(session.sent[4] == "INSERT INTO public.dbform_migrations (name, sha256) VALUES ($1, $2) | 0001_a.sql | " +
                               files[0].sha256);
  CHECK(session.sent[5] == "COMMIT");
  CHECK(session.sent[6] == "BEGIN");
  CHECK(session.sent[10] == "COMMIT");
}

TEST_CASE("a failing statement stops the run: rolled back, located at its line and PostgreSQL's position", "[sql]") {
  auto files = files_of({{"0001_a.sql", "CREATE TABLE a (v int);"},
                         {"0002_b.sql", "-- adds w\nALTER TABLE a\n  ADD COLUMN w int REFERENCES nope (id);\n"},
                         {"0003_c.sql", "CREATE TABLE c (v int);"}});
  FakeSqlSession session;
  // PostgreSQL's position counts characters of the statement sent (which starts after "0001"'s `;`).
  const std::string sent = files[1].statement_text(0);
  const int position = static_cast<int>(sent.find("nope")) + 1;
  session.fail_when["REFERENCES nope"] = SqlError{"relation \"nope\" does not exist", "", "", "42P01", position};
  MigrationRun run = apply_pending(session, all(files));
  CHECK(run.applied == std::vector<std::string>{"0001_a.sql"});
  REQUIRE(run.failure);
  CHECK(run.failure->file == "db/0002_b.sql");
  CHECK(run.failure->statement.str() == "db/0002_b.sql:2:1");
  REQUIRE(run.failure->error);
  CHECK(run.failure->error->line == 3);
  CHECK(run.failure->error->column == 31);
  CHECK(run.failure->str() == "db/0002_b.sql:2:1: relation \"nope\" does not exist (at 3:31; SQLSTATE 42P01)");
  CHECK(session.sent.back() == "ROLLBACK");
  for (const auto& s : session.sent) CHECK_THAT(s, !Catch::Contains("CREATE TABLE c"));
}

TEST_CASE("a statement past the timeout fails its file naming the timeout - one a signal cancelled is a stop, not a failure",
          "[sql]") {
  auto files = files_of({{"0001_a.sql", "CREATE TABLE a (v int);"},
                         {"0002_slow.sql", "CREATE TABLE b (v int);\nSELECT pg_sleep(3600);\n"},
                         {"0003_c.sql", "CREATE TABLE c (v int);"}});
  const std::atomic<bool> stop{false};
  const StatementLimit limit{&stop, std::chrono::seconds(2)};
  FakeSqlSession timed;
  timed.cancel_when["pg_sleep"] = Cancelled::TimedOut;
  MigrationRun run = apply_pending(timed, all(files), {}, limit);
  CHECK(run.applied == std::vector<std::string>{"0001_a.sql"});
  REQUIRE(run.failure);
  CHECK(run.failure->cancelled == Cancelled::TimedOut);
  CHECK(run.failure->str() == "db/0002_slow.sql:2:1: the statement ran longer than the migration timeout (2s) and was "
                              "cancelled; its file's transaction was rolled back (SQLSTATE 57014)");
  CHECK(run.stopped_in.empty());
  // Each transaction sets the server's timeout; each statement of a file is watched with the limit.
  CHECK(timed.sent[1] == "SET LOCAL statement_timeout = 2000");
  REQUIRE_FALSE(timed.limits.empty());
  for (const auto& l : timed.limits) CHECK((l.stop == &stop && l.timeout == std::chrono::seconds(2)));
  CHECK(timed.sent.back() == "ROLLBACK");

  FakeSqlSession stopped;
  stopped.cancel_when["pg_sleep"] = Cancelled::Stopped;
  MigrationRun interrupted = apply_pending(stopped, all(files), {}, limit);
  CHECK(interrupted.applied == std::vector<std::string>{"0001_a.sql"});
  CHECK_FALSE(interrupted.failure);
  CHECK(interrupted.stopped_in == "db/0002_slow.sql");
  CHECK(stopped.sent.back() == "ROLLBACK");
  for (const auto& s : stopped.sent) CHECK_THAT(s, !Catch::Contains("CREATE TABLE c"));

  // No timeout: nothing set.
  FakeSqlSession unlimited;
  apply_pending(unlimited, all(files));
  for (const auto& s : unlimited.sent) CHECK_THAT(s, !Catch::Contains("statement_timeout"));
}

TEST_CASE("the ledger: a changed or vanished applied file is a problem naming it - pending files are the rest",
          "[sql]") {
  auto files = files_of({{"0001_a.sql", "CREATE TABLE a (v int);"}, {"0002_b.sql", "CREATE TABLE b (v int);"},
                         {"0003_c.sql", "CREATE TABLE c (v int);"}});
  std::vector<LedgerEntry> ledger = {{"0001_a.sql", files[0].sha256, "2026-11-28 05:00:00+00"},
                                     {"0002_b.sql", files[1].sha256, "2026-11-28 05:00:01+00"}};
  CHECK(ledger_problems(files, ledger).empty());
  auto pending = pending_files(files, ledger);
  REQUIRE(pending.size() == 1);
  CHECK(pending[0]->name == "0003_c.sql");

  ledger[1].sha256 = std::string(64, '0');
  ledger.push_back({"0000_gone.sql", std::string(64, '1'), "2026-11-28 04:00:00+00"});
  auto problems = ledger_problems(files, ledger);
  REQUIRE(problems.size() == 2);
  CHECK_THAT(problems[0], Catch::StartsWith("db/0002_b.sql changed after it was applied at 2026-11-28 05:00:01+00"));
  CHECK_THAT(problems[1], Catch::StartsWith("`0000_gone.sql` was applied at 2026-11-28 04:00:00+00 and is no longer"));
}

TEST_CASE("the ledger is read only when it exists, and never created by reading", "[sql]") {
  FakeSqlSession none;
  none.rows["to_regclass"] = {{std::string("f")}};
  CHECK(read_ledger(none).empty());
  CHECK(none.sent.size() == 1);
  FakeSqlSession some;
  some.rows["to_regclass"] = {{std::string("t")}};
  some.rows["SELECT name, sha256"] = {{std::string("0001_a.sql"), std::string("abc"), std::string("2026-11-28")}};
  auto ledger = read_ledger(some);
  REQUIRE(ledger.size() == 1);
  CHECK(ledger[0].sha256 == "abc");
  for (const auto& s : some.sent) CHECK_THAT(s, !Catch::Contains("CREATE"));
}
