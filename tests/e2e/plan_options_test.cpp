// Working the way Terraform users do: a refresh in every plan, --target, show and the
// blast radius of --max-deletes, through the real binary against the simulator.
#include "common.h"

using namespace e2e;

namespace {

const std::string kResizeCall = "POST /projects/{project_id}/services/{service_id}/resize";

// The base manifest with `orders` resized, and `legacy` declared protected (or left out).
std::string with_legacy(bool declared, int orders_cpu = 1000) {
  std::vector<std::string> services = {service_yaml("orders", orders_cpu), service_yaml("billing"),
                                       service_yaml("analytics")};
  if (declared) services.push_back(service_yaml("legacy") + "        deletion_protection: true\n");
  return manifest({vpc_yaml("main")}, services);
}

}  // namespace

TEST_CASE("e2e: plan refreshes first and shows drift, and --no-refresh plans from the state alone without a key") {
  Sandbox sb;
  apply_base(sb);
  const std::string id = find_resource(sb.state(), service_address("orders"))["id"];
  REQUIRE(sb.sim().console(id, "resize", R"({"cpu_millis": 2000, "memory_gbs": 8})").status == 200);

  RunResult plan = sb.run({"plan", "--detailed-exitcode"});
  INFO(plan.describe());
  CHECK(plan.exit_code == 2);
  CHECK(contains(plan.out, "changed outside dbform"));

  sb.env.erase("DBFORM_API_KEY");
  const long long calls = sb.total_requests();
  RunResult keyless = sb.run({"plan"});
  INFO(keyless.describe());
  CHECK(keyless.exit_code == 1);
  CHECK(contains(keyless.err, "`dbform plan --no-refresh` plans from the state alone"));
  RunResult offline = sb.run({"plan", "--no-refresh", "--detailed-exitcode"});
  INFO(offline.describe());
  CHECK(offline.exit_code == 0);  // a plan records nothing: from the state alone the drift is unseen
  CHECK(sb.total_requests() == calls);
}

TEST_CASE("e2e: --target applies one resource's change while a protected orphan blocks the whole plan") {
  Sandbox sb;
  sb.write("dbform.yaml", with_legacy(true));
  REQUIRE(sb.apply().exit_code == 0);
  sb.write("dbform.yaml", with_legacy(false, 2000));

  RunResult blocked = sb.run({"plan", "--prune"});
  INFO(blocked.describe());
  CHECK(blocked.exit_code == 1);
  CHECK(contains(blocked.out, "protected"));

  RunResult partial = sb.run({"plan", "--prune", "--target", "orders", "--detailed-exitcode"});
  INFO(partial.describe());
  CHECK(partial.exit_code == 2);
  CHECK(contains(partial.out, "A partial plan (--target): only " + service_address("orders")));
  CHECK(contains(partial.out, "Plan: 0 to create, 1 to update, 0 to wait for, 0 unchanged."));
  CHECK_FALSE(contains(partial.out, "legacy"));

  RunResult applied = sb.run({"apply", "--prune", "--target", "services/orders", "--auto-approve"});
  INFO(applied.describe());
  REQUIRE(applied.exit_code == 0);
  CHECK(sb.count(kResizeCall) == 1);
  CHECK(sb.count(kDeleteService) == 0);

  RunResult unknown = sb.run({"plan", "--target", "ordres"});
  CHECK(unknown.exit_code == 1);
  CHECK(contains(unknown.err, "--target `ordres`: no resource of that address is declared or recorded (did you mean `orders`?)"));
}

TEST_CASE("e2e: --target takes what the resource needs: a new read replica set brings its new service") {
  Sandbox sb;
  sb.write("dbform.yaml",
           manifest({vpc_yaml("main")}, {service_yaml("orders") + "        vpc: main\n        read_replicas:\n"
                                                                 "          - name: reporting\n            nodes: 1\n"
                                                                 "            cpu_millis: 1000\n            memory_gbs: 4\n",
                                         service_yaml("billing")}));
  RunResult r = sb.run({"apply", "--target", "reporting", "--auto-approve"});
  INFO(r.describe());
  REQUIRE(r.exit_code == 0);
  CHECK(sb.sim().all_vpcs().size() == 1);       // the service's VPC
  CHECK(sb.sim().all_services().size() == 1);   // orders, not billing
  CHECK(sb.sim().all_replica_sets().size() == 1);
  RunResult rest = sb.run({"plan", "--detailed-exitcode"});
  CHECK(rest.exit_code == 2);
  CHECK(contains(rest.out, service_address("billing") + " will be created"));
}

