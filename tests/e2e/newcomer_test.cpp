// What a newcomer met in the secure pull-request flow (issue 61), through the real binary: each
// message says the first thing to do, and each suggestion works as pasted.
#include "../pg/test_server.h"
#include "pg_roles.h"
#include "util/text.h"

using namespace e2e;

namespace {

const std::map<std::string, std::string> kNewcomerKey = {{"DBFORM_STATE_PASSPHRASE", "correct horse battery staple"}};

}  // namespace

TEST_CASE("e2e: newcomer: pg: the planner's role without the key over a sealed state is told of the secrets table "
          "first, then of the key",
          "[pg]") {
  const std::string database_url = pgtest::fresh_database("newcomer_sealed");
  Sandbox sb;
  RoleCheckout owner(sb, "owner", database_url);
  owner.env.insert(kNewcomerKey.begin(), kNewcomerKey.end());
  owner.write_manifest(manifest({}, {service_yaml("orders")}));
  RunResult first = owner.apply();
  INFO(first.describe());
  REQUIRE(first.exit_code == 0);
  dbform::PgConnection admin(database_url);
  const std::string planner = pgtest::unique_name("planner"), applier = pgtest::unique_name("applier");
  grant_roles(admin, planner, applier);
  RoleCheckout pr(sb, "pr", as_role(database_url, planner, "planner-pw"));
  pr.write_manifest(manifest({}, {service_yaml("orders")}));
  const json calls = sb.counts();
  for (const auto& args : std::vector<std::vector<std::string>>{{"output", "orders.password"},
                                                                 {"output", "orders.connection_string"},
                                                                 {"output", "--format", "env"},
                                                                 {"output", "--show-secrets"},
                                                                 {"connect", "orders", "--check"},
                                                                 {"preview", "diff", "pr-7"}}) {
    RunResult r = pr.run(args);
    INFO(dbform::join(args, " ") << "\n" << r.describe());
    CHECK(r.exit_code == 1);
    const size_t table = r.err.find("no access to secrets"), key = r.err.find("DBFORM_STATE_PASSPHRASE");
    REQUIRE(table != std::string::npos);
    CHECK(contains(r.err, "SELECT on dbform_secrets"));
    REQUIRE(key != std::string::npos);
    CHECK(table < key);  // the table first: the key alone would not help this role
    CHECK(!contains(r.err, "needs the state's key:"));
  }
  CHECK(sb.counts() == calls);
  // The applier's role without the key is told of the key alone.
  RoleCheckout main_branch(sb, "main", as_role(database_url, applier, "applier-pw"));
  RunResult keyless = main_branch.run({"output", "orders.password"});
  INFO(keyless.describe());
  CHECK(keyless.exit_code == 1);
  CHECK(contains(keyless.err, "needs the state's key"));
  CHECK(!contains(keyless.err, "no access to secrets"));
}
