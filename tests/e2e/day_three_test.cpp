// Day three (issue 20): pause and resume, synchronous HA replicas; through the real binary against
// the simulator, counting the calls it saw.
#include "common.h"

using namespace e2e;

namespace {

const std::string kStop = "POST /projects/{project_id}/services/{service_id}/stop";
const std::string kStart = "POST /projects/{project_id}/services/{service_id}/start";
const std::string kResize = "POST /projects/{project_id}/services/{service_id}/resize";
const std::string kSetHA = "POST /projects/{project_id}/services/{service_id}/setHA";

std::string orders(const std::string& extra = "", int cpu = 1000, int memory = 4) {
  return service_yaml("orders", cpu, memory) + extra;
}

json sim_service(Sandbox& sb, const std::string& name) {
  for (const auto& s : sb.sim().all_services())
    if (s["name"] == name) return s;
  return json();
}

void check_clean(Sandbox& sb) {
  for (const char* refresh : {"--detailed-exitcode", "--refresh"}) {
    RunResult plan = sb.run({"plan", "--detailed-exitcode", refresh});
    INFO(plan.describe());
    CHECK(plan.exit_code == 0);
  }
}

// Applies `services` (and the base VPC-less project); the run must succeed.
RunResult apply_services(Sandbox& sb, const std::vector<std::string>& services) {
  sb.write("dbform.yaml", manifest({}, services));
  RunResult r = sb.apply();
  INFO(r.describe() << "\ncounts: " << sb.counts().dump());
  REQUIRE(r.exit_code == 0);
  return r;
}

}  // namespace

TEST_CASE("e2e: paused: true stops a running service once and watches it to PAUSED, and false starts it again") {
  Sandbox sb;
  apply_services(sb, {orders()});
  sb.write("dbform.yaml", manifest({}, {orders("        paused: true\n")}));
  RunResult plan = sb.run({"plan", "--detailed-exitcode"});
  INFO(plan.describe());
  CHECK(plan.exit_code == 2);
  CHECK(contains(plan.out, "stop"));
  CHECK(contains(plan.out, "Plan: 0 to create, 1 to update"));

  const json before = writes_of(sb.counts());
  RunResult paused = apply_services(sb, {orders("        paused: true\n")});
  CHECK(contains(paused.out, "PAUSING"));
  json expected = before;
  expected[kStop] = 1;
  CHECK(writes_of(sb.counts()) == expected);
  CHECK(sim_service(sb, "orders")["status"] == "PAUSED");
  json rec = find_resource(sb.state(), service_address("orders"));
  CHECK(rec["status"] == "PAUSED");
  CHECK(rec["settings"]["paused"] == true);
  CHECK_FALSE(rec.contains("pending_call"));
  check_clean(sb);

  apply_services(sb, {orders("        paused: false\n")});
  expected[kStart] = 1;
  CHECK(writes_of(sb.counts()) == expected);
  CHECK(sim_service(sb, "orders")["status"] == "READY");
  CHECK(find_resource(sb.state(), service_address("orders"))["status"] == "READY");
  check_clean(sb);
}

TEST_CASE("e2e: saved plans carry stop, start and rename calls, and apply PLANFILE makes them") {
  Sandbox sb;
  apply_services(sb, {orders()});
  auto apply_saved = [&](const std::string& services) {
    sb.write("dbform.yaml", manifest({}, {services}));
    RunResult saved = sb.run({"plan", "--out", "tfplan"});
    INFO(saved.describe());
    REQUIRE(saved.exit_code == 0);
    RunResult applied = sb.run({"apply", "--auto-approve", "tfplan"});
    INFO(applied.describe());
    REQUIRE(applied.exit_code == 0);
  };
  apply_saved(orders("        paused: true\n"));
  CHECK(sb.count(kStop) == 1);
  CHECK(sim_service(sb, "orders")["status"] == "PAUSED");
  apply_saved(orders("        paused: false\n"));
  CHECK(sb.count(kStart) == 1);
  apply_saved(service_yaml("orders-v2") + "        renamed_from: orders\n");
  CHECK(sb.count("POST /projects/{project_id}/services/{service_id}/rename") == 1);
  CHECK(sim_service(sb, "orders-v2").is_object());
  check_clean(sb);
}

