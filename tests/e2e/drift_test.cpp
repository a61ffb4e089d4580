// What changed outside dbform (drift): every plan shows it and apply puts it back; and what a
// refresh reads and writes; through the real binary against the simulator, counting the calls.
#include "service_helpers.h"

using namespace e2e;

namespace {


}  // namespace

TEST_CASE("e2e: a change made outside dbform is drift: every plan shows it and apply puts it back") {
  Sandbox sb;
  sb.write("dbform.yaml", manifest({}, {orders_yaml("        environment_tag: PROD\n")}));
  REQUIRE(sb.apply().exit_code == 0);
  const std::string id = find_resource(sb.state(), service_address("orders"))["id"];
  REQUIRE(sb.sim().console(id, "resize", R"({"cpu_millis": 4000, "memory_gbs": 16})").status == 200);
  REQUIRE(sb.sim().console(id, "setEnvironment", R"({"environment": "DEV"})").status == 200);

  check_clean(sb, {"--no-refresh"});  // from the state alone, dbform cannot know
  RunResult plan = sb.run({"plan", "--detailed-exitcode"});  // a plan refreshes first, as Terraform's does
  INFO(plan.describe());
  CHECK(plan.exit_code == 2);
  CHECK(contains(plan.out, "\"4000\" -> \"1000\""));
  CHECK(contains(plan.out, "changed outside dbform"));
  CHECK(contains(plan.out, R"(resize {"cpu_millis":"1000","memory_gbs":"4"})"));
  CHECK(contains(plan.out, R"(setEnvironment {"environment":"PROD"})"));
  // A plan is read-only: what its refresh read is recorded by the next apply, so a
  // plan from the state alone still cannot see the drift.
  CHECK(find_resource(sb.state(), service_address("orders"))["observed"]["cpu_millis"] != "4000");
  RunResult offline = sb.run({"plan", "--no-refresh", "--detailed-exitcode"});
  CHECK(offline.exit_code == 0);

  RunResult r = sb.apply();
  INFO(r.describe() << "\ncounts: " << sb.counts().dump());
  REQUIRE(r.exit_code == 0);
  CHECK(sb.count(kResize) == 1);
  CHECK(sb.count(kSetEnvironment) == 1);
  json orders = sim_service(sb, "orders");
  CHECK(orders["resources"][0]["spec"]["cpu_millis"] == 1000);
  CHECK(orders["metadata"]["environment"] == "PROD");
  check_clean(sb, {"--refresh"});
}

TEST_CASE("e2e: a service deleted outside dbform is reported and created again exactly once") {
  Sandbox sb;
  apply_base(sb);
  const std::string old_id = find_resource(sb.state(), service_address("billing"))["id"];
  REQUIRE(sb.sim().console(old_id, "delete", "").status == 200);

  RunResult plan = sb.run({"plan", "--refresh", "--detailed-exitcode"});
  INFO(plan.describe());
  CHECK(plan.exit_code == 2);
  CHECK(contains(plan.out, "deleted outside dbform"));
  CHECK(contains(plan.out, old_id));
  CHECK(contains(plan.out, "Plan: 1 to create"));

  RunResult r = sb.apply();
  INFO(r.describe() << "\ncounts: " << sb.counts().dump());
  REQUIRE(r.exit_code == 0);
  CHECK(sb.count(kPostService) == 4);  // three, then billing once more
  json billing = find_resource(sb.state(), service_address("billing"));
  CHECK(billing["id"] != old_id);
  CHECK(billing["status"] == "READY");
  CHECK_FALSE(billing["initial_password"].get<std::string>().empty());
  CHECK(sb.sim().all_services().size() == 3);
  RunResult again = sb.apply();
  CHECK(again.exit_code == 0);
  CHECK(sb.count(kPostService) == 4);
  check_clean(sb, {"--refresh"});
}

TEST_CASE("e2e: a refreshed no-op plan and apply of 100 services in 5 projects read one list per project and kind") {
  auto config = default_sim_config();
  config.keys.clear();
  std::map<std::string, std::string> keys;
  std::string yaml = "version: 1\nprojects:\n";
  for (int p = 1; p <= 5; ++p) {
    const std::string project = "team-" + std::to_string(p), key = "e2e-key-of-" + project;
    config.keys.push_back({key, project, project});
    keys["DBFORM_API_KEY_TEAM_" + std::to_string(p)] = key;
    yaml += "  - id: " + project + "\n    vpcs:\n" + vpc_yaml("net") + "    services:\n";
    for (int s = 0; s < 20; ++s) yaml += service_yaml("db-" + std::to_string(s));
  }
  Sandbox sb(config);
  sb.env.erase("DBFORM_API_KEY");
  sb.write("dbform.yaml", yaml);
  RunResult created = sb.apply({"--parallelism", "20"}, keys);
  INFO(created.describe());
  REQUIRE(created.exit_code == 0);

  const json before = sb.counts();
  RunResult plan = sb.run({"plan", "--refresh", "--detailed-exitcode"}, keys);
  INFO(plan.describe());
  CHECK(plan.exit_code == 0);
  RunResult apply = sb.apply({}, keys);
  INFO(apply.describe());
  CHECK(apply.exit_code == 0);
  CHECK(contains(apply.out, "No changes"));
  json calls = json::object();
  const json after = sb.counts();
  for (const auto& [route, n] : after.items())
    if (n != before.value(route, 0LL)) calls[route] = n.get<long long>() - before.value(route, 0LL);
  // Each run: one key check and one list per kind for each of the 5 projects; no read per resource.
  CHECK(calls == json{{"GET /auth/info", 10}, {"GET /projects/{project_id}/services", 10},
                      {"GET /projects/{project_id}/vpcs", 10}});
  WARN("a refreshed no-op plan and apply of 100 services and 5 VPCs in 5 projects made " << calls.dump());
}

