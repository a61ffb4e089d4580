// Pause and resume (`paused:`): stops and starts watched to their status, changes and read replica
// sets made while a service runs, pauses outside dbform, and their faults; through the real binary
// against the simulator, counting the calls it saw.
#include "service_helpers.h"

using namespace e2e;

namespace {



}  // namespace

TEST_CASE("e2e: paused: true stops a running service once and watches it to PAUSED, and false starts it again") {
  Sandbox sb;
  apply_ok(sb, manifest({}, {orders_yaml()}));
  sb.write("dbform.yaml", manifest({}, {orders_yaml("        paused: true\n")}));
  RunResult plan = sb.run({"plan", "--detailed-exitcode"});
  INFO(plan.describe());
  CHECK(plan.exit_code == 2);
  CHECK(contains(plan.out, "stop"));
  CHECK(contains(plan.out, "Plan: 0 to create, 1 to update"));

  const json before = writes_of(sb.counts());
  RunResult paused = apply_ok(sb, manifest({}, {orders_yaml("        paused: true\n")}));
  CHECK(contains(paused.out, "PAUSING"));
  json expected = before;
  expected[kStop] = 1;
  CHECK(writes_of(sb.counts()) == expected);
  CHECK(sim_service(sb, "orders")["status"] == "PAUSED");
  json rec = find_resource(sb.state(), service_address("orders"));
  CHECK(rec["status"] == "PAUSED");
  CHECK(rec["settings"]["paused"] == true);
  CHECK_FALSE(rec.contains("pending_call"));
  check_clean_refreshed(sb);

  apply_ok(sb, manifest({}, {orders_yaml("        paused: false\n")}));
  expected[kStart] = 1;
  CHECK(writes_of(sb.counts()) == expected);
  CHECK(sim_service(sb, "orders")["status"] == "READY");
  CHECK(find_resource(sb.state(), service_address("orders"))["status"] == "READY");
  check_clean_refreshed(sb);
}

TEST_CASE("e2e: saved plans carry stop, start and rename calls, and apply PLANFILE makes them") {
  Sandbox sb;
  apply_ok(sb, manifest({}, {orders_yaml()}));
  auto apply_saved = [&](const std::string& services) {
    sb.write("dbform.yaml", manifest({}, {services}));
    RunResult saved = sb.run({"plan", "--out", "tfplan"});
    INFO(saved.describe());
    REQUIRE(saved.exit_code == 0);
    RunResult applied = sb.run({"apply", "--auto-approve", "tfplan"});
    INFO(applied.describe());
    REQUIRE(applied.exit_code == 0);
  };
  apply_saved(orders_yaml("        paused: true\n"));
  CHECK(sb.count(kStop) == 1);
  CHECK(sim_service(sb, "orders")["status"] == "PAUSED");
  apply_saved(orders_yaml("        paused: false\n"));
  CHECK(sb.count(kStart) == 1);
  apply_saved(service_yaml("orders-v2") + "        renamed_from: orders\n");
  CHECK(sb.count("POST /projects/{project_id}/services/{service_id}/rename") == 1);
  CHECK(sim_service(sb, "orders-v2").is_object());
  check_clean_refreshed(sb);
}

TEST_CASE("e2e: a change to a service declared paused is made while it runs: start, the change, stop") {
  Sandbox sb;
  apply_ok(sb, manifest({}, {orders_yaml("        paused: true\n")}));  // created, then stopped
  CHECK(sb.count(kStop) == 1);
  CHECK(sim_service(sb, "orders")["status"] == "PAUSED");

  sb.write("dbform.yaml", manifest({}, {orders_yaml("        paused: true\n", 2000, 8)}));
  RunResult plan = sb.run({"plan"});
  INFO(plan.describe());
  const size_t start = plan.out.find("start"), resize = plan.out.find("resize"), stop = plan.out.rfind("stop");
  CHECK(start < resize);
  CHECK(resize < stop);
  CHECK(stop != std::string::npos);
  CHECK(contains(plan.out, "started for these changes and stopped again"));

  apply_ok(sb, manifest({}, {orders_yaml("        paused: true\n", 2000, 8)}));
  CHECK(sb.count(kStart) == 1);
  CHECK(sb.count(kResize) == 1);
  CHECK(sb.count(kStop) == 2);
  json s = sim_service(sb, "orders");
  CHECK(s["status"] == "PAUSED");
  CHECK(s["resources"][0]["spec"]["cpu_millis"] == 2000);
  check_clean_refreshed(sb);
}