TEST_CASE("e2e: a change to a service declared paused is made while it runs: start, the change, stop") {
  Sandbox sb;
  apply_services(sb, {orders("        paused: true\n")});  // created, then stopped
  CHECK(sb.count(kStop) == 1);
  CHECK(sim_service(sb, "orders")["status"] == "PAUSED");

  sb.write("dbform.yaml", manifest({}, {orders("        paused: true\n", 2000, 8)}));
  RunResult plan = sb.run({"plan"});
  INFO(plan.describe());
  const size_t start = plan.out.find("start"), resize = plan.out.find("resize"), stop = plan.out.rfind("stop");
  CHECK(start < resize);
  CHECK(resize < stop);
  CHECK(stop != std::string::npos);
  CHECK(contains(plan.out, "started for these changes and stopped again"));

  apply_services(sb, {orders("        paused: true\n", 2000, 8)});
  CHECK(sb.count(kStart) == 1);
  CHECK(sb.count(kResize) == 1);
  CHECK(sb.count(kStop) == 2);
  json s = sim_service(sb, "orders");
  CHECK(s["status"] == "PAUSED");
  CHECK(s["resources"][0]["spec"]["cpu_millis"] == 2000);
  check_clean(sb);
}

TEST_CASE("e2e: a service paused outside dbform is drift: the plan shows it and apply starts it") {
  Sandbox sb;
  apply_services(sb, {orders("        paused: false\n")});
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
  check_clean(sb);
}

TEST_CASE("e2e: a service paused outside dbform and not declared paused fails its watch, naming paused") {
  Sandbox sb;
  apply_services(sb, {orders()});
  const std::string id = find_resource(sb.state(), service_address("orders"))["id"];
  // Paused in the console while dbform waits for its resize.
  sb.write("dbform.yaml", manifest({}, {orders("", 2000, 8)}));
  REQUIRE(sb.sim().console(id, "stop", "").status == 200);
  RunResult r = sb.run({"apply", "--auto-approve", "--no-refresh"});
  INFO(r.describe());
  CHECK(r.exit_code == 1);
  CHECK(contains(r.all(), "paused: true"));
  CHECK(sb.count(kStart) == 0);  // not declared: dbform does not start it on its own
}

TEST_CASE("e2e: a service recorded PAUSING by dbform's own stop, interrupted, is not taken for a pause outside dbform") {
  Sandbox sb;
  apply_services(sb, {orders()});
  const std::string id = find_resource(sb.state(), service_address("orders"))["id"];
  // The state of a run killed while its stop (start, resize, stop of a paused service) was PAUSING.
  REQUIRE(sb.sim().console(id, "stop", "").status == 200);
  json state = sb.state();
  for (auto& rec : state["resources"])
    if (rec["address"] == service_address("orders")) rec["status"] = "PAUSING";
  sb.write("dbform.state.json", state.dump(2));
  sb.write("dbform.yaml", manifest({}, {orders()}));
  RunResult r = sb.run({"apply", "--auto-approve", "--no-refresh"});
  INFO(r.describe());
  CHECK(r.exit_code == 0);
  CHECK_FALSE(contains(r.all(), "outside dbform"));
  CHECK(sb.count(kStart) == 0);
  CHECK(find_resource(sb.state(), service_address("orders"))["status"] == "PAUSED");
}

