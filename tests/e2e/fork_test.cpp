// Forks (`fork:`): of a service the same apply creates, of a paused source, at a point in time, and
// a lost answer to forkService; through the real binary against the simulator, counting the calls.
#include "service_helpers.h"

using namespace e2e;

namespace {

std::string staging_fork(const std::string& strategy = "LAST_SNAPSHOT", const std::string& extra = "") {
  return "      - name: orders-staging\n        fork:\n          from: orders\n          strategy: " + strategy + "\n" +
         extra;
}


}  // namespace

TEST_CASE("e2e: a fork of a service the same apply creates waits for it to be READY, then one forkService") {
  Sandbox sb;
  RunResult r = apply_ok(sb, manifest({}, {staging_fork(), orders_yaml()}));  // the fork is declared first
  CHECK(sb.count(kFork) == 1);
  CHECK(sb.count("POST /projects/{project_id}/services") == 1);
  const json source = find_resource(sb.state(), service_address("orders"));
  const json fork = find_resource(sb.state(), service_address("orders-staging"));
  CHECK(fork["status"] == "READY");
  CHECK_FALSE(fork["initial_password"].get<std::string>().empty());
  CHECK(sim_service(sb, "orders-staging")["forked_from"]["service_id"] == source["id"]);
  const json sent = json::parse(sb.sim().last_body(kFork));
  CHECK(sent == json{{"name", "orders-staging"}, {"fork_strategy", "LAST_SNAPSHOT"}});
  check_clean_refreshed(sb);

  // `fork` is create-time only: a later change is shown as ignored, and nothing is called.
  sb.write("dbform.yaml", manifest({}, {staging_fork("NOW"), orders_yaml()}));
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
  sb.write("dbform.yaml", manifest({}, {orders_yaml(), staging_fork()}));
  RunResult r = sb.run({"apply", "--auto-approve", "--no-wait"});
  INFO(r.describe());
  CHECK(r.exit_code == 0);
  CHECK(contains(r.out, "orders-staging: left for the next apply: not created: its fork source"));
  CHECK(sb.count(kFork) == 0);
  CHECK(sb.count("POST /projects/{project_id}/services") == 1);  // the source is created
  apply_ok(sb, manifest({}, {orders_yaml(), staging_fork()}));
  CHECK(sb.count(kFork) == 1);
  check_clean_refreshed(sb);
}

// A new fork of a source that is paused and stays declared paused is not a conflict: the source is
// started for it and stopped again, as for its own changes (this test once expected a conflict).
TEST_CASE("e2e: a fork of a source declared paused is made before the source's stop, and a paused source is started for it") {
  Sandbox sb;
  const std::string paused = "        paused: true\n";
  apply_ok(sb, manifest({}, {orders_yaml(paused), staging_fork()}));  // created, forked, then stopped
  CHECK(sb.count(kFork) == 1);
  CHECK(sb.count(kStop) == 1);
  CHECK(sim_service(sb, "orders")["status"] == "PAUSED");
  CHECK(sim_service(sb, "orders-staging")["status"] == "READY");
  check_clean_refreshed(sb);

  // Paused, and staying paused: started for the new fork, forked once, stopped again; the plan says so.
  const std::string second = "      - name: orders-qa\n        fork:\n          from: orders\n          strategy: LAST_SNAPSHOT\n";
  sb.write("dbform.yaml", manifest({}, {orders_yaml(paused), staging_fork(), second}));
  RunResult plan = sb.run({"plan"});
  INFO(plan.describe());
  CHECK(plan.exit_code == 0);
  CHECK(contains(plan.out, "paused: it is started for the fork `orders-qa`, and stopped again"));
  apply_ok(sb, manifest({}, {orders_yaml(paused), staging_fork(), second}));
  CHECK(sb.count(kStart) == 1);
  CHECK(sb.count(kFork) == 2);
  CHECK(sb.count(kStop) == 2);
  CHECK(sim_service(sb, "orders")["status"] == "PAUSED");
  check_clean_refreshed(sb);
}

