// What only the PostgreSQL backend has: URLs and their passwords, tables created on the first write,
// workspaces, the holder check against pg_locks, lost connections. The behaviour it shares with
// the file store is in conformance_test.cpp.
#include <catch2/catch.hpp>
#include <thread>

#include "error_of.h"
#include "pg/test_server.h"
#include "state/codec.h"
#include "state/pg_store.h"

using namespace dbform;

namespace {

ResourceRecord record(const std::string& name) {
  ResourceRecord r;
  r.project_id = "p";
  r.name = name;
  r.address = resource_address("p", ResourceKind::Service, name);
  return r;
}

// Virtual time whose first sleep runs `on_first_sleep`: what another process would do while we wait.
class ScriptedClock : public Clock {
 public:
  std::function<void()> on_first_sleep;
  TimePoint now() const override { return fake_.now(); }
  void sleep_until(TimePoint t) override {
    if (auto f = std::exchange(on_first_sleep, nullptr)) f();
    fake_.sleep_until(t);
  }
  std::chrono::system_clock::time_point wall_now() const override { return fake_.wall_now(); }

 private:
  FakeClock fake_;
};

}  // namespace

TEST_CASE("state: pg: URLs are recognised") {
  CHECK(is_postgres_url("postgresql://h/x"));
  CHECK_FALSE(is_postgres_url("state/postgres.json"));
}

TEST_CASE("state: pg: libpq's keyword form is a PostgreSQL state too, shown without its password") {
  CHECK(names_postgres_state("postgres://u:p@h/x", "--state"));
  CHECK(names_postgres_state("host=db.internal dbname=states user=ci password=s3cret-pw", "DBFORM_STATE"));
  CHECK_FALSE(names_postgres_state("dbform.state.json", "--state"));
  CHECK_FALSE(names_postgres_state("states/prod.json", "--state"));
  // Holding `=` but not libpq's: refused, quoting nothing (it may hold a password).
  const std::string msg = error_of([] { names_postgres_state("hots=db password=s3cret-pw", "DBFORM_STATE"); });
  CHECK_THAT(msg, Catch::StartsWith("DBFORM_STATE holds `=`"));
  CHECK_THAT(msg, !Catch::Contains("s3cret") && !Catch::Contains("hots"));
  CHECK(error_of([] { names_postgres_state("host=db password='unterminated", "--state"); }) != "");

  CHECK(redacted_conninfo("host=db.internal dbname=states user=ci password=s3cret-pw sslpassword=other") ==
        "user=ci dbname=states host=db.internal");
  CHECK(redacted_conninfo("host=db dbname='my states' password='a b'") == "dbname='my states' host=db");
  CHECK(redacted_conninfo("postgres://alice:s3cret@db/x?password=p") == "postgres://alice@db/x");
}

TEST_CASE("state: pg: workspace names") {
  for (const char* name : {"default", "team-a.prod_2"}) {
    INFO(name);
    CHECK(valid_workspace_name(name));
  }
  for (const std::string& name : std::initializer_list<std::string>{"", "-x", "a b", "x';--", std::string(129, 'a')}) {
    INFO(name);
    CHECK_FALSE(valid_workspace_name(name));
  }
}

TEST_CASE("state: pg: describe names the server and workspace, never the password") {
  std::string url = pgtest::server_url();
  PgStateStore store(url, "team-a");
  CHECK_THAT(store.describe(), Catch::StartsWith("postgres://dbform@127.0.0.1:"));
  CHECK_THAT(store.describe(), Catch::EndsWith("/postgres (workspace team-a)"));
  CHECK_THAT(store.describe(), !Catch::Contains(pgtest::server_password()));
}

TEST_CASE("state: pg: connection errors name the server, database and user, never the password") {
  std::string url = pgtest::server_url();
  std::string password = pgtest::server_password();
  std::string wrong_password = url;
  wrong_password.replace(wrong_password.find(password), password.size(), "not-the-password-x");
  std::string msg = error_of([&] { PgStateStore(wrong_password, "default"); });
  CHECK_THAT(msg, Catch::StartsWith("cannot connect to the PostgreSQL state (database postgres on 127.0.0.1:"));
  CHECK_THAT(msg, Catch::Contains("as dbform"));
  CHECK_THAT(msg, Catch::Contains("password authentication failed"));
  CHECK_THAT(msg, !Catch::Contains("not-the-password-x"));

  msg = error_of([&] { PgStateStore(pgtest::url_for_database("no_such_db"), "default"); });
  CHECK_THAT(msg, Catch::Contains("database no_such_db on 127.0.0.1"));
  CHECK_THAT(msg, Catch::Contains("does not exist"));
  CHECK_THAT(msg, !Catch::Contains(password));

  // Nobody listens on port 1 of loopback.
  msg = error_of([] { PgStateStore("postgres://u:hunter2@127.0.0.1:1/x?connect_timeout=5", "default"); });
  CHECK_THAT(msg, Catch::Contains("database x on 127.0.0.1:1 as u"));
  CHECK_THAT(msg, Catch::Contains("refused"));
  CHECK_THAT(msg, !Catch::Contains("hunter2"));
  CHECK_THAT(msg, !Catch::Contains("\n"));
}

