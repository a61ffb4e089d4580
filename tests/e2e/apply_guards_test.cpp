// What apply confirms before it deletes, creates, renames or records: protection on every path to a
// delete, absences of nested resources confirmed before a create, names checked at apply time for
// renames too, a replacement never recorded as the resource it replaces. Each through the real
// binary against the simulator, counting what the simulator received.
#include "service_helpers.h"

using namespace e2e;

namespace {

const std::string kProtected = "            deletion_protection: true\n";



}  // namespace

// Item 1, and every other path to a delete of what holds a protected resource.
TEST_CASE("e2e: guards four: --target never deletes a service or VPC whose read replica set or peering is protected") {
  Sandbox sb;
  apply_ok(sb, manifest({main_with({peering("vpc-0abc", "123456789012", kProtected)})},
                        {service_with("orders", {replica_set("reporting", 2, kProtected)}), service_yaml("billing")}));
  sb.write("dbform.yaml", manifest({}, {service_yaml("billing")}));  // orders and main are no longer declared
  const json before = writes_of(sb.counts());
  RunResult all = sb.run({"apply", "--auto-approve", "--prune"});
  INFO(all.describe());
  CHECK(all.exit_code == 1);
  for (const std::string& target : {"acme-prod/services/orders", "services/orders", "acme-prod/vpcs/main"}) {
    RunResult plan = sb.run({"plan", "--prune", "--target", target});
    INFO(target << ": " << plan.describe());
    CHECK(plan.exit_code == 1);
    CHECK(contains(plan.out, "protected"));
    for (const std::string& refresh : {"--refresh", "--no-refresh"}) {
      RunResult applied = sb.run({"apply", "--auto-approve", "--prune", refresh, "--target", target});
      INFO(target << " " << refresh << ": " << applied.describe());
      CHECK(applied.exit_code == 1);
      CHECK(contains(applied.out, "protected"));
    }
    // A saved plan: refused as it is made, and refused when applied.
    fs::remove(sb.dir() / "t.plan");
    CHECK(sb.run({"plan", "--prune", "--no-refresh", "--target", target, "--out", "t.plan"}).exit_code == 1);
    if (sb.exists("t.plan")) CHECK(sb.run({"apply", "t.plan"}).exit_code == 1);
  }
  CHECK(sb.count(kDeleteService) == 0);
  CHECK(sb.count(kDeleteSet) == 0);
  CHECK(sb.count(kDeleteVpc) == 0);
  CHECK(sb.count(kDeletePeering) == 0);
  CHECK(writes_of(sb.counts()) == before);
  CHECK(sb.sim().all_replica_sets().size() == 1);
  CHECK(sb.sim().all_peerings().size() == 1);
}

// Item 2: protection declared together with a change that needs a replacement.
TEST_CASE("e2e: guards four: a replacement is refused when the declaration adds deletion_protection") {
  Sandbox sb;
  apply_ok(sb, manifest({main_with({peering("vpc-0abc")})}, {service_with("orders", {replica_set("reporting", 2)})}));
  // nodes and the peer account change, and both are declared protected in the same edit.
  sb.write("dbform.yaml", manifest({main_with({peering("vpc-0abc", "999999999999", kProtected)})},
                                   {service_with("orders", {replica_set("reporting", 1, kProtected)})}));
  const json before = writes_of(sb.counts());
  RunResult plan = sb.run({"plan", "--prune"});
  INFO(plan.describe());
  CHECK(plan.exit_code == 1);
  CHECK(contains(plan.out, "protected"));
  CHECK_FALSE(contains(plan.out, "will be replaced"));
  for (const std::vector<std::string>& args :
       {std::vector<std::string>{"apply", "--auto-approve", "--prune"},
        std::vector<std::string>{"apply", "--auto-approve", "--prune", "--no-refresh"},
        std::vector<std::string>{"apply", "--auto-approve", "--prune", "--target", kSetAddress},
        std::vector<std::string>{"apply", "--auto-approve", "--prune", "--target", kPeeringAddress}}) {
    RunResult r = sb.run(args);
    INFO(r.describe());
    CHECK(r.exit_code == 1);
  }
  CHECK(sb.count(kDeleteSet) == 0);
  CHECK(sb.count(kDeletePeering) == 0);
  CHECK(sb.count(kPostSet) == 1);
  CHECK(sb.count(kPostPeering) == 1);
  CHECK(writes_of(sb.counts()) == before);
}

