// Day two, part 2 (issue 11): deleting what is no longer declared (--prune, guarded by
// deletion_protection), bringing existing databases in (import) and rotating passwords; through
// the real binary against the simulator.
#include <signal.h>

#include "common.h"

using namespace e2e;

namespace {

const std::string kDeleteService = "DELETE /projects/{project_id}/services/{service_id}";
const std::string kDeleteVpc = "DELETE /projects/{project_id}/vpcs/{vpc_id}";
const std::string kUpdatePassword = "POST /projects/{project_id}/services/{service_id}/updatePassword";

bool sim_has(Sandbox& sb, const std::string& name) {
  for (const auto& s : sb.sim().all_services())
    if (s["name"] == name) return true;
  return false;
}

}  // namespace

TEST_CASE("e2e: an orphan is kept without --prune, with it, exactly the orphan is deleted and forgotten") {
  Sandbox sb;
  apply_base(sb);
  sb.write("dbform.yaml", manifest({vpc_yaml("main")}, {service_yaml("orders"), service_yaml("analytics")}));

  RunResult plan = sb.run({"plan"});
  CHECK(contains(plan.out, "1 orphan (--prune would delete 1)"));
  RunResult kept = sb.apply();
  INFO(kept.describe());
  CHECK(kept.exit_code == 0);
  CHECK(sb.count(kDeleteService) == 0);
  CHECK(sim_has(sb, "billing"));

  RunResult pruned_plan = sb.run({"plan", "--prune", "--detailed-exitcode"});
  INFO(pruned_plan.describe());
  CHECK(pruned_plan.exit_code == 2);
  CHECK(contains(pruned_plan.out, "will be DELETED"));
  CHECK(contains(pruned_plan.out, "1 to delete"));
  RunResult md = sb.run({"plan", "--prune", "--format", "markdown"});
  CHECK(contains(md.out, "> [!CAUTION]\n> Applying this plan **deletes 1 resource**"));

  RunResult r = sb.apply({"--prune"});
  INFO(r.describe() << "\ncounts: " << sb.counts().dump());
  REQUIRE(r.exit_code == 0);
  CHECK(contains(r.out, service_address("billing") + ": deleted"));
  CHECK(sb.count(kDeleteService) == 1);
  CHECK_FALSE(sim_has(sb, "billing"));
  CHECK(sim_has(sb, "orders"));
  CHECK_FALSE(find_resource(sb.state(), service_address("billing")).is_object());
  CHECK(sb.run({"plan", "--prune", "--refresh", "--detailed-exitcode"}).exit_code == 0);
}

TEST_CASE("e2e: a protected orphan is refused under --prune and kept, protection is recorded at every apply") {
  Sandbox sb;
  sb.write("dbform.yaml", manifest({}, {service_yaml("orders") + "        deletion_protection: true\n",
                                        service_yaml("billing")}));
  REQUIRE(sb.apply().exit_code == 0);
  CHECK(find_resource(sb.state(), service_address("orders"))["deletion_protection"] == true);

  // Removing the declaration, and its protection with it, does not unprotect it.
  sb.write("dbform.yaml", manifest({}, {service_yaml("billing")}));
  RunResult r = sb.apply({"--prune"});
  INFO(r.describe());
  CHECK(r.exit_code == 1);
  CHECK(contains(r.all(), "protected"));
  CHECK(contains(r.all(), "deletion_protection: false"));
  CHECK(sb.count(kDeleteService) == 0);
  CHECK(sim_has(sb, "orders"));

  // Unprotect it deliberately (a reviewed apply that records false, no API call), then remove it.
  sb.write("dbform.yaml", manifest({}, {service_yaml("orders") + "        deletion_protection: false\n",
                                        service_yaml("billing")}));
  const json writes = writes_of(sb.counts());
  RunResult unprotect = sb.apply();
  INFO(unprotect.describe());
  REQUIRE(unprotect.exit_code == 0);
  CHECK(contains(unprotect.out, "deletion_protection = true -> false"));
  CHECK(writes_of(sb.counts()) == writes);
  CHECK_FALSE(find_resource(sb.state(), service_address("orders")).contains("deletion_protection"));
  sb.write("dbform.yaml", manifest({}, {service_yaml("billing")}));
  REQUIRE(sb.apply({"--prune"}).exit_code == 0);
  CHECK(sb.count(kDeleteService) == 1);
  CHECK_FALSE(sim_has(sb, "orders"));
}

TEST_CASE("e2e: --prune deletes a VPC after the services attached to it, and a saved plan carries --prune") {
  Sandbox sb;
  sb.write("dbform.yaml", manifest({vpc_yaml("main")}, {service_yaml("orders") + "        vpc: main\n",
                                                         service_yaml("billing")}));
  REQUIRE(sb.apply().exit_code == 0);
  sb.write("dbform.yaml", manifest({}, {service_yaml("billing")}));
  RunResult saved = sb.run({"plan", "--prune", "--out", "tfplan"});
  INFO(saved.describe());
  REQUIRE(saved.exit_code == 0);
  CHECK(json::parse(sb.read("tfplan"))["prune"] == true);
  RunResult r = sb.run({"apply", "tfplan", "--poll-interval", "100ms"});
  INFO(r.describe() << "\ncounts: " << sb.counts().dump());
  REQUIRE(r.exit_code == 0);
  CHECK(sb.count(kDeleteService) == 1);
  CHECK(sb.count(kDeleteVpc) == 1);
  CHECK(sb.sim().all_vpcs().empty());
  json state = sb.state();
  CHECK(state["resources"].size() == 1);
}

TEST_CASE("e2e: a prune killed with SIGKILL is finished by the next run, which leaves no record of it") {
  auto config = default_sim_config();
  config.deleting_delay = dbform::Duration(1500);  // long enough to be killed while it waits
  Sandbox sb(config);
  apply_base(sb);
  sb.write("dbform.yaml", manifest({vpc_yaml("main")}, {service_yaml("orders")}));
  auto run = sb.start({"apply", "--auto-approve", "--prune", "--poll-interval", "100ms"});
  // Killed once both deletes were sent: the state still records them, as pending.
  for (int i = 0; i < 200 && sb.count(kDeleteService) < 2; ++i) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  REQUIRE(sb.count(kDeleteService) == 2);
  run->signal(SIGKILL);
  run->wait();
  json state = sb.state();
  CHECK(find_resource(state, service_address("billing")).is_object());

  std::this_thread::sleep_for(std::chrono::milliseconds(1600));  // gone by now: a 404 counts as deleted
  RunResult again = sb.apply({"--prune"});
  INFO(again.describe() << "\ncounts: " << sb.counts().dump());
  REQUIRE(again.exit_code == 0);
  state = sb.state();
  CHECK_FALSE(find_resource(state, service_address("billing")).is_object());
  CHECK_FALSE(find_resource(state, service_address("analytics")).is_object());
  CHECK(state["resources"].size() == 2);
  CHECK(sb.sim().all_services().size() == 1);
  CHECK(sb.count(kPostService) == 3);
}