// Item 1: one rule for every change that needs a running service on a service declared paused.
TEST_CASE("e2e: a read replica set of a service declared paused is made by starting it, creating the set, and stopping it again") {
  Sandbox sb;
  apply_ok(sb, manifest({}, {orders_yaml(kPaused)}));
  REQUIRE(sim_service(sb, "orders")["status"] == "PAUSED");

  sb.write("dbform.yaml", manifest({}, {orders_yaml(kPaused + reporting())}));
  RunResult plan = sb.run({"plan", "--detailed-exitcode"});
  INFO(plan.describe());
  CHECK(plan.exit_code == 2);
  CHECK(contains(plan.out, "Plan: 1 to create, 1 to update"));
  CHECK(contains(plan.out, "start, then wait for READY"));
  CHECK(contains(plan.out, "stop, then wait for PAUSED"));
  CHECK(contains(plan.out, "paused: it is started for the create of read replica set `reporting`, and stopped again"));
  RunResult markdown = sb.run({"plan", "--format", "markdown"});  // the pull request's comment says so too
  CHECK(contains(markdown.out, "calls `start`, `stop`. paused: it is started for the create of read replica set"));

  RunResult applied = apply_ok(sb, manifest({}, {orders_yaml(kPaused + reporting())}));
  CHECK(sb.count(kStart) == 1);
  CHECK(sb.count(kPostSet) == 1);
  CHECK(sb.count(kStop) == 2);
  CHECK(sim_service(sb, "orders")["status"] == "PAUSED");
  CHECK(sb.sim().all_replica_sets().size() == 1);
  check_clean(sb);

  // A change to the set is made the same way.
  apply_ok(sb, manifest({}, {orders_yaml(kPaused + reporting(2000))}));
  CHECK(sb.count(kStart) == 2);
  CHECK(sb.count(kResizeSet) == 1);
  CHECK(sb.count(kStop) == 3);
  CHECK(sim_service(sb, "orders")["status"] == "PAUSED");
  check_clean(sb);
}

TEST_CASE("e2e: a service paused outside dbform is drift: the plan shows it and apply starts it") {
  Sandbox sb;
  apply_ok(sb, manifest({}, {orders_yaml("        paused: false\n")}));
  const std::string id = find_resource(sb.state(), service_address("orders"))["id"];
  REQUIRE(sb.sim().console(id, "stop", "").status == 200);

  RunResult plan = sb.run({"plan", "--detailed-exitcode", "--refresh"});
  INFO(plan.describe());
  CHECK(plan.exit_code == 2);
  CHECK(contains(plan.out, "paused"));
  CHECK(contains(plan.out, "outside dbform"));
  CHECK(contains(plan.out, "start"));
  RunResult r = sb.run({"apply", "--auto-approve", "--refresh"});
  INFO(r.describe());
  REQUIRE(r.exit_code == 0);
  CHECK(sb.count(kStart) == 1);
  CHECK(sim_service(sb, "orders")["status"] == "READY");
  check_clean_refreshed(sb);
}

TEST_CASE("e2e: a service paused outside dbform and not declared paused fails its watch, naming paused") {
  Sandbox sb;
  apply_ok(sb, manifest({}, {orders_yaml()}));
  const std::string id = find_resource(sb.state(), service_address("orders"))["id"];
  // Paused in the console while dbform waits for its resize.
  sb.write("dbform.yaml", manifest({}, {orders_yaml("", 2000, 8)}));
  REQUIRE(sb.sim().console(id, "stop", "").status == 200);
  RunResult r = sb.run({"apply", "--auto-approve", "--no-refresh"});
  INFO(r.describe());
  CHECK(r.exit_code == 1);
  CHECK(contains(r.all(), "paused: true"));
  CHECK(sb.count(kStart) == 0);  // not declared: dbform does not start it on its own
}

