// Changing databases in place: resizes, tags, HA and synchronous replicas, VPC attachments, the
// pooler, and saved plans of updates; through the real binary against the simulator, counting the
// calls it saw.
#include "service_helpers.h"

using namespace e2e;

namespace {

const std::string kAttach = "POST /projects/{project_id}/services/{service_id}/attachToVPC";
const std::string kDetach = "POST /projects/{project_id}/services/{service_id}/detachFromVPC";
const std::string kEnablePooler = "POST /projects/{project_id}/services/{service_id}/enablePooler";
const std::string kDisablePooler = "POST /projects/{project_id}/services/{service_id}/disablePooler";

}  // namespace

TEST_CASE("e2e: a resize, a new tag and HA replicas: one call each with the published bodies, then READY") {
  Sandbox sb;
  sb.write("dbform.yaml", manifest({}, {orders_yaml(), service_yaml("billing")}));
  REQUIRE(sb.apply().exit_code == 0);
  const json before = writes_of(sb.counts());

  sb.write("dbform.yaml", manifest({}, {orders_yaml("        environment_tag: PROD\n        replica_count: 2\n", 2000, 8),
                                        service_yaml("billing")}));
  RunResult plan = sb.run({"plan", "--detailed-exitcode"});
  INFO(plan.describe());
  CHECK(plan.exit_code == 2);
  CHECK(contains(plan.out, "will be updated in place"));
  CHECK(contains(plan.out, R"(resize {"cpu_millis":"2000","memory_gbs":"8"})"));
  CHECK(contains(plan.out, R"(setEnvironment {"environment":"PROD"})"));
  CHECK(contains(plan.out, R"(setHA {"replica_count":2})"));
  CHECK(contains(plan.out, "Plan: 0 to create, 1 to update, 0 to wait for, 1 unchanged."));

  RunResult r = sb.apply();
  INFO(r.describe() << "\ncounts: " << sb.counts().dump());
  REQUIRE(r.exit_code == 0);
  CHECK(contains(r.out, "UPGRADING"));
  CHECK(contains(r.out, "0 created, 1 updated,"));  // one resource, however many calls it took
  // Exactly one call of each; the simulator refuses any body the published document would.
  json expected = before;
  for (const auto& call : {kResize, kSetEnvironment, kSetHA}) expected[call] = 1;
  CHECK(writes_of(sb.counts()) == expected);
  json orders = sim_service(sb, "orders");
  CHECK(orders["status"] == "READY");
  CHECK(orders["resources"][0]["spec"]["cpu_millis"] == 2000);
  CHECK(orders["resources"][0]["spec"]["memory_gbs"] == 8);
  CHECK(orders["metadata"]["environment"] == "PROD");
  CHECK(orders["ha_replicas"]["replica_count"] == 2);
  json rec = find_resource(sb.state(), service_address("orders"));
  CHECK(rec["status"] == "READY");
  CHECK(rec["settings"]["cpu_millis"] == "2000");
  CHECK_FALSE(rec.contains("pending_call"));
  check_clean(sb);
  check_clean(sb, {"--refresh"});
}

TEST_CASE("e2e: sync_replica_count: one setHA with both counts, then a clean plan") {
  Sandbox sb;
  apply_ok(sb, manifest({}, {orders_yaml("        replica_count: 1\n")}));
  sb.write("dbform.yaml", manifest({}, {orders_yaml("        replica_count: 2\n        sync_replica_count: 1\n")}));
  RunResult plan = sb.run({"plan"});
  INFO(plan.describe());
  CHECK(contains(plan.out, R"(setHA {"replica_count":2,"sync_replica_count":1})"));
  apply_ok(sb, manifest({}, {orders_yaml("        replica_count: 2\n        sync_replica_count: 1\n")}));
  CHECK(sb.count(kSetHA) == 1);
  CHECK(sim_service(sb, "orders")["ha_replicas"] == json{{"replica_count", 2}, {"sync_replica_count", 1}});
  check_clean_refreshed(sb);
  // Only the synchronous count changes: one setHA, with the declared replica_count.
  apply_ok(sb, manifest({}, {orders_yaml("        replica_count: 2\n        sync_replica_count: 2\n")}));
  CHECK(sb.count(kSetHA) == 2);
  CHECK(sim_service(sb, "orders")["ha_replicas"]["sync_replica_count"] == 2);
  check_clean_refreshed(sb);
}

TEST_CASE("e2e: sync_replica_count above replica_count is a located error, and nothing is called") {
  Sandbox sb;
  sb.write("dbform.yaml", manifest({}, {orders_yaml("        replica_count: 1\n        sync_replica_count: 2\n")}));
  for (const char* command : {"validate", "plan", "apply"}) {
    RunResult r = command == std::string("apply") ? sb.run({"apply", "--auto-approve"}) : sb.run({command});
    INFO(r.describe());
    CHECK(r.exit_code != 0);
    CHECK(contains(r.err, "dbform.yaml:"));
    CHECK(contains(r.err, "sync_replica_count 2 is more than replica_count 1"));
  }
  CHECK(writes_of(sb.counts()).empty());
}

