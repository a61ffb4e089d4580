// Renames: `renamed_from` on services and VPCs, `state mv`, renames outside dbform, and lost
// answers to a rename; through the real binary against the simulator, counting the calls it saw.
#include "service_helpers.h"

using namespace e2e;

TEST_CASE("e2e: renamed_from renames a service in place: the record moves, one rename call, with or without --prune") {
  for (bool prune : {false, true}) {
    Sandbox sb;
    apply_ok(sb, manifest({}, {service_yaml("orders-db"), service_yaml("billing")}));
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
    check_clean_refreshed(sb);
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
  check_clean_refreshed(sb);
}

TEST_CASE("e2e: state mv moves a record without a call, and the next plan renames the service to match") {
  Sandbox sb;
  apply_ok(sb, manifest({}, {service_yaml("orders-db")}));
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
  apply_ok(sb, manifest({}, {service_yaml("orders")}));
  CHECK(sb.count(kRenameService) == 1);
  CHECK(sim_service(sb, "orders").is_object());
  check_clean_refreshed(sb);
}

TEST_CASE("e2e: a service renamed outside dbform is drift and renamed back, and the name guard still holds for creates") {
  Sandbox sb;
  apply_ok(sb, manifest({}, {service_yaml("orders")}));
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
  check_clean_refreshed(sb);

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
    apply_ok(sb, manifest({}, {service_yaml("orders-db")}));
    sb.sim().set_route_faults({{kRenameService, kind, 1, 1}});
    apply_ok(sb, manifest({}, {service_yaml("orders") + "        renamed_from: orders-db\n"}));
    CHECK(sb.count(kRenameService) <= 2);  // the client's one retry of an idempotent call at most
    CHECK(sb.sim().all_services().size() == 1);
    CHECK(sim_service(sb, "orders").is_object());
    json rec = find_resource(sb.state(), service_address("orders"));
    CHECK_FALSE(rec.contains("pending_call"));
    check_clean_refreshed(sb);
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
  apply_ok(sb, manifest({}, {service_yaml("orders-db")}));
  apply_ok(sb, manifest({}, {service_yaml("orders") + "        renamed_from: orders-db\n"}));
  CHECK(sb.count("POST /projects/{project_id}/services") == 0);
  CHECK(sb.count(kRenameService) == 1);
  CHECK(sb.sim().all_services().size() == 1);
  check_clean_refreshed(sb);
}

TEST_CASE("e2e: a VPC rename whose answer was lost is settled by one read, with or without a refresh") {
  using Kind = dbform::RouteFault::Kind;
  for (const char* refresh : {"--no-refresh", "--refresh"}) {
    Sandbox sb;
    sb.write("dbform.yaml", manifest({vpc_yaml("net")}, {}));
    REQUIRE(sb.apply().exit_code == 0);
    sb.sim().set_route_faults({{kRenameVpc, Kind::LoseAnswer, 1, 10}});
    sb.write("dbform.yaml", manifest({vpc_yaml("edge") + "        renamed_from: net\n"}, {}));
    // Every try's answer is lost: the retries wait DBFORM_RETRY_BACKOFF's milliseconds, not seconds.
    RunResult lost = sb.run({"apply", "--auto-approve"}, {{"DBFORM_RETRY_BACKOFF", "10ms"}});
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

TEST_CASE("e2e: DBFORM_RETRY_BACKOFF bounds the waits between retries - a bad value is refused before any call") {
  using Kind = dbform::RouteFault::Kind;
  Sandbox sb;
  sb.write("dbform.yaml", manifest({vpc_yaml("net")}, {}));
  REQUIRE(sb.apply().exit_code == 0);
  sb.sim().set_route_faults({{kRenameVpc, Kind::LoseAnswer, 1, 10}});
  sb.write("dbform.yaml", manifest({vpc_yaml("edge") + "        renamed_from: net\n"}, {}));
  for (const char* bad : {"1h", "31s", "soon"}) {
    const long long before = sb.total_requests();
    RunResult refused = sb.run({"apply", "--auto-approve"}, {{"DBFORM_RETRY_BACKOFF", bad}});
    INFO(refused.describe());
    CHECK(refused.exit_code == 1);
    CHECK(contains(refused.err, std::string("DBFORM_RETRY_BACKOFF must be a duration of at most 30s (like 500ms, the "
                                            "default), not `") + bad + "`; nothing was sent"));
    CHECK(sb.total_requests() == before);
  }
  // Six tries, every answer lost: five waits of at most 10, 20, 40, 80 and 160 ms (500 ms to 8 s by default).
  RunResult lost = sb.run({"apply", "--auto-approve"}, {{"DBFORM_RETRY_BACKOFF", "10ms"}});
  INFO(lost.describe());
  CHECK(lost.exit_code != 0);
  CHECK(sb.count(kRenameVpc) >= 2);
  CHECK(lost.elapsed < std::chrono::seconds(5));
}
