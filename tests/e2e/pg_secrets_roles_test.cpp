// The two roles of a PostgreSQL state (docs/state.md) against `dbform sim --postgres`, so that
// every command that reads a password really uses it: the pull request's planner, which may not
// read dbform_secrets, is refused every write and every password, each before any call to the API
// and with the table named; main's applier does each, and its passwords stay in the secrets table.
#include <cstdlib>
#include <fstream>

#include "../pg/test_server.h"
#include "pg_roles.h"
#include "postgres_sim.h"
#include "previews_common.h"
#include "util/text.h"

using namespace e2e;

namespace {

const std::string kPreviewsOfOrders =
    "    previews:\n      services: [orders]\n      strategy: NOW\n      ttl: 72h\n      max: 3\n";

long long serial_of(const std::string& database_url) {
  return dbform::PgStateStore(database_url, "default").read()->serial;
}

}  // namespace

TEST_CASE("e2e: pg: postgres: the planner's role is refused every write and every password before any call, and the "
          "applier's does each",
          "[pg]") {
  Sandbox sb;
  PostgresSim sim(sb);  // first: the checkouts copy the sandbox's environment, its API URL included
  const std::string database_url = pgtest::fresh_database("secrets_roles");
  RoleCheckout owner(sb, "owner", database_url);
  owner.write_manifest(manifest({}, {service_yaml("orders")}) + kPreviewsOfOrders);
  RunResult first = owner.apply();
  INFO(first.describe());
  REQUIRE(first.exit_code == 0);

  dbform::PgConnection admin(database_url);
  const std::string planner = pgtest::unique_name("planner"), applier = pgtest::unique_name("applier");
  grant_roles(admin, planner, applier);
  RoleCheckout pr(sb, "pr", as_role(database_url, planner, "planner-pw"));
  RoleCheckout main_branch(sb, "main", as_role(database_url, applier, "applier-pw"));
  // Both checkouts declare `legacy`, a service made in the console (its size), to be imported.
  const std::string legacy = sim.console_service("legacy");
  for (RoleCheckout* checkout : {&pr, &main_branch})
    checkout->write_manifest(manifest({}, {service_yaml("orders"), service_yaml("legacy", 500, 2)}) + kPreviewsOfOrders);

  // The planner reads the API and the state: a refresh-only plan works and finds nothing.
  RunResult refresh_plan = pr.run({"plan", "--refresh-only", "--detailed-exitcode"});
  INFO(refresh_plan.describe());
  CHECK(refresh_plan.exit_code == 0);

  // Main's applier makes a preview, so that the planner has one to compare and to take down.
  RunResult up = main_branch.run({"preview", "up", "pr-1", "--poll-interval", "100ms"});
  INFO(up.describe());
  REQUIRE(up.exit_code == 0);

  const long long serial = serial_of(database_url);
  const json calls = sim.calls();
  const std::vector<std::vector<std::string>> refused = {
      {"apply", "--refresh-only", "--auto-approve"},
      {"rotate-password", "orders"},
      {"connect", "orders", "--check"},
      {"output", "orders.connection_string"},
      {"output", "--format", "env"},  // would print every endpoint but no password, and pass for whole
      {"output", "--format", "pgpass"},
      {"output", "--show-secrets"},
      {"output", "--json", "--show-secrets"},
      {"preview", "up", "pr-2", "--poll-interval", "100ms"},
      {"preview", "diff", "pr-1"},
      {"preview", "down", "pr-1", "--poll-interval", "100ms"},
      {"import", service_address("legacy"), legacy},
      {"state", "mv", "orders", "invoices"},
      {"state", "rm", "orders"},
  };
  for (const auto& args : refused) {
    RunResult r = pr.run(args);
    INFO(dbform::join(args, " ") << "\n" << r.describe());
    CHECK(r.exit_code == 1);
    CHECK(contains(r.err, "dbform_secrets"));
    CHECK(calls_since(calls, sim.calls()) == json::object());
    CHECK(serial_of(database_url) == serial);
  }
  // A copy without the passwords, pushed back, would lose them: the planner may not pull one.
  RunResult pull = pr.run({"state", "pull"});
  INFO(pull.describe());
  CHECK(pull.exit_code == 1);
  CHECK(contains(pull.err, "refusing to pull"));
  CHECK(contains(pull.err, "dbform_secrets"));
  CHECK(pull.out.empty());

  // The applier does each, and every password it records stays out of the document and the journal.
  const std::vector<std::vector<std::string>> done = {
      {"plan", "--refresh-only", "--detailed-exitcode"},
      {"apply", "--refresh-only", "--auto-approve"},
      {"rotate-password", "orders"},
      {"connect", "orders", "--check"},  // with the new password
      {"preview", "diff", "pr-1"},
      {"preview", "down", "pr-1", "--poll-interval", "100ms"},
      {"import", service_address("legacy"), legacy},
      {"state", "mv", "orders", "invoices"},
      {"state", "mv", "invoices", "orders"},
  };
  for (const auto& args : done) {
    RunResult r = main_branch.run(args);
    INFO(dbform::join(args, " ") << "\n" << r.describe());
    CHECK(r.exit_code == 0);
  }
  RunResult pulled = main_branch.run({"state", "pull"});
  INFO(pulled.describe());
  CHECK(pulled.exit_code == 0);
  CHECK(contains(pulled.out, service_address("legacy")));
  RunResult shown = main_branch.run({"output", "orders.password"});
  INFO(shown.describe());
  REQUIRE(shown.exit_code == 0);
  const std::string password = shown.out.substr(0, shown.out.find('\n'));
  CHECK(password.size() >= 16);
  CHECK(contains(pulled.out, password));  // the applier's copy is whole
  CHECK(!contains(documents_and_journal(admin), password));
  CHECK(admin.exec("SELECT count(*) FROM dbform_secrets WHERE value = $1", {json(password).dump()}).rows[0][0] == "1");
  RunResult last = pr.run({"plan", "--detailed-exitcode"});  // the planner sees what main made
  INFO(last.describe());
  CHECK(last.exit_code == 0);
}