TEST_CASE("e2e: sync_replica_count: one setHA with both counts, then a clean plan") {
  Sandbox sb;
  apply_services(sb, {orders("        replica_count: 1\n")});
  sb.write("dbform.yaml", manifest({}, {orders("        replica_count: 2\n        sync_replica_count: 1\n")}));
  RunResult plan = sb.run({"plan"});
  INFO(plan.describe());
  CHECK(contains(plan.out, R"(setHA {"replica_count":2,"sync_replica_count":1})"));
  apply_services(sb, {orders("        replica_count: 2\n        sync_replica_count: 1\n")});
  CHECK(sb.count(kSetHA) == 1);
  CHECK(sim_service(sb, "orders")["ha_replicas"] == json{{"replica_count", 2}, {"sync_replica_count", 1}});
  check_clean(sb);
  // Only the synchronous count changes: one setHA, with the declared replica_count.
  apply_services(sb, {orders("        replica_count: 2\n        sync_replica_count: 2\n")});
  CHECK(sb.count(kSetHA) == 2);
  CHECK(sim_service(sb, "orders")["ha_replicas"]["sync_replica_count"] == 2);
  check_clean(sb);
}

TEST_CASE("e2e: sync_replica_count above replica_count is a located error, and nothing is called") {
  Sandbox sb;
  sb.write("dbform.yaml", manifest({}, {orders("        replica_count: 1\n        sync_replica_count: 2\n")}));
  for (const char* command : {"validate", "plan", "apply"}) {
    RunResult r = command == std::string("apply") ? sb.run({"apply", "--auto-approve"}) : sb.run({command});
    INFO(r.describe());
    CHECK(r.exit_code != 0);
    CHECK(contains(r.err, "dbform.yaml:"));
    CHECK(contains(r.err, "sync_replica_count 2 is more than replica_count 1"));
  }
  CHECK(writes_of(sb.counts()).empty());
}

TEST_CASE("e2e: faults: a lost answer and a 504 after commit on stop and on start: each made once") {
  using Kind = dbform::RouteFault::Kind;
  for (Kind kind : {Kind::LoseAnswer, Kind::GatewayTimeout}) {
    Sandbox sb;
    apply_services(sb, {orders()});
    sb.sim().set_route_faults({{kStop, kind, 1, 1}, {kStart, kind, 1, 1}});
    apply_services(sb, {orders("        paused: true\n")});
    CHECK(sb.count(kStop) >= 1);
    CHECK(sim_service(sb, "orders")["status"] == "PAUSED");
    apply_services(sb, {orders("        paused: false\n")});
    CHECK(sim_service(sb, "orders")["status"] == "READY");
    // A retry of the first send found the service PAUSING (or RESUMING) and was refused, or was
    // not sent at all: the change was made once, and the state says so.
    json rec = find_resource(sb.state(), service_address("orders"));
    CHECK(rec["status"] == "READY");
    CHECK_FALSE(rec.contains("pending_call"));
    check_clean(sb);
    const json faults = sb.sim().fault_counts();
    INFO(faults.dump());
    CHECK(!faults.empty());
  }
}

namespace {

const std::string kRenameService = "POST /projects/{project_id}/services/{service_id}/rename";
const std::string kRenameVpc = "POST /projects/{project_id}/vpcs/{vpc_id}/rename";

}  // namespace

TEST_CASE("e2e: renamed_from renames a service in place: the record moves, one rename call, with or without --prune") {
  for (bool prune : {false, true}) {
    Sandbox sb;
    apply_services(sb, {service_yaml("orders-db"), service_yaml("billing")});
    const std::string id = find_resource(sb.state(), service_address("orders-db"))["id"];
    const std::string renamed = service_yaml("orders") + "        renamed_from: orders-db\n";
    sb.write("dbform.yaml", manifest({}, {renamed, service_yaml("billing")}));
    std::vector<std::string> plan_args = {"plan"};
    if (prune) plan_args.push_back("--prune");
    RunResult plan = sb.run(plan_args);
    INFO(plan.describe());
    CHECK(contains(plan.out, "renamed from `acme-prod/services/orders-db`"));
    CHECK(contains(plan.out, R"(rename {"name":"orders"})"));
    CHECK(contains(plan.out, "0 to create"));
    CHECK_FALSE(contains(plan.out, "destroy"));

    const json before = writes_of(sb.counts());
    std::vector<std::string> args = {"apply", "--auto-approve"};
    if (prune) args.push_back("--prune");
    RunResult r = sb.run(args);
    INFO(r.describe() << "\ncounts: " << sb.counts().dump());
    REQUIRE(r.exit_code == 0);
    json expected = before;
    expected[kRenameService] = 1;
    CHECK(writes_of(sb.counts()) == expected);  // no create, no delete
    CHECK(sim_service(sb, "orders")["service_id"] == id);
    CHECK(find_resource(sb.state(), service_address("orders"))["id"] == id);
    CHECK(find_resource(sb.state(), service_address("orders-db")).is_null());
    CHECK(sb.sim().all_services().size() == 2);
    check_clean(sb);
  }
}

