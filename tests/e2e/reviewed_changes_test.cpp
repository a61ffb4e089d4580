// Changes a pull request can review: `import_id` imports an existing resource
// through the plan (recorded by apply), `removed:` forgets a record and leaves the resource alone,
// a `renamed_from` naming nothing recorded is refused, and `state mv` says what else it needs.
#include "common.h"

using namespace e2e;

namespace {

std::string with_import(const std::string& service_yaml_text, const std::string& id) {
  return service_yaml_text + "        import_id: " + id + "\n";
}

// The manifest of the base project with `extra` appended to the project (e.g. a `removed:` list).
std::string base_with(const std::vector<std::string>& services, const std::string& extra) {
  std::vector<std::string> blocks;
  for (const auto& s : services) blocks.push_back(service_yaml(s));
  return manifest({vpc_yaml("main")}, blocks) + extra;
}

// A plan with one of each reviewed change: `legacy` (made in the console at another size) is
// imported and resized, `search` created, `analytics` resized, `billing` forgotten, and a `removed:`
// entry names an address never recorded. The VPC and `orders` are unchanged.
void plan_every_reviewed_change(Sandbox& sb) {
  apply_base(sb);
  const std::string id = console_service(sb, {{"name", "legacy"}, {"cpu_millis", "2000"}, {"memory_gbs", "8"},
                                              {"region_code", "us-east-1"}});
  sb.write("dbform.yaml", manifest({vpc_yaml("main")}, {service_yaml("orders"), service_yaml("analytics", 2000, 8),
                                                        with_import(service_yaml("legacy"), id), service_yaml("search")}) +
                              "    removed:\n      - services/billing\n      - services/never-recorded\n");
}

}  // namespace

// A reviewer skimming the comment must see the imports and the forgets the text plan shows.
TEST_CASE("e2e: the markdown plan's heading and counts table show imports and forgets") {
  Sandbox sb;
  plan_every_reviewed_change(sb);
  RunResult text = sb.run({"plan"});
  INFO(text.describe());
  REQUIRE(text.exit_code == 0);
  CHECK(contains(text.out, "Plan: 1 to import, 1 to create, 2 to update"));
  CHECK(contains(text.out, ", 1 to forget"));
  RunResult md = sb.run({"plan", "--format", "markdown"});
  INFO(md.describe());
  REQUIRE(md.exit_code == 0);
  CHECK(contains(md.out, "<!-- dbform-plan -->\n### dbform plan: 1 to import, 1 to create, 2 to update, 1 to forget\n"));
  CHECK(contains(md.out, "| to import | to create | to update | to delete | to replace | to wait for | to adopt | "
                         "to forget | unchanged | conflicts | orphans |\n"));
  CHECK(contains(md.out, "| 1 | 1 | 2 | 0 | 0 | 0 | 0 | 1 | 2 | 0 | 0 |\n"));
}

// `removed:` naming an address the state does not record (never recorded, or forgotten by an
// earlier apply) is not a resource: neither unchanged nor a forget, but said as what it is.
TEST_CASE("e2e: a removed: entry not recorded is counted as nothing to forget, not as unchanged") {
  Sandbox sb;
  plan_every_reviewed_change(sb);
  RunResult text = sb.run({"plan", "--detailed-exitcode"});
  INFO(text.describe());
  CHECK(text.exit_code == 2);
  // Two resources unchanged (the VPC and orders), one entry with nothing to forget.
  CHECK(contains(text.out, "0 to wait for, 2 unchanged, 1 to forget, 1 `removed:` entry not recorded (nothing to forget)."));
  CHECK(contains(text.out, "  # " + service_address("never-recorded") +
                               ": listed under `removed:` and not recorded: nothing to forget\n"));
  CHECK(!contains(text.out, service_address("never-recorded") + " is unchanged"));
  RunResult doc = sb.run({"plan", "--format", "json"});
  const json summary = json::parse(doc.out)["summary"];
  CHECK(summary["no_op"] == 2);
  CHECK(summary["nothing_to_forget"] == 1);
  CHECK(summary["forget"] == 1);
  RunResult md = sb.run({"plan", "--format", "markdown"});
  CHECK(contains(md.out, "#### Project `" + kProject + "`: 4 actions, 2 unchanged\n"));
  CHECK(contains(md.out, "| `never-recorded` | service | nothing to forget |"));

  // Once applied, the entry left in the manifest is all there is: no change, still said.
  REQUIRE(sb.apply().exit_code == 0);
  RunResult after = sb.run({"plan", "--detailed-exitcode"});
  INFO(after.describe());
  CHECK(after.exit_code == 0);
  CHECK(contains(after.out, "5 unchanged, 2 `removed:` entries not recorded (nothing to forget)."));
}