TEST_CASE("e2e: --max-deletes: more deletes than the limit (default 3) delete nothing, and saved plans keep it") {
  Sandbox sb;
  sb.write("dbform.yaml", base_manifest({"search"}));
  REQUIRE(sb.apply().exit_code == 0);
  sb.write("dbform.yaml", manifest({vpc_yaml("main")}, {}));  // a directory that lost its files

  for (const std::vector<std::string>& run : {std::vector<std::string>{"plan", "--prune"},
                                             std::vector<std::string>{"apply", "--prune", "--auto-approve"}}) {
    RunResult r = sb.run(run);
    INFO(r.describe());
    CHECK(r.exit_code == 1);
    CHECK(contains(r.out, "4 conflicts"));
    CHECK(contains(r.out, "the plan's 4 deletes (replacements included) are more than --max-deletes 3 allows"));
    CHECK(contains(r.out, "plan again with --max-deletes 4"));
  }
  CHECK(sb.count(kDeleteService) == 0);

  RunResult saved = sb.run({"plan", "--prune", "--max-deletes", "4", "--out", "prune.plan"});
  INFO(saved.describe());
  REQUIRE(saved.exit_code == 0);
  CHECK(json::parse(sb.read("prune.plan"))["max_deletes"] == 4);
  // A plan file edited to allow fewer than it deletes is refused.
  json edited = json::parse(sb.read("prune.plan"));
  edited["max_deletes"] = 2;
  sb.write("edited.plan", edited.dump());
  RunResult refused = sb.run({"apply", "edited.plan"});
  CHECK(refused.exit_code == 1);
  CHECK(contains(refused.err, "4 conflict(s)"));
  CHECK(sb.count(kDeleteService) == 0);

  RunResult applied = sb.run({"apply", "prune.plan"});
  INFO(applied.describe());
  REQUIRE(applied.exit_code == 0);
  CHECK(sb.count(kDeleteService) == 4);
}

TEST_CASE("e2e: show renders a saved plan in every format without a state or a key") {
  Sandbox sb;
  apply_base(sb);
  sb.write("dbform.yaml", base_manifest({"search"}));
  REQUIRE(sb.run({"plan", "--out", "next.plan"}).exit_code == 0);
  RunResult json_plan = sb.run({"plan", "--no-refresh", "--format", "json"});
  fs::rename(sb.dir() / "dbform.state.json", sb.dir() / "elsewhere.json");
  sb.env.erase("DBFORM_API_KEY");
  const long long calls = sb.total_requests();

  RunResult text = sb.run({"show", "next.plan"});
  INFO(text.describe());
  CHECK(text.exit_code == 0);
  CHECK(contains(text.out, service_address("search") + " will be created"));
  RunResult doc = sb.run({"show", "next.plan", "--format", "json"});
  REQUIRE(doc.exit_code == 0);
  json shown = json::parse(doc.out), planned = json::parse(json_plan.out);
  CHECK(shown["actions"] == planned["actions"]);
  CHECK(shown["summary"] == planned["summary"]);
  RunResult md = sb.run({"show", "next.plan", "--format", "markdown"});
  CHECK(contains(md.out, "### dbform plan: 1 to create"));
  CHECK(sb.total_requests() == calls);
  RunResult missing = sb.run({"show", "nosuch.plan"});
  CHECK(missing.exit_code == 1);
  CHECK(contains(missing.err, "there is no plan file nosuch.plan"));
}

TEST_CASE("e2e: a shell glob after -f is explained, and --no-color is accepted by every command") {
  Sandbox sb;
  sb.write("manifests/a.yaml", manifest({}, {service_yaml("orders")}));
  sb.write("manifests/b.yaml", "version: 1\nprojects: []\n");
  RunResult r = sb.run_shell("\"$DBFORM\" plan -f manifests/*.yaml");
  INFO(r.describe());
  CHECK(r.exit_code == 1);
  CHECK(contains(r.err, "`manifests/b.yaml` was not expected: -f takes one path each time"));
  CHECK(contains(r.err, "name the directory instead: `-f manifests/`"));
  CHECK(sb.total_requests() == 0);

  for (const std::vector<std::string>& args :
       {std::vector<std::string>{"validate", "-f", "manifests", "--no-color"}, {"state", "list", "--no-color"},
        {"output", "--no-color"}, {"whoami", "--no-color", "-f", "manifests"}, {"version", "--no-color"},
        {"--no-color", "state", "list"}}) {
    RunResult ok = sb.run(args);
    INFO(ok.describe());
    CHECK(ok.exit_code == 0);
  }
}

