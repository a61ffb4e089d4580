// The preview schema operations over the fake SQL connector: every fork's ledger read before any
// file runs, a changed file stopping everything, a failing file stopping its fork only, and the
// diff read through read-only sessions of the fork and its source.
#include <catch2/catch.hpp>

#include "ops/preview_schema.h"
#include "sql/fake_session.h"
#include "state/previews.h"

using namespace dbform;

namespace {

ResourceRecord service(const std::string& address, const std::string& name, int port) {
  ResourceRecord r;
  r.address = address;
  r.project_id = "acme";
  r.name = name;
  r.id = "id-" + name;
  r.status = "READY";
  r.endpoint_host = "127.0.0.1";
  r.endpoint_port = port;
  r.initial_password = "pw-" + name;
  return r;
}

State preview_state() {
  State s = new_state();
  for (const auto& [svc, port] : std::vector<std::pair<std::string, int>>{{"orders", 5001}, {"billing", 5002}}) {
    s.upsert(service("acme/services/" + svc, svc, port));
    ResourceRecord fork = service(preview_address("acme", "pr-1", svc), preview_fork_name("pr-1", svc), port + 100);
    fork.created_at = "2026-11-28T05:00:00Z";
    fork.settings = {{"fork", {{"from", svc}, {"strategy", "NOW"}}},
                     {"environment_tag", "DEV"},
                     {kPreviewKey, {{"name", "pr-1"}, {"service", svc}, {"expires_at", "2026-12-01T05:00:00Z"},
                                    {"password_rotated", true}}}};
    s.upsert(fork);
  }
  return s;
}

std::vector<MigrationFile> files() {
  Diagnostics diags;
  std::vector<MigrationFile> out = {parse_migration("0001_a.sql", "db/0001_a.sql", "CREATE TABLE a (v int);", diags),
                                    parse_migration("0002_b.sql", "db/0002_b.sql", "CREATE TABLE b (v int);", diags)};
  REQUIRE_FALSE(diags.has_errors());
  return out;
}

struct MigrationProgress : MigrationReporter {
  std::vector<std::string> seen;
  void applying(const std::string&, const std::string& fork, const MigrationFile& file) override {
    seen.push_back(fork + " " + file.name);
  }
};

bool sent(const FakeSqlSession& s, const std::string& text) {
  for (const auto& line : s.sent)
    if (line.find(text) != std::string::npos) return true;
  return false;
}

// A migration of preview pr-1 of acme with files(), through the fake connector.
struct Migration {
  State state = preview_state();
  const std::vector<MigrationFile> all = files();
  FakeSqlConnector connector;
  MigrationProgress progress;
  MigrateOutcome run() { return migrate_preview({state, "acme", "pr-1", all, connector}, progress); }
};

}  // namespace

TEST_CASE("ops: migrations go to every fork of the preview - a second run applies only new files", "[ops]") {
  Migration m;
  m.connector.prepare = [&](FakeSqlSession& s, const ConnectTarget& t) {
    s.rows["to_regclass"] = {{std::string("t")}};
    s.rows["SELECT name, sha256"] = {{std::string("0001_a.sql"), m.all[0].sha256, std::string("2026-11-28")}};
    CHECK(t.password == (t.port == 5101 ? "pw-orders-pr-1" : "pw-billing-pr-1"));
  };
  MigrateOutcome out = m.run();
  REQUIRE(out.forks.size() == 2);
  CHECK_FALSE(out.failed());
  for (const auto& f : out.forks) {
    CHECK(f.before == 1);
    CHECK(f.applied == std::vector<std::string>{"0002_b.sql"});
  }
  CHECK(m.progress.seen == std::vector<std::string>{"orders-pr-1 0002_b.sql", "billing-pr-1 0002_b.sql"});
  REQUIRE(m.connector.made.size() == 2);
  CHECK(m.connector.made[0].first == "127.0.0.1:5101");  // the forks, never the sources
  CHECK(m.connector.made[1].first == "127.0.0.1:5102");
  CHECK_FALSE(sent(*m.connector.made[0].second, "CREATE TABLE a"));
}

TEST_CASE("ops: a changed applied file on any fork stops the run before any file runs anywhere", "[ops]") {
  Migration m;
  m.connector.prepare = [&](FakeSqlSession& s, const ConnectTarget& t) {
    s.rows["to_regclass"] = {{std::string(t.port == 5102 ? "t" : "f")}};
    s.rows["SELECT name, sha256"] = {{std::string("0001_a.sql"), std::string(64, '0'), std::string("2026-11-28")}};
  };
  CHECK_THROWS_WITH(m.run(),
                    Catch::Contains("billing-pr-1: db/0001_a.sql changed after it was applied") &&
                        Catch::Contains("no migration was applied to any fork"));
  for (const auto& [target, session] : m.connector.made) CHECK_FALSE(sent(*session, "BEGIN"));
}