TEST_CASE("e2e: renamed_from on a VPC renames it with one call, and its services stay attached") {
  Sandbox sb;
  sb.write("dbform.yaml", manifest({vpc_yaml("net")}, {service_yaml("orders") + "        vpc: net\n"}));
  REQUIRE(sb.apply().exit_code == 0);
  const json before = writes_of(sb.counts());
  sb.write("dbform.yaml", manifest({vpc_yaml("edge") + "        renamed_from: net\n"},
                                   {service_yaml("orders") + "        vpc: edge\n"}));
  RunResult r = sb.apply();
  INFO(r.describe() << "\ncounts: " << sb.counts().dump());
  REQUIRE(r.exit_code == 0);
  json expected = before;
  expected[kRenameVpc] = 1;
  CHECK(writes_of(sb.counts()) == expected);  // no detach, no attach, no create
  CHECK(sb.sim().all_vpcs()[0]["name"] == "edge");
  CHECK(find_resource(sb.state(), service_address("orders"))["settings"]["vpc"] == "edge");
  check_clean(sb);
}

TEST_CASE("e2e: state mv moves a record without a call, and the next plan renames the service to match") {
  Sandbox sb;
  apply_services(sb, {service_yaml("orders-db")});
  const json before = writes_of(sb.counts());
  RunResult mv = sb.run({"state", "mv", "orders-db", "orders"});
  INFO(mv.describe());
  REQUIRE(mv.exit_code == 0);
  CHECK(contains(mv.out, "Moved acme-prod/services/orders-db to acme-prod/services/orders"));
  CHECK(writes_of(sb.counts()) == before);
  CHECK(sb.run({"state", "mv", "orders", "vpcs/x"}).exit_code != 0);         // another kind
  CHECK(sb.run({"state", "mv", "orders", "other-project/services/x"}).exit_code != 0);
  CHECK(sb.run({"state", "mv", "nothing", "x"}).exit_code != 0);
  CHECK(sb.run({"state", "mv", "orders", "bad name"}).exit_code != 0);

  sb.write("dbform.yaml", manifest({}, {service_yaml("orders")}));
  RunResult plan = sb.run({"plan"});
  INFO(plan.describe());
  CHECK(contains(plan.out, R"(rename {"name":"orders"})"));
  CHECK(contains(plan.out, "0 to create"));
  apply_services(sb, {service_yaml("orders")});
  CHECK(sb.count(kRenameService) == 1);
  CHECK(sim_service(sb, "orders").is_object());
  check_clean(sb);
}