TEST_CASE("e2e: import_id: the plan shows the import and its updates, apply records it and makes them, once") {
  Sandbox sb;
  apply_base(sb);
  const std::string id = console_service(sb, {{"name", "legacy"}, {"cpu_millis", "2000"}, {"memory_gbs", "8"},
                                              {"region_code", "us-east-1"}});
  sb.write("dbform.yaml", manifest({vpc_yaml("main")}, {service_yaml("orders"), service_yaml("billing"),
                                                        service_yaml("analytics"), with_import(service_yaml("legacy"), id)}));
  const std::string state_before = sb.read("dbform.state.json");

  RunResult plan = sb.run({"plan", "--detailed-exitcode"});
  INFO(plan.describe());
  CHECK(plan.exit_code == 2);
  CHECK(contains(plan.out, service_address("legacy") + " will be imported (id " + id + ")"));
  CHECK(contains(plan.out, R"(resize {"cpu_millis":"1000","memory_gbs":"4"})"));
  CHECK(contains(plan.out, "Plan: 1 to import, 0 to create, 1 to update"));
  CHECK(sb.read("dbform.state.json") == state_before);  // a plan records nothing
  RunResult json_plan = sb.run({"plan", "--format", "json"});
  CHECK(json::parse(json_plan.out)["summary"]["import"] == 1);

  RunResult applied = sb.apply();
  INFO(applied.describe());
  CHECK(applied.exit_code == 0);
  CHECK(contains(applied.out, service_address("legacy") + ": imported " + id));
  CHECK(sb.count(kPostService) == 3);  // the base's three: no create for an import
  CHECK(sb.count("POST /projects/{project_id}/services/{service_id}/resize") == 1);
  const json rec = find_resource(sb.state(), service_address("legacy"));
  CHECK(rec["id"] == id);
  CHECK(rec["settings"]["cpu_millis"] == "1000");

  // Recorded: the line is history, and the next plan has nothing to do.
  RunResult again = sb.run({"plan", "--detailed-exitcode"});
  INFO(again.describe());
  CHECK(again.exit_code == 0);
}

TEST_CASE("e2e: import_id: a VPC and a read replica set of an imported service come in together") {
  Sandbox sb;
  dbform::SimResponse vpc = sb.sim().console_create(kProject, "vpcs", R"({"name":"net","cidr":"10.5.0.0/16","region_code":"us-east-1"})");
  REQUIRE(vpc.status == 201);
  const std::string vpc_id = json::parse(vpc.body)["id"];
  const std::string id = console_service(sb, {{"name", "orders"}, {"cpu_millis", "1000"}, {"memory_gbs", "4"},
                                              {"region_code", "us-east-1"}});
  dbform::SimResponse set = sb.sim().handle({"POST", "/projects/" + kProject + "/services/" + id + "/replicaSets",
                                             "Bearer " + kKey,
                                             R"({"name":"reporting","nodes":1,"cpu_millis":1000,"memory_gbs":4})"});
  REQUIRE(set.status / 100 == 2);
  const std::string set_id = json::parse(set.body)["id"];
  sb.write("dbform.yaml", "version: 1\nprojects:\n  - id: " + kProject +
                              "\n    vpcs:\n      - name: net\n        cidr: 10.5.0.0/16\n        region_code: us-east-1\n"
                              "        import_id: \"" + vpc_id + "\"\n    services:\n" +
                              with_import(service_yaml("orders"), id) +
                              "        read_replicas:\n          - name: reporting\n            nodes: 1\n"
                              "            cpu_millis: 1000\n            memory_gbs: 4\n            import_id: " + set_id + "\n");
  const json writes = writes_of(sb.counts());  // those made outside
  RunResult plan = sb.run({"plan", "--detailed-exitcode"});
  INFO(plan.describe());
  CHECK(plan.exit_code == 2);
  CHECK(contains(plan.out, "Plan: 3 to import, 0 to create, 0 to update"));
  RunResult applied = sb.apply();
  INFO(applied.describe());
  CHECK(applied.exit_code == 0);
  CHECK(writes_of(sb.counts()) == writes);  // the API was only read
  CHECK(find_resource(sb.state(), service_address("orders") + "/replicas/reporting")["id"] == set_id);
  CHECK(find_resource(sb.state(), vpc_address("net"))["id"] == vpc_id);
  CHECK(sb.run({"plan", "--detailed-exitcode"}).exit_code == 0);
}

TEST_CASE("e2e: import_id that names nothing, another kind or another name, or without a refresh, is a conflict") {
  Sandbox sb;
  apply_base(sb);
  const std::string other = console_service(sb, {{"name", "someone-else"}});
  const json writes = writes_of(sb.counts());
  const std::string state_before = sb.read("dbform.state.json");
  struct Case {
    std::string id, why;
  };
  for (const Case& c : {Case{"nosuchid1", "has no service with id nosuchid1"},
                        Case{other, "is named `someone-else`, not `legacy`"},
                        Case{find_resource(sb.state(), service_address("orders"))["id"], "is recorded already, as " + service_address("orders")}}) {
    sb.write("dbform.yaml", manifest({vpc_yaml("main")}, {service_yaml("orders"), service_yaml("billing"),
                                                          service_yaml("analytics"), with_import(service_yaml("legacy"), c.id)}));
    RunResult plan = sb.run({"plan"});
    INFO(plan.describe());
    CHECK(plan.exit_code == 1);
    CHECK(contains(plan.out, "`import_id: " + c.id + "` cannot be imported: "));
    CHECK(contains(plan.out, c.why));
    RunResult applied = sb.apply();
    CHECK(applied.exit_code == 1);
  }
  RunResult offline = sb.run({"plan", "--no-refresh"});
  CHECK(offline.exit_code == 1);
  CHECK(contains(offline.out, "this plan has no reading of it (made with --no-refresh)"));
  CHECK(writes_of(sb.counts()) == writes);
  CHECK(sb.read("dbform.state.json") == state_before);
  CHECK(sb.sim().all_services().size() == 4);
}