TEST_CASE("e2e: vpc: main attaches the service with the VPC's id, and removing the line detaches it") {
  Sandbox sb;
  // Created and attached in one apply: the VPC first, then the service, then the attachment.
  sb.write("dbform.yaml", manifest({vpc_yaml("main")}, {orders_yaml("        vpc: main\n")}));
  RunResult r = sb.apply();
  INFO(r.describe() << "\ncounts: " << sb.counts().dump());
  REQUIRE(r.exit_code == 0);
  const std::string vpc_id = find_resource(sb.state(), "acme-prod/vpcs/main")["id"];
  CHECK(sb.count(kAttach) == 1);
  CHECK(sim_service(sb, "orders")["vpc_endpoint"]["vpc_id"] == vpc_id);
  CHECK(find_resource(sb.state(), service_address("orders"))["settings"]["vpc"] == "main");
  check_clean(sb);
  check_clean(sb, {"--refresh"});

  sb.write("dbform.yaml", manifest({vpc_yaml("main")}, {orders_yaml()}));
  RunResult plan = sb.run({"plan"});
  CHECK(contains(plan.out, "detachFromVPC {\"vpc_id\":\"" + vpc_id + "\"}"));
  RunResult detach = sb.apply();
  INFO(detach.describe());
  REQUIRE(detach.exit_code == 0);
  CHECK(sb.count(kDetach) == 1);
  CHECK_FALSE(sim_service(sb, "orders").contains("vpc_endpoint"));
  check_clean(sb, {"--refresh"});
}

TEST_CASE("e2e: connection_pooler: true turns the pooler on, false turns it off, unset leaves it") {
  Sandbox sb;
  sb.write("dbform.yaml", manifest({}, {orders_yaml("        connection_pooler: true\n")}));
  REQUIRE(sb.apply().exit_code == 0);
  CHECK(sb.count(kEnablePooler) == 1);
  CHECK(sim_service(sb, "orders").contains("connection_pooler"));
  RunResult pooler = sb.run({"output", "orders.pooler_port"});
  CHECK(pooler.exit_code == 0);
  CHECK_FALSE(pooler.out.empty());

  sb.write("dbform.yaml", manifest({}, {orders_yaml("        connection_pooler: false\n")}));
  REQUIRE(sb.apply().exit_code == 0);
  CHECK(sb.count(kDisablePooler) == 1);
  CHECK_FALSE(sim_service(sb, "orders").contains("connection_pooler"));
  CHECK(sb.run({"output", "orders.pooler_port"}).exit_code != 0);

  sb.write("dbform.yaml", manifest({}, {orders_yaml()}));  // not managed: nothing is sent
  const json writes = writes_of(sb.counts());
  check_clean(sb, {"--refresh"});
  REQUIRE(sb.apply().exit_code == 0);
  CHECK(writes_of(sb.counts()) == writes);
}

TEST_CASE("e2e: with --no-wait a new service's attachment is left to the next apply, which makes it once") {
  Sandbox sb;
  sb.write("dbform.yaml", manifest({vpc_yaml("main")}, {orders_yaml("        vpc: main\n")}));
  RunResult first = sb.apply({"--no-wait"});
  REQUIRE(first.exit_code == 0);
  CHECK(sb.count(kAttach) == 0);  // an attachment needs a READY service, which was not waited for
  RunResult second = sb.apply();
  INFO(second.describe());
  REQUIRE(second.exit_code == 0);
  CHECK(sb.count(kAttach) == 1);
  CHECK(sb.count(kPostService) == 1);
}

TEST_CASE("e2e: a saved plan of updates applies exactly its calls, and is refused once the service changed") {
  Sandbox sb;
  sb.write("dbform.yaml", manifest({vpc_yaml("main")}, {orders_yaml()}));
  REQUIRE(sb.apply().exit_code == 0);
  sb.write("dbform.yaml", manifest({vpc_yaml("main")}, {orders_yaml("        vpc: main\n        replica_count: 1\n")}));
  RunResult saved = sb.run({"plan", "--refresh", "--out", "tfplan"});
  INFO(saved.describe());
  REQUIRE(saved.exit_code == 0);
  const json plan = json::parse(sb.read("tfplan"));
  json calls;
  for (const auto& a : plan["actions"])
    if (a["name"] == "orders") calls = a["calls"];
  REQUIRE(calls.size() == 2);
  CHECK(calls[0]["call"] == "setHA");
  CHECK(calls[1]["call"] == "attachToVPC");

  // Someone resizes it in the console and a refresh records that: the saved plan is stale.
  const std::string id = find_resource(sb.state(), service_address("orders"))["id"];
  REQUIRE(sb.sim().console(id, "resize", R"({"cpu_millis": 2000, "memory_gbs": 8})").status == 200);
  RunResult refreshed = sb.run({"plan", "--refresh"});
  CHECK(contains(refreshed.out, "changed outside dbform"));
  RunResult stale = sb.run({"apply", "tfplan"});
  INFO(stale.describe());
  CHECK(stale.exit_code == 1);
  CHECK(contains(stale.err, "stale"));
  CHECK(sb.count(kSetHA) == 0);

  // A fresh plan, saved and applied as it is: its calls and nothing else.
  REQUIRE(sb.run({"plan", "--refresh", "--out", "tfplan"}).exit_code == 0);
  RunResult r = sb.run({"apply", "tfplan", "--poll-interval", "100ms"});
  INFO(r.describe() << "\ncounts: " << sb.counts().dump());
  REQUIRE(r.exit_code == 0);
  CHECK(sb.count(kResize) == 1);
  CHECK(sb.count(kSetHA) == 1);
  CHECK(sb.count(kAttach) == 1);
  check_clean(sb, {"--refresh"});
}