TEST_CASE("e2e: a service recorded PAUSING by dbform's own stop, interrupted, is not taken for a pause outside dbform") {
  Sandbox sb;
  apply_ok(sb, manifest({}, {orders_yaml()}));
  const std::string id = find_resource(sb.state(), service_address("orders"))["id"];
  // The state of a run killed while its stop (start, resize, stop of a paused service) was PAUSING.
  REQUIRE(sb.sim().console(id, "stop", "").status == 200);
  json state = sb.state();
  for (auto& rec : state["resources"])
    if (rec["address"] == service_address("orders")) rec["status"] = "PAUSING";
  sb.write("dbform.state.json", state.dump(2));
  sb.write("dbform.yaml", manifest({}, {orders_yaml()}));
  RunResult r = sb.run({"apply", "--auto-approve", "--no-refresh"});
  INFO(r.describe());
  CHECK(r.exit_code == 0);
  CHECK_FALSE(contains(r.all(), "outside dbform"));
  CHECK(sb.count(kStart) == 0);
  CHECK(find_resource(sb.state(), service_address("orders"))["status"] == "PAUSED");
}

TEST_CASE("e2e: faults: a lost answer and a 504 after commit on stop and on start: each made once") {
  using Kind = dbform::RouteFault::Kind;
  for (Kind kind : {Kind::LoseAnswer, Kind::GatewayTimeout}) {
    Sandbox sb;
    apply_ok(sb, manifest({}, {orders_yaml()}));
    sb.sim().set_route_faults({{kStop, kind, 1, 1}, {kStart, kind, 1, 1}});
    apply_ok(sb, manifest({}, {orders_yaml("        paused: true\n")}));
    CHECK(sb.count(kStop) >= 1);
    CHECK(sim_service(sb, "orders")["status"] == "PAUSED");
    apply_ok(sb, manifest({}, {orders_yaml("        paused: false\n")}));
    CHECK(sim_service(sb, "orders")["status"] == "READY");
    // A retry of the first send found the service PAUSING (or RESUMING) and was refused, or was
    // not sent at all: the change was made once, and the state says so.
    json rec = find_resource(sb.state(), service_address("orders"));
    CHECK(rec["status"] == "READY");
    CHECK_FALSE(rec.contains("pending_call"));
    check_clean_refreshed(sb);
    const json faults = sb.sim().fault_counts();
    INFO(faults.dump());
    CHECK(!faults.empty());
  }
}

TEST_CASE("e2e: --no-wait leaves what needs a READY service for the next apply: a paused service's calls, the deletes") {
  Sandbox sb;
  const std::string paused = "        paused: true\n";
  sb.write("dbform.yaml", manifest({vpc_yaml("old-net")}, {orders_yaml(paused + "        vpc: old-net\n")}));
  REQUIRE(sb.apply().exit_code == 0);
  REQUIRE(sim_service(sb, "orders")["status"] == "PAUSED");

  // Resized while it runs (start, resize, stop), detached, and its VPC pruned: with --no-wait only
  // the start is sent; nothing else is, and the service is not left running by a partial run.
  sb.write("dbform.yaml", manifest({}, {orders_yaml(paused, 2000, 8)}));
  const json before = writes_of(sb.counts());
  RunResult r = sb.run({"apply", "--auto-approve", "--prune", "--no-wait"});
  INFO(r.describe() << "\ncounts: " << sb.counts().dump());
  CHECK(r.exit_code == 0);
  json expected = before;
  expected[kStart] = 1;
  CHECK(writes_of(sb.counts()) == expected);
  CHECK(contains(r.out, "Left for the next apply"));
  CHECK(contains(r.out, "`resize` and what follows need it READY"));
  CHECK(contains(r.out, "acme-prod/vpcs/old-net: left for the next apply: not deleted"));
  CHECK(find_resource(sb.state(), vpc_address("old-net")).is_object());

  // The next apply (waiting) finishes it: resize, detach, stop, then the VPC's delete.
  RunResult next = sb.run({"apply", "--auto-approve", "--prune"});
  INFO(next.describe());
  REQUIRE(next.exit_code == 0);
  CHECK(sb.count(kStart) == 1);
  CHECK(sb.count(kResize) == 1);
  CHECK(sb.count(kStop) == 2);
  CHECK(sim_service(sb, "orders")["status"] == "PAUSED");
  CHECK(sb.sim().all_vpcs().empty());
  check_clean_refreshed(sb);
}