TEST_CASE("e2e: a service renamed outside dbform is drift and renamed back, and the name guard still holds for creates") {
  Sandbox sb;
  apply_services(sb, {service_yaml("orders")});
  const std::string id = find_resource(sb.state(), service_address("orders"))["id"];
  REQUIRE(sb.sim().console(id, "rename", R"({"name":"console-name"})").status == 200);
  RunResult plan = sb.run({"plan", "--refresh"});
  INFO(plan.describe());
  CHECK(contains(plan.out, "console-name"));
  CHECK(contains(plan.out, "outside dbform"));
  RunResult r = sb.run({"apply", "--auto-approve", "--refresh"});
  INFO(r.describe());
  REQUIRE(r.exit_code == 0);
  CHECK(sb.count(kRenameService) == 1);
  CHECK(sim_service(sb, "orders")["service_id"] == id);
  check_clean(sb);

  // A new declaration whose name exists unrecorded is still not created beside it.
  console_service(sb, {{"name", "legacy"}});
  RunResult guarded = sb.run({"apply", "--auto-approve"});
  sb.write("dbform.yaml", manifest({}, {service_yaml("orders"), service_yaml("legacy")}));
  guarded = sb.run({"apply", "--auto-approve"});
  CHECK(guarded.exit_code != 0);
  CHECK(sb.count("POST /projects/{project_id}/services") == 1);
}

TEST_CASE("e2e: faults: a lost answer and a 504 after commit on rename: renamed once, recorded once") {
  using Kind = dbform::RouteFault::Kind;
  for (Kind kind : {Kind::LoseAnswer, Kind::GatewayTimeout}) {
    Sandbox sb;
    apply_services(sb, {service_yaml("orders-db")});
    sb.sim().set_route_faults({{kRenameService, kind, 1, 1}});
    apply_services(sb, {service_yaml("orders") + "        renamed_from: orders-db\n"});
    CHECK(sb.count(kRenameService) <= 2);  // the client's one retry of an idempotent call at most
    CHECK(sb.sim().all_services().size() == 1);
    CHECK(sim_service(sb, "orders").is_object());
    json rec = find_resource(sb.state(), service_address("orders"));
    CHECK_FALSE(rec.contains("pending_call"));
    check_clean(sb);
  }
}

namespace {

const std::string kFork = "POST /projects/{project_id}/services/{service_id}/forkService";

std::string staging_fork(const std::string& strategy = "LAST_SNAPSHOT", const std::string& extra = "") {
  return "      - name: orders-staging\n        fork:\n          from: orders\n          strategy: " + strategy + "\n" +
         extra;
}

}  // namespace

TEST_CASE("e2e: a fork of a service the same apply creates waits for it to be READY, then one forkService") {
  Sandbox sb;
  RunResult r = apply_services(sb, {staging_fork(), orders()});  // the fork is declared first
  CHECK(sb.count(kFork) == 1);
  CHECK(sb.count("POST /projects/{project_id}/services") == 1);
  const json source = find_resource(sb.state(), service_address("orders"));
  const json fork = find_resource(sb.state(), service_address("orders-staging"));
  CHECK(fork["status"] == "READY");
  CHECK_FALSE(fork["initial_password"].get<std::string>().empty());
  CHECK(sim_service(sb, "orders-staging")["forked_from"]["service_id"] == source["id"]);
  const json sent = json::parse(sb.sim().last_body(kFork));
  CHECK(sent == json{{"name", "orders-staging"}, {"fork_strategy", "LAST_SNAPSHOT"}});
  check_clean(sb);

  // `fork` is create-time only: a later change is shown as ignored, and nothing is called.
  sb.write("dbform.yaml", manifest({}, {staging_fork("NOW"), orders()}));
  RunResult plan = sb.run({"plan", "--detailed-exitcode"});
  INFO(plan.describe());
  CHECK(plan.exit_code == 0);
  CHECK(contains(plan.out, "create-time only"));
  RunResult markdown = sb.run({"plan", "--format", "markdown"});  // the pull request sees it too
  CHECK(contains(markdown.out, "| no change | "));
  CHECK(contains(markdown.out, "create-time only"));
  CHECK(contains(markdown.out, "no changes, 2 unchanged"));
}