TEST_CASE("e2e: a point-in-time fork sends its target_time, and a fork without a declared source is a located error") {
  Sandbox sb;
  apply_ok(sb, manifest({}, {orders_yaml()}));
  apply_ok(sb, manifest({}, {orders_yaml(), staging_fork("PITR", "          target_time: 2026-11-01T00:00:00Z\n")}));
  const json sent = json::parse(sb.sim().last_body(kFork));
  CHECK(sent["fork_strategy"] == "PITR");
  CHECK(sent["target_time"] == "2026-11-01T00:00:00Z");

  for (const std::string& bad : {staging_fork("PITR"), staging_fork("NOW", "          target_time: 2026-11-01T00:00:00Z\n"),
                                 staging_fork("LATEST"), staging_fork("PITR", "          target_time: 2026-02-30T00:00:00Z\n"),
                                 std::string("      - name: orders-staging\n        fork:\n          from: ordres\n"
                                             "          strategy: NOW\n")}) {
    sb.write("dbform.yaml", manifest({}, {orders_yaml(), bad}));
    RunResult r = sb.run({"validate"});
    INFO(bad << r.describe());
    CHECK(r.exit_code != 0);
    CHECK(contains(r.err, "dbform.yaml:"));
  }
}

TEST_CASE("e2e: validate names a fork's missing strategy and its unknown source in one run") {
  Sandbox sb;
  sb.write("dbform.yaml", manifest({}, {orders_yaml(), "      - name: orders-staging\n        fork:\n          from: ordres\n"}));
  RunResult r = sb.run({"validate"});
  INFO(r.describe());
  CHECK(r.exit_code == 1);
  CHECK(contains(r.err, "strategy"));
  CHECK(contains(r.err, "is a fork of `ordres`, which"));
  CHECK(contains(r.err, "did you mean `orders`?"));
  CHECK(contains(r.err, "2 error(s)"));
}

TEST_CASE("e2e: faults: a lost answer and a 504 after commit on forkService: one fork, adopted by name") {
  using Kind = dbform::RouteFault::Kind;
  for (Kind kind : {Kind::LoseAnswer, Kind::GatewayTimeout}) {
    Sandbox sb;
    apply_ok(sb, manifest({}, {orders_yaml()}));
    sb.sim().set_route_faults({{kFork, kind, 1, 1}});
    RunResult r = apply_ok(sb, manifest({}, {orders_yaml(), staging_fork()}));
    CHECK(sb.count(kFork) == 1);  // never re-sent: looked up by name, and adopted
    CHECK(sb.sim().all_services().size() == 2);
    const json fork = find_resource(sb.state(), service_address("orders-staging"));
    CHECK(fork["status"] == "READY");
    // The answer with its password was lost: a new one was set, and is recorded.
    CHECK(fork["initial_password"] == sb.sim().current_password(fork["id"]));
    check_clean_refreshed(sb);
  }
}

TEST_CASE("e2e: a fork of a source declared paused is made by starting the source, forking it, and stopping it again") {
  Sandbox sb;
  apply_ok(sb, manifest({}, {orders_yaml(kPaused)}));
  sb.write("dbform.yaml", manifest({}, {orders_yaml(kPaused), qa_fork()}));
  RunResult plan = sb.run({"plan", "--detailed-exitcode"});
  INFO(plan.describe());
  CHECK(plan.exit_code == 2);
  CHECK(contains(plan.out, "paused: it is started for the fork `orders-qa`, and stopped again"));
  CHECK(!contains(plan.out, "conflict"));

  apply_ok(sb, manifest({}, {orders_yaml(kPaused), qa_fork()}));
  CHECK(sb.count(kStart) == 1);
  CHECK(sb.count(kFork) == 1);
  CHECK(sb.count(kStop) == 2);
  CHECK(sim_service(sb, "orders")["status"] == "PAUSED");
  CHECK(sim_service(sb, "orders-qa")["status"] == "READY");
  check_clean(sb);
}