TEST_CASE("e2e: a refresh that reads every record anew writes the state whole, one that finds one change appends it") {
  Sandbox sb;
  sb.write("dbform.yaml", manifest({}, {service_yaml("a"), service_yaml("b"), service_yaml("c"), service_yaml("d")}));
  REQUIRE(sb.apply().exit_code == 0);
  auto journal_lines = [&] {
    if (!sb.exists("dbform.state.json.journal")) return 0L;
    const std::string text = sb.read("dbform.state.json.journal");
    return static_cast<long>(std::count(text.begin(), text.end(), '\n'));
  };
  CHECK(journal_lines() == 0);  // the apply folded its journal in at the end
  const long long serial = sb.state()["serial"];

  // A plan writes nothing: the plan it saves is for the state as it is.
  RunResult first = sb.run({"plan", "--refresh", "--out", "tfplan"});
  INFO(first.describe());
  REQUIRE(first.exit_code == 0);
  CHECK(sb.state()["serial"] == serial);
  CHECK(json::parse(sb.read("tfplan"))["state"]["serial"] == serial);
  // Applying it refreshes again and records what the API shows of all four: one whole write,
  // nothing to replay, and the saved plan is not refused as stale.
  RunResult saved = sb.run({"apply", "tfplan"});
  INFO(saved.describe());
  CHECK(saved.exit_code == 0);
  CHECK_FALSE(contains(saved.err, "stale"));
  CHECK(journal_lines() == 0);
  CHECK(sb.state()["serial"] == serial + 1);

  // One service changed outside dbform: the next apply's refresh appends only its record.
  const std::string id = find_resource(sb.state(), service_address("b"))["id"];
  REQUIRE(find_resource(sb.state(), service_address("b"))["observed"]["environment_tag"] == "DEV");
  REQUIRE(sb.sim().console(id, "setEnvironment", R"({"environment": "PROD"})").status == 200);
  RunResult second = sb.apply();
  INFO(second.describe());
  REQUIRE(second.exit_code == 0);
  CHECK(journal_lines() == 1);
  const json entry = json::parse(sb.read("dbform.state.json.journal"));
  REQUIRE(entry["upsert"].size() == 1);
  CHECK(entry["upsert"][0]["address"] == service_address("b"));
  CHECK(sb.state()["serial"] == serial + 2);
  CHECK(find_resource(sb.state(), service_address("b"))["observed"]["environment_tag"] == "PROD");

  // Nothing changed since: no write at all.
  REQUIRE(sb.apply().exit_code == 0);
  CHECK(journal_lines() == 1);
  CHECK(sb.state()["serial"] == serial + 2);
}

TEST_CASE("e2e: an apply that finds drift has one writer: its refresh is saved with its first write, not before") {
  Sandbox sb;
  sb.write("dbform.yaml", manifest({}, {service_yaml("a"), service_yaml("b")}));
  REQUIRE(sb.apply().exit_code == 0);
  const long long serial = sb.state()["serial"];
  const std::string id = find_resource(sb.state(), service_address("b"))["id"];
  REQUIRE(sb.sim().console(id, "resize", R"({"cpu_millis": 4000, "memory_gbs": 16})").status == 200);

  // The resize that puts b back is held: the run is past its refresh and has sent its one call.
  HeldAnswer resize(sb, 1, [](const dbform::SimRequest& r) { return r.method == "POST" && r.path.ends_with("/resize"); });
  auto run = sb.start({"apply", "--auto-approve"});
  REQUIRE(resize.wait());
  // The run has written the state once, before its call: the resize it is about to send (the
  // journal's pending call) and, in the same write, what its refresh read (b at 4000). A second
  // writer of the state would have saved the refresh on its own first, a serial ahead.
  const json held = sb.state();
  INFO(held.dump(2));
  CHECK(held["serial"] == serial + 1);
  const json b = find_resource(held, service_address("b"));
  CHECK(b["observed"]["cpu_millis"] == "4000");
  CHECK(b.contains("pending_call"));
  resize.release();
  RunResult r = run->wait();
  INFO(r.describe());
  REQUIRE(r.exit_code == 0);
  CHECK(sb.count(kResize) == 1);
  CHECK(find_resource(sb.state(), service_address("b"))["observed"]["cpu_millis"] == "1000");
  check_clean(sb, {"--refresh"});
}