TEST_CASE("e2e: with --no-wait, a fork of a source the same apply creates is left, and the next apply makes it") {
  Sandbox sb;
  sb.write("dbform.yaml", manifest({}, {orders(), staging_fork()}));
  RunResult r = sb.run({"apply", "--auto-approve", "--no-wait"});
  INFO(r.describe());
  CHECK(r.exit_code == 0);
  CHECK(contains(r.out, "orders-staging: left for the next apply: not created: its fork source"));
  CHECK(sb.count(kFork) == 0);
  CHECK(sb.count("POST /projects/{project_id}/services") == 1);  // the source is created
  apply_services(sb, {orders(), staging_fork()});
  CHECK(sb.count(kFork) == 1);
  check_clean(sb);
}

// Issue 39 item 1 changed this test: a new fork of a source that is paused and stays declared
// paused was a conflict; now the source is started for it and stopped again, as for its own changes.
TEST_CASE("e2e: a fork of a source declared paused is made before the source's stop, and a paused source is started for it") {
  Sandbox sb;
  const std::string paused = "        paused: true\n";
  apply_services(sb, {orders(paused), staging_fork()});  // created, forked, then stopped
  CHECK(sb.count(kFork) == 1);
  CHECK(sb.count(kStop) == 1);
  CHECK(sim_service(sb, "orders")["status"] == "PAUSED");
  CHECK(sim_service(sb, "orders-staging")["status"] == "READY");
  check_clean(sb);

  // Paused, and staying paused: started for the new fork, forked once, stopped again; the plan says so.
  const std::string second = "      - name: orders-qa\n        fork:\n          from: orders\n          strategy: LAST_SNAPSHOT\n";
  sb.write("dbform.yaml", manifest({}, {orders(paused), staging_fork(), second}));
  RunResult plan = sb.run({"plan"});
  INFO(plan.describe());
  CHECK(plan.exit_code == 0);
  CHECK(contains(plan.out, "paused: it is started for the fork `orders-qa`, and stopped again"));
  apply_services(sb, {orders(paused), staging_fork(), second});
  CHECK(sb.count(kStart) == 1);
  CHECK(sb.count(kFork) == 2);
  CHECK(sb.count(kStop) == 2);
  CHECK(sim_service(sb, "orders")["status"] == "PAUSED");
  check_clean(sb);
}

TEST_CASE("e2e: a point-in-time fork sends its target_time, and a fork without a declared source is a located error") {
  Sandbox sb;
  apply_services(sb, {orders()});
  apply_services(sb, {orders(), staging_fork("PITR", "          target_time: 2026-11-01T00:00:00Z\n")});
  const json sent = json::parse(sb.sim().last_body(kFork));
  CHECK(sent["fork_strategy"] == "PITR");
  CHECK(sent["target_time"] == "2026-11-01T00:00:00Z");

  for (const std::string& bad : {staging_fork("PITR"), staging_fork("NOW", "          target_time: 2026-11-01T00:00:00Z\n"),
                                 staging_fork("LATEST"), staging_fork("PITR", "          target_time: 2026-02-30T00:00:00Z\n"),
                                 std::string("      - name: orders-staging\n        fork:\n          from: ordres\n"
                                             "          strategy: NOW\n")}) {
    sb.write("dbform.yaml", manifest({}, {orders(), bad}));
    RunResult r = sb.run({"validate"});
    INFO(bad << r.describe());
    CHECK(r.exit_code != 0);
    CHECK(contains(r.err, "dbform.yaml:"));
  }
}

TEST_CASE("e2e: faults: a lost answer and a 504 after commit on forkService: one fork, adopted by name") {
  using Kind = dbform::RouteFault::Kind;
  for (Kind kind : {Kind::LoseAnswer, Kind::GatewayTimeout}) {
    Sandbox sb;
    apply_services(sb, {orders()});
    sb.sim().set_route_faults({{kFork, kind, 1, 1}});
    RunResult r = apply_services(sb, {orders(), staging_fork()});
    CHECK(sb.count(kFork) == 1);  // never re-sent: looked up by name, and adopted
    CHECK(sb.sim().all_services().size() == 2);
    const json fork = find_resource(sb.state(), service_address("orders-staging"));
    CHECK(fork["status"] == "READY");
    // The answer with its password was lost: a new one was set, and is recorded.
    CHECK(fork["initial_password"] == sb.sim().current_password(fork["id"]));
    check_clean(sb);
  }
}

