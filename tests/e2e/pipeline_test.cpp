// Saved plans: `plan --out FILE` then `apply FILE`, and every way a saved plan goes stale.
#include "common.h"

using namespace e2e;

namespace {

// Runs `plan --out tfplan` (plus `more`) and requires that the plan was saved.
void save_plan(Sandbox& sb, const std::vector<std::string>& more = {}, const std::map<std::string, std::string>& env = {}) {
  std::vector<std::string> args = {"plan", "--out", "tfplan"};
  args.insert(args.end(), more.begin(), more.end());
  RunResult r = sb.run(args, env);
  INFO(r.describe());
  REQUIRE(r.exit_code == 0);
  REQUIRE(sb.exists("tfplan"));
  CHECK(contains(r.all(), "dbform apply tfplan"));
}

// `apply tfplan` must be refused with `why` in the message, without a single API call and without
// touching the state. With `refreshed`, the refusal comes from apply's own refresh (the plan was
// made from one), so its reads are allowed, and nothing else.
void require_refused(Sandbox& sb, const std::string& why, const std::vector<std::string>& more = {},
                     const std::map<std::string, std::string>& env = {}, bool refreshed = false) {
  const long long calls = sb.total_requests();
  const json writes = writes_of(sb.counts());
  const std::string state = sb.exists("dbform.state.json") ? sb.read("dbform.state.json") : "";
  std::vector<std::string> args = {"apply", "tfplan"};
  args.insert(args.end(), more.begin(), more.end());
  RunResult r = sb.run(args, env);
  INFO(r.describe());
  CHECK(r.exit_code == 1);
  CHECK(contains(r.err, why));
  if (!refreshed) CHECK(sb.total_requests() == calls);
  CHECK(writes_of(sb.counts()) == writes);
  CHECK((sb.exists("dbform.state.json") ? sb.read("dbform.state.json") : "") == state);
}

}  // namespace

TEST_CASE("e2e: apply PLANFILE applies exactly the saved plan without asking, and only once") {
  Sandbox sb;
  sb.write("dbform.yaml", base_manifest());
  save_plan(sb, {"--no-refresh"});
  CHECK(sb.total_requests() == 0);  // --no-refresh: planned from the state alone, with no API call

  RunResult r = sb.run({"apply", "tfplan", "--poll-interval", "100ms"});  // no terminal, no --auto-approve
  INFO(r.describe());
  REQUIRE(r.exit_code == 0);
  CHECK(contains(r.out, "Applying the saved plan tfplan"));
  CHECK(!contains(r.out, "Do you want to apply"));
  CHECK(sb.count(kPostService) == 3);
  CHECK(sb.count(kPostVpc) == 1);
  for (const auto& name : kServices) CHECK(find_resource(sb.state(), service_address(name))["status"] == "READY");

  // The state moved on: the same plan is stale now, and a new one has nothing to do.
  require_refused(sb, "a state was created after the plan was made");
  save_plan(sb, {"--detailed-exitcode"});
  RunResult again = sb.run({"apply", "tfplan"});
  INFO(again.describe());
  CHECK(again.exit_code == 0);
  CHECK(contains(again.out, "No changes"));
  CHECK(sb.count(kPostService) == 3);
}

TEST_CASE("e2e: a saved plan is refused when another apply moved the state's serial") {
  Sandbox sb;
  apply_base(sb);
  sb.write("dbform.yaml", base_manifest({"search"}));
  save_plan(sb);
  sb.write("other.yaml", manifest({}, {service_yaml("reports")}, kProject));
  RunResult other = sb.apply({"-f", "dbform.yaml", "-f", "other.yaml"});
  REQUIRE(other.exit_code == 0);
  const long long serial = sb.state()["serial"];
  require_refused(sb, "the state has changed since the plan was made");
  RunResult r = sb.run({"apply", "tfplan"});
  CHECK(contains(r.err, std::to_string(serial) + " now"));
  CHECK(contains(r.err, "Run `dbform plan --out tfplan` again"));
  CHECK(contains(r.err, "nothing was changed"));
}

TEST_CASE("e2e: a saved plan is refused when its manifests changed, were added or removed") {
  Sandbox sb;
  sb.write("manifests/a.yaml", manifest({vpc_yaml("main")}, {service_yaml("orders")}));
  save_plan(sb, {"-f", "manifests"});

  sb.write("manifests/a.yaml", manifest({vpc_yaml("main")}, {service_yaml("orders", 2000)}));
  require_refused(sb, "the manifests have changed since the plan was made (manifests/a.yaml)");

  sb.write("manifests/a.yaml", manifest({vpc_yaml("main")}, {service_yaml("orders")}));
  sb.write("manifests/b.yaml", manifest({}, {service_yaml("billing")}));
  require_refused(sb, "added: manifests/b.yaml");

  fs::remove(sb.dir() / "manifests/b.yaml");
  RunResult r = sb.run({"apply", "tfplan", "--poll-interval", "100ms"});  // as it was: it applies
  INFO(r.describe());
  CHECK(r.exit_code == 0);
  CHECK(sb.count(kPostService) == 1);
}