TEST_CASE("e2e: removed: forgets the record with apply, calls nothing, and leaves the resource in the API") {
  Sandbox sb;
  apply_base(sb);
  const std::string id = find_resource(sb.state(), service_address("billing"))["id"];
  sb.write("dbform.yaml", base_with({"orders", "analytics"}, "    removed:\n      - services/billing\n      - " + kProject +
                                                                "/services/never-recorded\n"));
  RunResult plan = sb.run({"plan", "--prune", "--detailed-exitcode"});
  INFO(plan.describe());
  CHECK(plan.exit_code == 2);
  CHECK(contains(plan.out, service_address("billing") + " (id " + id + ") will be forgotten"));
  CHECK(contains(plan.out, "nothing to forget"));
  CHECK(contains(plan.out, "1 to forget"));
  CHECK(!contains(plan.out, "DELETED"));

  const json writes = writes_of(sb.counts());
  RunResult applied = sb.apply({"--prune"});
  INFO(applied.describe());
  CHECK(applied.exit_code == 0);
  CHECK(contains(applied.out, service_address("billing") + ": forgotten by the state"));
  CHECK(writes_of(sb.counts()) == writes);  // no call at all: not a delete
  CHECK(find_resource(sb.state(), service_address("billing")).is_null());
  bool still_there = false;
  for (const auto& s : sb.sim().all_services()) still_there = still_there || s["service_id"] == id;
  CHECK(still_there);
  CHECK(sb.run({"plan", "--prune", "--detailed-exitcode"}).exit_code == 0);
}

TEST_CASE("e2e: removed: an address both declared and removed, or not an address, is an error before anything") {
  Sandbox sb;
  sb.write("dbform.yaml", base_with({"orders"}, "    removed:\n      - services/orders\n      - databases/x\n"));
  RunResult r = sb.run({"validate"});
  INFO(r.describe());
  CHECK(r.exit_code == 1);
  CHECK(contains(r.err, "`" + service_address("orders") + "` is listed under `removed:` and declared at dbform.yaml:"));
  CHECK(contains(r.err, "`databases/x` is not an address of the project"));
  CHECK(sb.total_requests() == 0);
}

TEST_CASE("e2e: a renamed_from naming nothing recorded is refused, never a create beside an orphan that --prune deletes") {
  Sandbox sb;
  sb.write("dbform.yaml", manifest({}, {service_yaml("telemetry")}));
  REQUIRE(sb.apply().exit_code == 0);
  // Renamed telemetry -> metrics, but the line of an earlier rename was left.
  sb.write("dbform.yaml", manifest({}, {service_yaml("metrics") + "        renamed_from: events\n"}));
  CHECK(sb.run({"validate"}).exit_code == 0);  // no state there: the plan is where it shows
  const json writes = writes_of(sb.counts());
  RunResult plan = sb.run({"plan", "--prune"});
  INFO(plan.describe());
  CHECK(plan.exit_code == 1);
  CHECK(contains(plan.out, "`renamed_from: events` is not recorded"));
  CHECK(contains(plan.out, "recorded services: telemetry"));
  RunResult applied = sb.apply({"--prune"});
  CHECK(applied.exit_code == 1);
  CHECK(writes_of(sb.counts()) == writes);
  CHECK(sb.sim().all_services().size() == 1);
}

TEST_CASE("e2e: state mv says the manifests must declare the new name, and the conflict it leaves says how out") {
  Sandbox sb;
  sb.write("dbform.yaml", manifest({}, {service_yaml("orders-db")}));
  REQUIRE(sb.apply().exit_code == 0);
  RunResult mv = sb.run({"state", "mv", service_address("orders-db"), "orders"});
  INFO(mv.describe());
  REQUIRE(mv.exit_code == 0);
  CHECK(contains(mv.out, "once the manifests declare `orders`"));
  CHECK(contains(mv.out, "`renamed_from: orders-db`"));
  // The manifests still declare orders-db: a conflict whose advice works (no import of a recorded id).
  RunResult plan = sb.run({"plan"});
  INFO(plan.describe());
  CHECK(plan.exit_code == 1);
  CHECK(contains(plan.out, "is recorded as " + service_address("orders")));
  CHECK(!contains(plan.out, "dbform import"));
  sb.write("dbform.yaml", manifest({}, {service_yaml("orders")}));
  RunResult renamed = sb.apply();
  INFO(renamed.describe());
  CHECK(renamed.exit_code == 0);
  CHECK(sb.count("POST /projects/{project_id}/services/{service_id}/rename") == 1);
  CHECK(sb.count(kPostService) == 1);
}