namespace {

// A PostgreSQL server of this test's own (tests/pg/start.sh), stopped at the end: one of the paths
// below makes a role that may log in a member of pg_read_all_data, which reads every table of every
// database of its server; on the shared test server it would refuse every other test's writer
// while it lives.
struct OwnServer {
  fs::path out;
  std::string url;
  explicit OwnServer(Sandbox& sb) : out(sb.dir() / "own-pg") {
    RunResult started = sb.run_shell("bash '" DBFORM_SOURCE_DIR "/tests/pg/start.sh' '" + out.string() + "'");
    INFO(started.describe());
    REQUIRE(started.exit_code == 0);
    std::ifstream f(out / "url");
    std::getline(f, url);
    REQUIRE(!url.empty());
  }
  ~OwnServer() {
    const std::string stop = "bash '" DBFORM_SOURCE_DIR "/tests/pg/stop.sh' '" + out.string() + "' >/dev/null 2>&1";
    if (std::system(stop.c_str()) != 0) WARN("could not stop the test's own PostgreSQL server in " << out);
  }
};

}  // namespace

// The writer asks the server who may read dbform_secrets, not only the table's own
// ACL. Each path below lets the planner's role (SELECT on the state's tables only) read every
// password; the writer's `rotate-password` refuses before any call, naming the planner and the path,
// quoting no password; once the path is closed it rotates.
TEST_CASE("e2e: pg: the writer refuses a dbform_secrets the planner reaches through a column grant, pg_read_all_data, "
          "a view or a SECURITY DEFINER function, before any call",
          "[pg]") {
  Sandbox sb;
  OwnServer server(sb);
  const std::string database_url = server.url;
  RoleCheckout owner(sb, "owner", database_url);
  owner.write_manifest(manifest({}, {service_yaml("orders")}));
  RunResult first = owner.apply();
  INFO(first.describe());
  REQUIRE(first.exit_code == 0);
  dbform::PgConnection admin(database_url);
  grant_roles(admin, "planner", "applier");
  RoleCheckout main_branch(sb, "main", as_role(database_url, "applier", "applier-pw"));
  main_branch.write_manifest(manifest({}, {service_yaml("orders")}));
  REQUIRE(main_branch.run({"rotate-password", "orders"}).exit_code == 0);  // nothing exposed yet
  dbform::PgConnection as_planner(as_role(database_url, "planner", "planner-pw"));

  struct Path {
    std::string name;
    std::string open, read, close;  // as the server's owner; `read` as the planner
    std::vector<std::string> said;  // what the refusal names
  };
  const std::vector<Path> paths = {
      {"a column grant", "GRANT SELECT (resource_id, value) ON dbform_secrets TO planner",
       "SELECT value FROM dbform_secrets", "REVOKE ALL ON dbform_secrets FROM planner",
       {"can be read by planner (a grant on some of its columns)", "REVOKE ALL ON dbform_secrets FROM ROLE"}},
      {"pg_read_all_data", "GRANT pg_read_all_data TO planner", "SELECT value FROM dbform_secrets",
       "REVOKE pg_read_all_data FROM planner",
       {"can be read by planner (through pg_read_all_data)", "REVOKE GROUP FROM ROLE"}},
      {"a view granted to the planner",
       "CREATE VIEW secrets_view AS SELECT resource_id, value FROM dbform_secrets; "
       "ALTER VIEW secrets_view OWNER TO applier; GRANT SELECT ON secrets_view TO planner",
       "SELECT value FROM secrets_view", "DROP VIEW secrets_view",
       {"is read by the view secrets_view, which planner may use", "DROP VIEW secrets_view"}},
      {"a SECURITY DEFINER function",
       "CREATE FUNCTION secret_of(id text) RETURNS SETOF text LANGUAGE sql SECURITY DEFINER AS "
       "$$SELECT value FROM dbform_secrets WHERE resource_id = id$$; ALTER FUNCTION secret_of(text) OWNER TO applier",
       "SELECT secret_of(resource_id) FROM dbform_secrets_ids", "DROP FUNCTION secret_of(text)",
       {"is read by the SECURITY DEFINER function secret_of(text) (run as applier), which planner may use",
        "DROP FUNCTION secret_of(text)"}},
  };
  // The planner knows the ids from the document it may read; here, from a table of its own.
  admin.exec_script("CREATE TABLE dbform_secrets_ids AS SELECT resource_id FROM dbform_secrets; "
                    "GRANT SELECT ON dbform_secrets_ids TO planner");
  const long long serial = serial_of(database_url);
  for (const Path& path : paths) {
    INFO(path.name);
    admin.exec_script(path.open);
    const std::string shown = main_branch.run({"output", "orders.password"}).out;
    REQUIRE(shown.size() > 16);
    const std::string password = shown.substr(0, shown.find('\n'));
    // The path is real: the planner reads the password through it.
    bool read_it = false;
    for (const auto& row : as_planner.exec(path.read).rows) read_it = read_it || row.at(0) == json(password).dump();
    CHECK(read_it);
    const long long calls = sb.total_requests();
    RunResult refused = main_branch.run({"rotate-password", "orders"});
    INFO(refused.describe());
    CHECK(refused.exit_code == 1);
    CHECK(contains(refused.err, "the table dbform_secrets"));
    for (const auto& said : path.said) CHECK(contains(refused.err, said));
    CHECK(contains(refused.err, "Nothing was written"));
    CHECK(!contains(refused.all(), password));
    CHECK(sb.total_requests() == calls);  // before any call to the API
    CHECK(serial_of(database_url) == serial);
    admin.exec_script(path.close);
  }
  // Every path closed: the writer rotates again.
  RunResult rotated = main_branch.run({"rotate-password", "orders"});
  INFO(rotated.describe());
  CHECK(rotated.exit_code == 0);
}