TEST_CASE("e2e: a saved plan is refused against another state, or when ${VAR} reads differently") {
  Sandbox sb;
  apply_base(sb);
  sb.write("vars.yaml", manifest({}, {"      - name: tenant\n        cpu_millis: ${CPU}\n"}));
  save_plan(sb, {"-f", "dbform.yaml", "-f", "vars.yaml"}, {{"DBFORM_VAR_CPU", "1000"}});

  require_refused(sb, "read differently", {}, {{"DBFORM_VAR_CPU", "2000"}}, true);
  RunResult r = sb.run({"apply", "tfplan"}, {{"DBFORM_VAR_CPU", "2000"}});
  CHECK(contains(r.err, service_address("tenant")));

  RunResult fresh = sb.apply({"--state", "new.json", "-f", "vars.yaml"}, {{"DBFORM_VAR_CPU", "1000"}});
  REQUIRE(fresh.exit_code == 0);
  require_refused(sb, "the plan was made against another state", {"--state", "new.json"}, {{"DBFORM_VAR_CPU", "1000"}});
  require_refused(sb, "there is no state now", {"--state", "missing.json"}, {{"DBFORM_VAR_CPU", "1000"}});
}

TEST_CASE("e2e: plans with conflicts are not saved, and saved plans are refused when damaged or mixed with -f") {
  Sandbox sb;
  apply_base(sb);
  sb.write("dbform.yaml", manifest({vpc_yaml("main")}, {moved_service_yaml("orders"), service_yaml("billing"),
                                                         service_yaml("analytics")}));
  RunResult conflict = sb.run({"plan", "--out", "tfplan"});
  INFO(conflict.describe());
  CHECK(conflict.exit_code == 1);
  CHECK(contains(conflict.err, "not saved"));
  CHECK(!sb.exists("tfplan"));

  sb.write("dbform.yaml", base_manifest());
  save_plan(sb);
  require_refused(sb, "apply tfplan without -f, or make a new plan", {"-f", "dbform.yaml"});
  require_refused(sb, "apply tfplan without --target, --prune, --max-deletes", {"--prune", "--target", "orders",
                                                                               "--max-deletes", "9"});

  json doc = json::parse(sb.read("tfplan"));
  doc["format_version"] = 99;
  sb.write("tfplan", doc.dump());
  require_refused(sb, "plan format version 99; this dbform reads version 1");
  sb.write("tfplan", "{\"format\": \"dbform-plan\", \"format_version\": 1, \"actions\": 3}");
  require_refused(sb, "tfplan: ");
  sb.write("tfplan", sb.read("dbform.state.json"));
  require_refused(sb, "tfplan is not a dbform plan file");
  fs::remove(sb.dir() / "tfplan");
  require_refused(sb, "there is no plan file tfplan");

  // A hand-made conflict in a plan file is refused before anything is read.
  sb.write("dbform.yaml", base_manifest());
  save_plan(sb);
  doc = json::parse(sb.read("tfplan"));
  doc["actions"][1]["action"] = "conflict";
  sb.write("tfplan", doc.dump());
  require_refused(sb, "1 conflict(s), so nothing in it can be applied");
}

TEST_CASE("e2e: the plan file documents its format and what it was made from, and holds no secret") {
  Sandbox sb;
  apply_base(sb);
  sb.write("dbform.yaml", base_manifest({"search"}));
  save_plan(sb, {"--format", "json"});
  json doc = json::parse(sb.read("tfplan"));
  CHECK(doc["format"] == "dbform-plan");
  CHECK(doc["format_version"] == 1);
  CHECK(doc["manifests"]["paths"] == json::array({"."}));
  CHECK(doc["manifests"]["digest"].get<std::string>().size() == 64);
  json state = sb.state();
  CHECK(doc["state"]["lineage"] == state["lineage"]);
  CHECK(doc["state"]["serial"] == state["serial"]);
  CHECK(doc["summary"]["create"] == 1);
  CHECK(doc["summary"]["no_op"] == 4);
  const std::string text = sb.read("tfplan");
  for (const auto& r : state["resources"])
    if (!r["initial_password"].get<std::string>().empty()) CHECK(!contains(text, r["initial_password"]));
  CHECK(!contains(text, kKey));
}