TEST_CASE("state: pg: the tables are created on the first write, also by clients racing to do it") {
  std::string url = pgtest::fresh_database("firstuse");
  std::vector<std::string> errors(4);
  std::vector<std::thread> clients;
  for (size_t i = 0; i < errors.size(); ++i)
    clients.emplace_back([&, i] {
      errors[i] = error_of([&] {
        State s = new_state();
        PgStateStore(url, "ws" + std::to_string(i)).write(s);
      });
    });
  for (auto& t : clients) t.join();
  for (const auto& e : errors) CHECK(e.empty());
  PgConnection c(url);
  CHECK(c.exec("SELECT count(*) FROM pg_tables WHERE tablename IN ('dbform_states', 'dbform_locks')").rows[0][0] ==
        "2");
}

TEST_CASE("state: pg: a role that may only read the tables can read, and one that may not create them is told why") {
  std::string url = pgtest::fresh_database("roles");
  std::string role = pgtest::unique_name("reader");
  PgConnection owner(url);
  owner.exec_script("CREATE ROLE " + role + " LOGIN PASSWORD 'reader-pw'");
  std::string as_reader = url;
  as_reader.replace(as_reader.find("dbform:"), as_reader.find('@') - as_reader.find("dbform:"), role + ":reader-pw");

  // Before any table exists, reading finds no state and creates nothing (a plan is read-only);
  // the first write is what needs them.
  PgStateStore early(as_reader, "default");
  CHECK_FALSE(early.read().has_value());
  CHECK_FALSE(early.lock_holder().has_value());
  CHECK(early.workspaces().empty());
  CHECK(owner.exec("SELECT to_regclass('dbform_states') IS NULL").rows.at(0).at(0) == "t");
  std::string msg = error_of([&] {
    State s = new_state();
    early.write(s);
  });
  CHECK_THAT(msg, Catch::Contains("permission denied for schema public"));
  CHECK_THAT(msg, Catch::Contains("grant this user CREATE"));
  msg = error_of([&] { early.lock("apply", Duration(0)); });
  CHECK_THAT(msg, Catch::Contains("grant this user CREATE"));

  PgStateStore writer(url, "default");
  State s = new_state();
  writer.write(s);
  owner.exec_script("GRANT SELECT ON dbform_states, dbform_locks TO " + role);
  PgStateStore reader(as_reader, "default");
  CHECK(reader.read()->lineage == s.lineage);
}

TEST_CASE("state: pg: workspaces are independent states with independent locks") {
  std::string url = pgtest::server_url();
  std::string w1 = pgtest::unique_name("ws"), w2 = pgtest::unique_name("ws");
  PgStateStore a(url, w1), b(url, w2);
  auto lock_a = a.lock("apply", Duration(0));
  auto lock_b = b.lock("apply", Duration(0));
  State s1 = new_state(), s2 = new_state();
  s1.upsert(record("only-in-w1"));
  a.write(s1);
  b.write(s2);
  CHECK(PgStateStore(url, w1).read()->resources.size() == 1);
  CHECK(PgStateStore(url, w2).read()->resources.empty());
  CHECK(PgStateStore(url, w2).read()->lineage == s2.lineage);
}

TEST_CASE("state: pg: --lock-timeout takes the lock as soon as the holder lets go") {
  std::string url = pgtest::server_url(), ws = pgtest::unique_name("wait");
  PgStateStore holder_store(url, ws);
  auto held = holder_store.lock("apply", Duration(0));
  ScriptedClock clock;
  clock.on_first_sleep = [&] { held.reset(); };
  PgStateStore waiter(url, ws, &clock);
  auto start = clock.now();
  auto lock = waiter.lock("apply", std::chrono::minutes(10));
  CHECK(lock != nullptr);
  CHECK(clock.now() - start == Duration(100));  // one poll interval, not the whole timeout
  CHECK(pgtest::query_value("SELECT operation FROM dbform_locks WHERE workspace = $1", {ws}) == "apply");
}