TEST_CASE("ops: a failing file stops its fork's migrations, not the other fork's", "[ops]") {
  Migration m;
  m.connector.prepare = [&](FakeSqlSession& s, const ConnectTarget& t) {
    s.rows["to_regclass"] = {{std::string("f")}};
    if (t.port == 5101) s.fail_when["CREATE TABLE a"] = SqlError{"permission denied for schema public", "", "", "42501", 0};
  };
  MigrateOutcome out = m.run();
  CHECK(out.failed());
  REQUIRE(out.forks.size() == 2);
  REQUIRE(out.forks[0].failure);
  CHECK(out.forks[0].failure->str() == "db/0001_a.sql:1:1: permission denied for schema public (SQLSTATE 42501)");
  CHECK(out.forks[0].applied.empty());
  CHECK(out.forks[1].applied == std::vector<std::string>{"0001_a.sql", "0002_b.sql"});
}

TEST_CASE("ops: a fork whose password is still its source's is refused before any connection", "[ops]") {
  Migration m;
  m.state.find(preview_address("acme", "pr-1", "billing"))->settings[kPreviewKey]["password_rotated"] = false;
  CHECK_THROWS(m.run());
  CHECK(m.connector.made.size() == 1);  // orders' fork was opened (its ledger read), nothing applied
  CHECK_FALSE(sent(*m.connector.made[0].second, "BEGIN"));
}

TEST_CASE("ops: the diff reads each fork and its source through read-only sessions with a timeout", "[ops]") {
  const State state = preview_state();
  FakeSqlConnector connector;
  connector.prepare = [&](FakeSqlSession& s, const ConnectTarget& t) {
    if (t.port > 5100) s.rows["FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace WHERE c.relkind IN ('r'"] =
        {{std::string("public"), std::string("added"), std::string("r")}};
  };
  DiffOutcome out = diff_preview({state, "", "pr-1", connector, std::chrono::seconds(7)});
  REQUIRE(out.forks.size() == 2);
  CHECK(out.differs());
  CHECK(out.destructive() == 0);
  REQUIRE(out.forks[0].changes.size() == 1);
  CHECK(out.forks[0].changes[0].line() == "+ table public.added");
  CHECK(out.forks[0].source_address == "acme/services/orders");
  REQUIRE(connector.options.size() == 4);
  for (const auto& o : connector.options) {
    CHECK(o.read_only);
    CHECK(o.statement_timeout == std::chrono::seconds(7));
  }
  for (const auto& [target, session] : connector.made) {
    CHECK(session->sent.front() == "BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY");
    for (const auto& line : session->sent) CHECK_THAT(line, !Catch::Contains("CREATE") && !Catch::Contains("INSERT"));
  }
  CHECK_THROWS_WITH(diff_preview({state, "", "pr-9", connector}), Catch::Contains("no preview `pr-9` is recorded"));
}

TEST_CASE("ops: a fork that refuses connections right after READY is tried again - a refused login is final", "[ops]") {
  const State state = preview_state();
  const auto all = files();
  FakeClock clock;
  MigrationProgress progress;
  FakeSqlConnector slow;
  slow.prepare = [](FakeSqlSession& s, const ConnectTarget&) { s.rows["to_regclass"] = {{std::string("f")}}; };
  slow.refusals = 3;
  MigrateRequest request{state, "acme", "pr-1", all, slow};
  request.clock = &clock;
  MigrateOutcome out = migrate_preview(request, progress);
  CHECK_FALSE(out.failed());
  CHECK(slow.attempts == 5);  // three refused, then the two forks
  CHECK(out.forks[0].applied.size() == 2);

  FakeSqlConnector wrong;
  wrong.refusals = 100;
  wrong.refusal = "FATAL:  password authentication failed for user \"tsdbadmin\"";
  MigrateRequest refused{state, "acme", "pr-1", all, wrong};
  refused.clock = &clock;
  CHECK_THROWS_WITH(migrate_preview(refused, progress), Catch::Contains("password authentication failed"));
  CHECK(wrong.attempts == 1);

  FakeSqlConnector down;
  down.refusals = 1000;
  MigrateRequest gone{state, "acme", "pr-1", all, down};
  gone.clock = &clock;
  gone.connect_wait = std::chrono::seconds(10);
  CHECK_THROWS_WITH(migrate_preview(gone, progress), Catch::Contains("Connection refused"));
  CHECK(down.attempts == 21);  // every half second for 10 s, and once more at the end
}
