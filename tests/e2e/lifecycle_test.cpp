// Deleting what is no longer declared (--prune, guarded by
// deletion_protection), bringing existing databases in (import) and rotating passwords; through
// the real binary against the simulator.
#include <signal.h>

#include "common.h"

using namespace e2e;

namespace {

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

TEST_CASE("e2e: --prune deletes VPCs after the services attached to them, and a saved plan carries --prune") {
  Sandbox sb;
  sb.write("dbform.yaml", manifest({vpc_yaml("main"), vpc_yaml("edge", "10.1.0.0/16")},
                                   {service_yaml("orders") + "        vpc: main\n", service_yaml("billing")}));
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
  CHECK(sb.count(kDeleteVpc) == 2);  // two VPCs of one project: neither waits for the other
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
  REQUIRE(eventually([&] { return sb.count(kDeleteService) == 2; }, std::chrono::seconds(30)));
  run->signal(SIGKILL);
  run->wait();
  json state = sb.state();
  CHECK(find_resource(state, service_address("billing")).is_object());

  // Once the simulator has finished both deletes, the next run finds them gone: a 404 counts as
  // deleted.
  REQUIRE(eventually([&] { return sb.sim().all_services().size() == 1; }, std::chrono::seconds(30)));
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

TEST_CASE("e2e: import brings an existing service in: the next apply creates only what is new and leaves it be") {
  Sandbox sb;
  const std::string id = console_service(sb, {{"name", "orders"}, {"cpu_millis", "1000"}, {"memory_gbs", "4"},
                                              {"region_code", "us-east-1"}});
  sb.write("dbform.yaml", manifest({}, {service_yaml("orders"), service_yaml("billing")}));
  // Declared but not recorded: a conflict naming the existing id, never a second create.
  RunResult before = sb.run({"plan", "--refresh"});
  CHECK(before.exit_code == 1);
  CHECK(contains(before.out, "dbform import " + service_address("orders") + " " + id));

  RunResult imported = sb.run({"import", "orders", id});
  INFO(imported.describe());
  REQUIRE(imported.exit_code == 0);
  CHECK(contains(imported.out, "Imported " + service_address("orders")));
  CHECK(contains(imported.out, "rotate-password"));
  json rec = find_resource(sb.state(), service_address("orders"));
  CHECK(rec["id"] == id);
  CHECK(rec["status"] == "READY");
  CHECK(rec["initial_password"] == "");

  RunResult r = sb.apply();
  INFO(r.describe() << "\ncounts: " << sb.counts().dump());
  REQUIRE(r.exit_code == 0);
  CHECK(contains(r.out, "Plan: 1 to create, 0 to update"));
  CHECK(sb.count(kPostService) == 1);  // billing; the console's create was no API call
  CHECK(writes_of(sb.counts()) == json{{kPostService, 1}});
  CHECK(sb.run({"plan", "--refresh", "--detailed-exitcode"}).exit_code == 0);
}

TEST_CASE("e2e: an import that cannot be done is refused and leaves the state byte for byte") {
  Sandbox sb;
  apply_base(sb);
  const std::string before = sb.read("dbform.state.json");
  const std::string orders_id = find_resource(sb.state(), service_address("orders"))["id"];
  sb.write("dbform.yaml", base_manifest({"reports"}));
  struct Case {
    std::vector<std::string> args;
    std::string says;
  };
  for (const auto& c : std::vector<Case>{{{"import", "reports", "nosuchid00"}, "has no service with id nosuchid00"},
                                         {{"import", "orders", orders_id}, "is recorded already"},
                                         {{"import", "reports", orders_id}, "recorded already, as"},
                                         {{"import", "nosuch", "x"}, "is not declared in the manifests"}}) {
    RunResult r = sb.run(c.args);
    INFO(r.describe());
    CHECK(r.exit_code == 1);
    CHECK(contains(r.err, c.says));
  }
  CHECK(sb.read("dbform.state.json") == before);
}

TEST_CASE("e2e: import --project --generate writes a valid manifest of what exists, and the plan is clean") {
  Sandbox sb;
  dbform::SimResponse vpc = sb.sim().console_create(kProject, "vpcs", R"({"name":"net","cidr":"10.5.0.0/16","region_code":"us-east-1"})");
  REQUIRE(vpc.status == 201);
  const std::string vpc_id = json::parse(vpc.body)["id"];
  console_service(sb, {{"name", "orders"}, {"addons", {"time-series"}}, {"cpu_millis", "2000"}, {"memory_gbs", "8"},
                       {"environment_tag", "PROD"}, {"replica_count", 1}});
  const std::string attached = console_service(sb, {{"name", "billing"}});
  REQUIRE(sb.sim().console(attached, "attachToVPC", json{{"vpc_id", vpc_id}}.dump()).status == 200);
  REQUIRE(sb.sim().console(attached, "enablePooler", "").status == 200);
  console_service(sb, {{"name", "reports"}, {"memory_gbs", "2"}});

  RunResult r = sb.run({"import", "--project", kProject, "--generate", "imported.yaml"});
  INFO(r.describe());
  REQUIRE(r.exit_code == 0);
  const std::string yaml = sb.read("imported.yaml");
  INFO(yaml);
  CHECK(contains(yaml, "vpc: net"));
  CHECK(contains(yaml, "addons: [time-series]"));
  CHECK(contains(yaml, "connection_pooler: true"));
  CHECK(sb.run({"validate", "-f", "imported.yaml"}).exit_code == 0);
  CHECK(!sb.exists("dbform.state.json"));  // recorded nothing: apply records what the plan imports
  apply_generated(sb, "imported.yaml", 4);
  CHECK(sb.state()["resources"].size() == 4);
  CHECK(writes_of(sb.counts()).empty());  // nothing was changed in the API

  RunResult again = sb.run({"import", "--project", kProject, "--generate", "imported.yaml"});
  CHECK(again.exit_code == 1);
  CHECK(contains(again.err, "exists"));
}

TEST_CASE("e2e: rotate-password sends one updatePassword, records the new password and never prints it") {
  Sandbox sb;
  apply_base(sb);
  const json before = find_resource(sb.state(), service_address("orders"));
  RunResult r = sb.run({"rotate-password", "orders"});
  INFO(r.describe());
  REQUIRE(r.exit_code == 0);
  CHECK(sb.count(kUpdatePassword) == 1);
  const json after = find_resource(sb.state(), service_address("orders"));
  const std::string password = after["initial_password"];
  CHECK(password.size() >= 32);
  CHECK(password != before["initial_password"]);
  CHECK(password == sb.sim().current_password(after["id"]));
  CHECK_FALSE(after.contains("pending_password"));
  CHECK_FALSE(contains(r.all(), password));
  RunResult shown = sb.run({"output", "orders.password"});
  CHECK(shown.out == password + "\n");

  RunResult given = sb.run_shell("printf 'chosen-by-a-person-123\\n' | \"$DBFORM\" rotate-password orders --password-stdin");
  INFO(given.describe());
  REQUIRE(given.exit_code == 0);
  CHECK(sb.sim().current_password(after["id"]) == "chosen-by-a-person-123");
  CHECK_FALSE(contains(given.all(), "chosen-by-a-person-123"));
  RunResult empty = sb.run_shell("printf '' | \"$DBFORM\" rotate-password orders --password-stdin");
  CHECK(empty.exit_code == 1);
  CHECK(sb.count(kUpdatePassword) == 2);
}

TEST_CASE("e2e: deletes wait for the rest of the apply, and none is made when any of it failed") {
  auto config = default_sim_config();
  config.faults.stuck = {"newdb"};
  Sandbox sb(config);
  sb.write("dbform.yaml", manifest({}, {service_yaml("olddb")}));
  REQUIRE(sb.apply().exit_code == 0);
  // A "rename": the new database never comes up, so the old one must stay.
  sb.write("dbform.yaml", manifest({}, {service_yaml("newdb")}));
  RunResult r = sb.apply({"--prune", "--wait-timeout", "2s"});
  INFO(r.describe() << "\ncounts: " << sb.counts().dump());
  CHECK(r.exit_code == 1);
  CHECK(contains(r.err, service_address("olddb") + ": not deleted: other changes of this apply failed"));
  CHECK(sb.count(kDeleteService) == 0);
  CHECK(sim_has(sb, "olddb"));
  CHECK(find_resource(sb.state(), service_address("olddb")).is_object());
}

TEST_CASE("e2e: import refuses an address no manifest declares, which --prune would delete") {
  Sandbox sb;
  const std::string id = console_service(sb, {{"name", "prod"}});
  sb.write("dbform.yaml", manifest({}, {service_yaml("newone")}));
  RunResult r = sb.run({"import", service_address("prod"), id});
  INFO(r.describe());
  CHECK(r.exit_code == 1);
  CHECK(contains(r.err, "is not declared in the manifests"));
  CHECK_FALSE(sb.exists("dbform.state.json"));
}

TEST_CASE("e2e: a generated manifest quotes names YAML would read as numbers or booleans") {
  Sandbox sb;
  console_service(sb, {{"name", "123"}});
  console_service(sb, {{"name", "true"}, {"memory_gbs", "0.5"}});
  RunResult r = sb.run({"import", "--project", kProject, "--generate", "odd.yaml"});
  INFO(r.describe());
  REQUIRE(r.exit_code == 0);
  INFO(sb.read("odd.yaml"));
  CHECK(contains(sb.read("odd.yaml"), "- name: \"123\""));
  CHECK(sb.run({"validate", "-f", "odd.yaml"}).exit_code == 0);
  apply_generated(sb, "odd.yaml", 2);
}
