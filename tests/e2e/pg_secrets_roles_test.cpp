// The two roles of a PostgreSQL state (docs/state.md) against `dbform sim --postgres`, so that
// every command that reads a password really uses it: the pull request's planner, which may not
// read dbform_secrets, is refused every write and every password, each before any call to the API
// and with the table named; main's applier does each, and its passwords stay in the secrets table.
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