TEST_CASE("e2e: plan and apply count resources alike: one service changed by two calls is 1 to update and 1 updated") {
  Sandbox sb;
  apply_base(sb);
  sb.write("dbform.yaml", manifest({vpc_yaml("main")}, {service_yaml("orders", 2000) + "        environment_tag: PROD\n",
                                                         service_yaml("billing"), service_yaml("analytics")}));
  RunResult plan = sb.run({"plan"});
  CHECK(contains(plan.out, "Plan: 0 to create, 1 to update"));
  RunResult r = sb.apply();
  INFO(r.describe());
  REQUIRE(r.exit_code == 0);
  CHECK(sb.count(kResizeCall) == 1);
  CHECK(contains(r.out, "Apply complete: 0 created, 1 updated,"));
  // Elapsed times say what they count from.
  CHECK(contains(r.out, service_address("orders") + ": ready ["));
  CHECK(contains(r.out, " since its first call]"));
}

namespace {

// The first backticked `dbform ...` in `text` that starts with `prefix`, without the backticks.
std::string suggestion(const std::string& text, const std::string& prefix) {
  const auto at = text.find("`dbform " + prefix);
  if (at == std::string::npos) return "";
  return text.substr(at + 1, text.find('`', at + 1) - at - 1);
}

}  // namespace

TEST_CASE("e2e: the commands dbform suggests carry the -f and --state of the run, and work when pasted") {
  Sandbox sb;
  const std::vector<std::string> where = {"-f", "team manifests/", "--state", "team state.json"};
  auto run = [&](std::vector<std::string> args) {
    args.insert(args.end(), where.begin(), where.end());
    return sb.run(args);
  };
  sb.write("team manifests/db.yaml", manifest({}, {service_yaml("orders"), service_yaml("billing")}));
  REQUIRE(run({"apply", "--auto-approve"}).exit_code == 0);

  // An orphan's way out: `dbform state rm ...`, on the same state.
  sb.write("team manifests/db.yaml", manifest({}, {service_yaml("orders")}));
  RunResult plan = run({"plan"});
  const std::string rm = suggestion(plan.out, "state rm");
  INFO(plan.describe());
  CHECK(rm == "dbform state rm " + service_address("billing") + " --state 'team state.json'");
  RunResult pasted = sb.run_shell(std::regex_replace(rm, std::regex("^dbform"), "\"$DBFORM\""));
  INFO(pasted.describe());
  CHECK(pasted.exit_code == 0);
  CHECK(find_resource(sb.state("team state.json"), service_address("billing")).is_null());

  // Declared again, it has a namesake now: `dbform import ...`, with the manifests and the state.
  sb.write("team manifests/db.yaml", manifest({}, {service_yaml("orders"), service_yaml("billing")}));
  RunResult conflict = run({"plan"});
  const std::string import = suggestion(conflict.out, "import");
  INFO(conflict.describe());
  CHECK(contains(import, " -f 'team manifests/' --state 'team state.json'"));
  RunResult imported = sb.run_shell(std::regex_replace(import, std::regex("^dbform"), "\"$DBFORM\""));
  INFO(imported.describe());
  CHECK(imported.exit_code == 0);
  CHECK(run({"plan", "--detailed-exitcode"}).exit_code == 0);
}

TEST_CASE("e2e: a new service declared without a pooler is created without a disablePooler call") {
  Sandbox sb;
  sb.write("dbform.yaml", manifest({}, {service_yaml("orders") + "        connection_pooler: false\n"}));
  RunResult r = sb.apply();
  INFO(r.describe() << "\ncounts: " << sb.counts().dump());
  REQUIRE(r.exit_code == 0);
  CHECK(sb.count("POST /projects/{project_id}/services/{service_id}/disablePooler") == 0);
  RunResult plan = sb.run({"plan", "--detailed-exitcode"});
  INFO(plan.describe());
  CHECK(plan.exit_code == 0);
}