TEST_CASE("state: pg: the holder row counts only while its session holds the lock") {
  std::string url = pgtest::server_url(), ws = pgtest::unique_name("stale");
  PgStateStore store(url, ws);  // creates the tables
  // A row left by a holder that died, and the lock taken by a client that has not written its own.
  PgConnection other(url);
  other.exec("INSERT INTO dbform_locks VALUES ($1, 4242, 'gone-host', 'apply', now(), 999999)", {ws});
  other.exec("SELECT pg_advisory_lock($1::bigint)", {std::to_string(pg_workspace_lock_key(ws))});
  std::string msg = error_of([&] { store.lock("apply", Duration(0)); });
  CHECK_THAT(msg, Catch::Contains("locked by another dbform process (it has not written its details yet)"));
  CHECK_THAT(msg, !Catch::Contains("gone-host"));
}

TEST_CASE("state: pg: a document that disagrees with its row is refused and left as it was") {
  std::string url = pgtest::server_url(), ws = pgtest::unique_name("edited");
  PgStateStore store(url, ws);
  State s = new_state();
  store.write(s);
  PgConnection c(url);
  c.exec("UPDATE dbform_states SET serial = 41 WHERE workspace = $1", {ws});
  std::string msg = error_of([&] { store.read(); });
  CHECK_THAT(msg, Catch::Contains("does not match its row"));
  CHECK_THAT(msg, Catch::Contains("DELETE FROM dbform_states WHERE workspace = '" + ws + "'"));
  CHECK(c.exec("SELECT serial FROM dbform_states WHERE workspace = $1", {ws}).rows[0][0] == "41");
}

TEST_CASE("state: pg: a row of dbform_secrets edited into something that is not JSON is refused, naming the row") {
  std::string url = pgtest::server_url(), ws = pgtest::unique_name("edited_secret");
  PgStateStore store(url, ws);
  State s = new_state();
  ResourceRecord orders = record("orders");
  orders.id = "svc-1";
  orders.initial_password = Secret("a-password-long-enough");
  s.upsert(orders);
  store.write(s);
  PgConnection c(url);
  c.exec("UPDATE dbform_secrets SET value = 'not json' WHERE workspace = $1", {ws});
  std::string msg = error_of([&] { store.read(); });
  CHECK_THAT(msg, Catch::Contains("the row of dbform_secrets for service svc-1 (project p), field initial_password, "
                                  "is not JSON"));
  CHECK_THAT(msg, Catch::Contains("(workspace " + ws + ")"));
  CHECK_THAT(msg, !Catch::Contains(".backup") && !Catch::Contains("a-password"));
}

TEST_CASE("state: pg: a lost connection fails the next write clearly and writes nothing") {
  std::string url = pgtest::server_url(), ws = pgtest::unique_name("lost");
  PgStateStore store(url, ws);
  auto lock = store.lock("apply", Duration(0));
  State s = new_state();
  store.write(s);
  std::string backend = pgtest::query_value("SELECT backend_pid FROM dbform_locks WHERE workspace = $1", {ws});
  REQUIRE(pgtest::query_value("SELECT pg_terminate_backend($1::int, 10000)", {backend}) == "t");
  s.upsert(record("orders"));
  std::string msg = error_of([&] { store.write(s); });
  CHECK_THAT(msg, Catch::StartsWith("lost the connection to the PostgreSQL state (database postgres on 127.0.0.1:"));
  CHECK_THAT(msg, Catch::Contains("run the command again"));
  CHECK(s.serial == 1);
  CHECK(PgStateStore(url, ws).read()->serial == 1);
  // The lock went with the session: another client can take it.
  CHECK(PgStateStore(url, ws).lock("apply", Duration(0)) != nullptr);
}

TEST_CASE("state: pg: a database made before the journal, lock and secrets tables still reads its state, and a write adds "
          "them") {
  std::string url = pgtest::fresh_database("legacy");
  State s = new_state();
  PgStateStore(url, "default").write(s);
  PgConnection owner(url);
  owner.exec_script("DROP TABLE dbform_journal; DROP TABLE dbform_locks; DROP TABLE dbform_secrets");

  PgStateStore store(url, "default");
  auto read = store.read();
  REQUIRE(read.has_value());
  CHECK(read->lineage == s.lineage);
  CHECK_FALSE(store.lock_holder().has_value());
  CHECK(store.workspaces() == std::vector<std::string>{"default"});
  CHECK(owner.exec("SELECT count(*) FROM pg_tables WHERE tablename LIKE 'dbform_%'").rows.at(0).at(0) == "1");
  auto lock = store.lock("apply", Duration(0));
  store.write_changes(*read, {});
  CHECK(owner.exec("SELECT count(*) FROM pg_tables WHERE tablename LIKE 'dbform_%'").rows.at(0).at(0) == "4");
  CHECK(PgStateStore(url, "default").read()->serial == read->serial);
}