// Item 3: one list answering [] is not proof that a read replica set is gone.
TEST_CASE("e2e: guards four: a read replica set missing from one list is looked up again before a second is created") {
  Sandbox sb;
  apply_ok(sb, manifest({main_with({peering("vpc-0abc")})}, {service_with("orders", {replica_set("reporting")})}));
  const std::string set_id = find_resource(sb.state(), kSetAddress)["id"];
  const std::string peering_id = find_resource(sb.state(), kPeeringAddress)["id"];
  // Both made long before the settle window: no "created lately" excuse for a lagging list.
  json state = sb.state();
  for (auto& r : state["resources"]) r["created_at"] = "2026-01-01T00:00:00Z";
  sb.write("dbform.state.json", state.dump(2));
  using Kind = dbform::RouteFault::Kind;
  sb.sim().set_route_faults({{kGetSets, Kind::EmptyList, sb.count(kGetSets) + 1, 1},
                             {kGetPeerings, Kind::EmptyList, sb.count(kGetPeerings) + 1, 1}});
  RunResult r = sb.apply();
  INFO(r.describe() << "\ncounts: " << sb.counts().dump());
  CHECK(r.exit_code == 0);
  CHECK(sb.sim().fault_counts().value("list answered empty: " + kGetSets, 0) == 1);
  CHECK(sb.count(kPostSet) == 1);
  CHECK(sb.count(kPostPeering) == 1);
  CHECK(sb.sim().all_replica_sets().size() == 1);
  CHECK(sb.sim().all_peerings().size() == 1);
  CHECK(find_resource(sb.state(), kSetAddress)["id"] == set_id);
  CHECK(find_resource(sb.state(), kPeeringAddress)["id"] == peering_id);
  check_clean(sb);
}

// Item 4: a rename is a claim on a name, checked against the live names at apply time.
TEST_CASE("e2e: guards four: apply --no-refresh and a --no-refresh saved plan never rename into a name taken meanwhile") {
  const std::string renamed = manifest({vpc_yaml("net") + "        renamed_from: main\n"},
                                       {service_yaml("orders-v2") + "        renamed_from: orders\n"});
  for (const bool saved : {false, true}) {
    Sandbox sb;
    apply_ok(sb, manifest({vpc_yaml("main")}, {service_yaml("orders")}));
    sb.write("dbform.yaml", renamed);
    if (saved) {
      RunResult plan = sb.run({"plan", "--no-refresh", "--out", "rename.plan"});
      INFO(plan.describe());
      REQUIRE(plan.exit_code == 0);
      CHECK(contains(plan.out, "renamed from"));
    }
    // Taken after the plan was made, by resources no record holds.
    console_service(sb, {{"name", "orders-v2"}, {"region_code", "us-east-1"}});
    REQUIRE(sb.sim().console_create(kProject, "vpcs", R"({"name":"net","cidr":"10.9.0.0/16","region_code":"us-east-1"})")
                .status == 201);
    RunResult r = saved ? sb.run({"apply", "rename.plan"}) : sb.run({"apply", "--auto-approve", "--no-refresh"});
    INFO((saved ? "saved plan: " : "--no-refresh: ") << r.describe());
    CHECK(r.exit_code == 1);
    CHECK(contains(r.all(), "not renamed"));
    CHECK(contains(r.all(), "orders-v2"));
    CHECK(sb.count(kRenameService) == 0);
    CHECK(sb.count(kRenameVpc) == 0);
    int named_orders = 0;
    for (const auto& s : sb.sim().all_services()) named_orders += s["name"] == "orders";
    CHECK(named_orders == 1);
  }
}

// Item 5: the lookup after a lost answer never takes the peering being replaced.
TEST_CASE("e2e: guards four: a replaced peering whose create's answer is lost is not recorded as the old, deleting one") {
  auto config = default_sim_config();
  config.faults.peerings_linger = true;
  config.deleting_delay = std::chrono::minutes(5);  // the old one is listed as deleting throughout
  config.faults.list_lag = std::chrono::milliseconds(1500);  // the new one is listed only later
  Sandbox sb(config);
  apply_ok(sb, manifest({main_with({peering("vpc-0abc")})}, {}));
  const std::string old_id = find_resource(sb.state(), kPeeringAddress)["id"];
  sb.sim().set_route_faults({{kPostPeering, dbform::RouteFault::Kind::GatewayTimeout, 2, 1}});
  RunResult r = apply_ok(sb, manifest({main_with({peering("vpc-0abc", "999999999999")})}, {}), {"--prune"});
  CHECK(sb.count(kDeletePeering) == 1);
  CHECK(sb.count(kPostPeering) == 2);  // one create, answered 504 after it was made, never sent again
  std::string new_id;
  for (const auto& p : sb.sim().all_peerings())
    if (p["peer_account_id"] == "999999999999") new_id = p["id"];
  REQUIRE_FALSE(new_id.empty());
  const json rec = find_resource(sb.state(), kPeeringAddress);
  CHECK(rec["id"] == new_id);
  CHECK(rec["id"] != old_id);
  RunResult plan = sb.run({"plan", "--detailed-exitcode"});
  INFO(plan.describe());
  CHECK(plan.exit_code == 0);
  CHECK(sb.count(kPostPeering) == 2);
}