TEST_CASE("e2e: renamed_from on a record whose create has an unknown outcome is a conflict, and nothing is created") {
  Sandbox sb;
  console_service(sb, {{"name", "orders-db"}});  // the earlier run's create arrived; its answer did not
  sb.write("dbform.state.json", state_with_pending_intent("orders-db"));
  sb.write("dbform.yaml", manifest({}, {service_yaml("orders") + "        renamed_from: orders-db\n"}));
  for (const char* prune : {"--refresh", "--prune"}) {
    RunResult plan = sb.run({"plan", prune});
    INFO(plan.describe());
    CHECK(plan.exit_code != 0);
    CHECK(contains(plan.out, "apply under the old name to settle it first"));
    CHECK_FALSE(contains(plan.out, "destroy"));
    RunResult r = sb.run({"apply", "--auto-approve", prune});
    INFO(r.describe());
    CHECK(r.exit_code != 0);
    CHECK(writes_of(sb.counts()).empty());
  }
  CHECK(find_resource(sb.state(), service_address("orders-db"))["create_pending"] == true);

  // Settled under its old name (adopted, not created), then renamed with one call.
  apply_services(sb, {service_yaml("orders-db")});
  apply_services(sb, {service_yaml("orders") + "        renamed_from: orders-db\n"});
  CHECK(sb.count("POST /projects/{project_id}/services") == 0);
  CHECK(sb.count(kRenameService) == 1);
  CHECK(sb.sim().all_services().size() == 1);
  check_clean(sb);
}

TEST_CASE("e2e: a VPC rename whose answer was lost is settled by one read, with or without a refresh") {
  using Kind = dbform::RouteFault::Kind;
  for (const char* refresh : {"--no-refresh", "--refresh"}) {
    Sandbox sb;
    sb.write("dbform.yaml", manifest({vpc_yaml("net")}, {}));
    REQUIRE(sb.apply().exit_code == 0);
    sb.sim().set_route_faults({{kRenameVpc, Kind::LoseAnswer, 1, 10}});
    sb.write("dbform.yaml", manifest({vpc_yaml("edge") + "        renamed_from: net\n"}, {}));
    RunResult lost = sb.run({"apply", "--auto-approve"});
    INFO(lost.describe());
    REQUIRE(lost.exit_code != 0);
    REQUIRE(find_resource(sb.state(), vpc_address("edge"))["pending_call"]["call"] == "rename");
    sb.sim().set_route_faults({});

    const long long sent = sb.count(kRenameVpc);
    RunResult r = sb.run({"apply", "--auto-approve", refresh, "--wait-timeout", "5s"});
    INFO(r.describe());
    CHECK(r.exit_code == 0);
    CHECK(sb.count(kRenameVpc) == sent);  // the lost call was made: not sent again
    CHECK_FALSE(find_resource(sb.state(), vpc_address("edge")).contains("pending_call"));
    CHECK(sb.sim().all_vpcs()[0]["name"] == "edge");
  }
}

TEST_CASE("e2e: --no-wait leaves what needs a READY service for the next apply: a paused service's calls, the deletes") {
  Sandbox sb;
  const std::string paused = "        paused: true\n";
  sb.write("dbform.yaml", manifest({vpc_yaml("old-net")}, {orders(paused + "        vpc: old-net\n")}));
  REQUIRE(sb.apply().exit_code == 0);
  REQUIRE(sim_service(sb, "orders")["status"] == "PAUSED");

  // Resized while it runs (start, resize, stop), detached, and its VPC pruned: with --no-wait only
  // the start is sent; nothing else is, and the service is not left running by a partial run.
  sb.write("dbform.yaml", manifest({}, {orders(paused, 2000, 8)}));
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
  check_clean(sb);
}