// The writer's check asks INSERT on dbform_secrets too. A role granted everything
// but that would send a create (or a new password) and then fail to record the password it chose:
// it is refused when it would take the lock, before any call to the API, naming the table.
TEST_CASE("e2e: pg: a writer that may not insert into dbform_secrets is refused before any call", "[pg]") {
  Sandbox sb;
  const std::string database_url = pgtest::fresh_database("secrets_insert");
  RoleCheckout owner(sb, "owner", database_url);
  owner.write_manifest(manifest({}, {service_yaml("orders")}));
  RunResult first = owner.apply();
  INFO(first.describe());
  REQUIRE(first.exit_code == 0);
  dbform::PgConnection admin(database_url);
  const std::string writer = pgtest::unique_name("writer");
  admin.exec_script("CREATE ROLE " + writer + " LOGIN PASSWORD 'writer-pw'; "
                    "GRANT SELECT, INSERT, UPDATE, DELETE ON dbform_states, dbform_journal, dbform_locks TO " + writer +
                    "; GRANT SELECT, UPDATE, DELETE ON dbform_secrets TO " + writer);
  RoleCheckout main_branch(sb, "main", as_role(database_url, writer, "writer-pw"));
  main_branch.write_manifest(manifest({}, {service_yaml("orders"), service_yaml("search")}));
  const long long serial = serial_of(database_url);
  const long long calls = sb.total_requests();
  for (const std::vector<std::string>& args : std::vector<std::vector<std::string>>{
           {"apply", "--auto-approve", "--poll-interval", "100ms"}, {"rotate-password", "orders"}}) {
    RunResult r = main_branch.run(args);
    INFO(dbform::join(args, " ") << "\n" << r.describe());
    CHECK(r.exit_code == 1);
    CHECK(contains(r.err, "may not write the state"));
    CHECK(contains(r.err, "dbform_secrets"));
    CHECK(sb.total_requests() == calls);
    CHECK(serial_of(database_url) == serial);
  }
  CHECK(admin.exec("SELECT count(*) FROM dbform_secrets").rows[0][0] == "1");
}
