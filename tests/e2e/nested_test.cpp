// Read replica sets in a service and peerings in a VPC, through the
// real binary against the simulator, counting the calls it saw.
#include <httplib.h>

#include "service_helpers.h"

using namespace e2e;

namespace {



// `orders` with the read replica sets given (none: no `read_replicas`).
std::string orders_with(const std::vector<std::string>& sets) {
  std::string yaml = service_yaml("orders");
  if (sets.empty()) return yaml;
  yaml += "        read_replicas:\n";
  for (const auto& s : sets) yaml += s;
  return yaml;
}






}  // namespace

TEST_CASE("e2e: read replica sets are created once their service is READY, with integers, and watched to active") {
  Sandbox sb;
  RunResult r = apply_ok(sb, manifest({}, {orders_with({replica_set("reporting"), sized_replica_set("analytics", 1, 500, 2)})}));
  CHECK(sb.count("POST /projects/{project_id}/services") == 1);
  CHECK(sb.count(kPostSet) == 2);
  const json sets = sb.sim().all_replica_sets();
  REQUIRE(sets.size() == 2);
  const json service = find_resource(sb.state(), service_address("orders"));
  for (const auto& set : sets) CHECK(set["service_id"] == service["id"]);
  const json sent = json::parse(sb.sim().last_body(kPostSet));  // the two go in parallel: either is last
  CHECK((sent == json{{"name", "analytics"}, {"nodes", 1}, {"cpu_millis", 500}, {"memory_gbs", 2}} ||
         sent == json{{"name", "reporting"}, {"nodes", 2}, {"cpu_millis", 1000}, {"memory_gbs", 4}}));

  const json rec = find_resource(sb.state(), kSetAddress);
  REQUIRE(rec.is_object());
  CHECK(rec["kind"] == "replica_set");
  CHECK(rec["parent"] == "orders");
  // The apply's endpoints table lists the sets beside their service.
  CHECK(contains(r.out, "  " + kSetAddress + "  " + rec["endpoint"]["host"].get<std::string>() + ":"));
  CHECK(rec["status"] == "active");
  CHECK_FALSE(rec["id"].get<std::string>().empty());
  CHECK(rec["endpoint"].is_object());
  CHECK(rec["initial_password"] == "");  // it shares its service's: not recorded twice
  CHECK(contains(r.out, kSetAddress));

  // output connects to its endpoint with its service's password, and says whose it is.
  const std::string password = service["initial_password"];
  RunResult uri = sb.run({"output", kSetAddress + ".connection_string"});
  INFO(uri.describe());
  CHECK(uri.out == "postgres://tsdbadmin:" + password + "@" + rec["endpoint"]["host"].get<std::string>() + ":" +
                       std::to_string(rec["endpoint"]["port"].get<int>()) + "/tsdb?sslmode=require\n");
  CHECK(contains(uri.err, "shares the password of its service " + service_address("orders")));
  RunResult listed = sb.run({"output"});
  CHECK(contains(listed.out, kSetAddress + "\n"));
  CHECK(contains(listed.out, "(its service's: " + service_address("orders") + ")"));
  CHECK(!contains(listed.out, password));
  RunResult env = sb.run({"output", "--format", "env", kSetAddress});
  CHECK(contains(env.out, "export DBFORM_ACME_PROD_ORDERS_REPORTING_HOST='" + rec["endpoint"]["host"].get<std::string>()));
  CHECK(contains(env.out, "export DBFORM_ACME_PROD_ORDERS_REPORTING_PASSWORD='" + password + "'"));
  check_clean_refreshed(sb);

  // A refreshed no-op plan reads the sets with one list per service, not one call per set.
  const long long lists = sb.count(kGetSets);
  RunResult plan = sb.run({"plan", "--detailed-exitcode", "--refresh"});
  CHECK(plan.exit_code == 0);
  CHECK(sb.count(kGetSets) == lists + 1);
}

TEST_CASE("e2e: a read replica set is resized, pooled and tagged in place, and a nodes change needs --prune") {
  Sandbox sb;
  apply_ok(sb, manifest({}, {orders_with({replica_set("reporting")})}));
  const std::string id = find_resource(sb.state(), kSetAddress)["id"];
  apply_ok(sb, manifest({}, {orders_with({sized_replica_set("reporting", 2, 2000, 8,
                                                      "            connection_pooler: true\n"
                                                      "            environment_tag: PROD\n")})}));
  CHECK(json::parse(sb.sim().last_body(kResizeSet)) == json{{"cpu_millis", "2000"}, {"memory_gbs", "8"}});
  CHECK(sb.count(kResizeSet) == 1);
  CHECK(sb.count(kPoolerOn) == 1);
  CHECK(json::parse(sb.sim().last_body(kSetEnvironmentOfSet)) == json{{"environment", "PROD"}});
  const json rec = find_resource(sb.state(), kSetAddress);
  CHECK(rec["id"] == id);
  CHECK(rec["pooler_endpoint"].is_object());
  CHECK(sb.count(kPostSet) == 1);
  check_clean_refreshed(sb);

  // nodes cannot change in place: without --prune a conflict, and nothing is called.
  sb.write("dbform.yaml", manifest({}, {orders_with({sized_replica_set("reporting", 3, 2000, 8,
                                                                 "            connection_pooler: true\n"
                                                                 "            environment_tag: PROD\n")})}));
  const json before = writes_of(sb.counts());
  RunResult plan = sb.run({"plan"});
  INFO(plan.describe());
  CHECK(plan.exit_code != 0);
  CHECK(contains(plan.out, "nodes"));
  CHECK(sb.run({"apply", "--auto-approve"}).exit_code != 0);
  CHECK(writes_of(sb.counts()) == before);

  // With --prune: a replacement, shown as one, then one delete and one create (the new set pooled
  // and tagged after it), and a clean re-plan.
  RunResult replace = sb.run({"plan", "--prune"});
  INFO(replace.describe());
  CHECK(replace.exit_code == 0);
  CHECK(contains(replace.out, "will be replaced"));
  CHECK(contains(replace.out, "1 to replace"));
  RunResult json_plan = sb.run({"plan", "--prune", "--format", "json"});
  const json doc = json::parse(json_plan.out);
  CHECK(doc["summary"]["replace"] == 1);
  apply_ok(sb, manifest({}, {orders_with({sized_replica_set("reporting", 3, 2000, 8,
                                                      "            connection_pooler: true\n"
                                                      "            environment_tag: PROD\n")})}),
           {"--prune"});
  CHECK(sb.count(kDeleteSet) == 1);
  CHECK(sb.count(kPostSet) == 2);
  CHECK(json::parse(sb.sim().last_body(kPostSet)) ==
        json{{"name", "reporting"}, {"nodes", 3}, {"cpu_millis", 2000}, {"memory_gbs", 8}});
  CHECK(sb.count(kPoolerOn) == 2);
  const json replaced = find_resource(sb.state(), kSetAddress);
  CHECK(replaced["id"] != id);
  CHECK(replaced["status"] == "active");
  REQUIRE(sb.sim().all_replica_sets().size() == 1);
  CHECK(sb.sim().all_replica_sets()[0]["nodes"] == 3);
  check_clean_refreshed(sb);
}

TEST_CASE("e2e: a protected read replica set is not replaced, even with --prune") {
  Sandbox sb;
  apply_ok(sb, manifest({}, {orders_with({replica_set("reporting", 2, "            deletion_protection: true\n")})}));
  sb.write("dbform.yaml",
           manifest({}, {orders_with({sized_replica_set("reporting", 1, 1000, 4, "            deletion_protection: true\n")})}));
  const json before = writes_of(sb.counts());
  RunResult plan = sb.run({"plan", "--prune"});
  INFO(plan.describe());
  CHECK(plan.exit_code != 0);
  CHECK(contains(plan.out, "protected"));
  CHECK(sb.run({"apply", "--auto-approve", "--prune"}).exit_code != 0);
  CHECK(writes_of(sb.counts()) == before);
}

TEST_CASE("e2e: a read replica set no longer declared is an orphan, deleted with --prune before its service") {
  Sandbox sb;
  apply_ok(sb, manifest({}, {orders_with({replica_set("reporting")}), service_yaml("billing")}));
  sb.write("dbform.yaml", manifest({}, {service_yaml("orders"), service_yaml("billing")}));
  RunResult plan = sb.run({"plan"});
  INFO(plan.describe());
  CHECK(contains(plan.out, kSetAddress));
  CHECK(sb.run({"apply", "--auto-approve"}).exit_code == 0);
  CHECK(sb.count(kDeleteSet) == 0);  // kept without --prune
  apply_ok(sb, manifest({}, {service_yaml("orders"), service_yaml("billing")}), {"--prune"});
  CHECK(sb.count(kDeleteSet) == 1);
  CHECK(sb.sim().all_replica_sets().empty());
  CHECK(find_resource(sb.state(), kSetAddress).is_null());
  check_clean_refreshed(sb);

  // A service and its set pruned together: the set goes first (the API refuses the other order).
  apply_ok(sb, manifest({}, {orders_with({replica_set("reporting")}), service_yaml("billing")}));
  apply_ok(sb, manifest({}, {service_yaml("billing")}), {"--prune"});
  CHECK(sb.count(kDeleteSet) == 2);
  CHECK(sb.sim().all_replica_sets().empty());
  CHECK(sb.sim().all_services().size() == 1);
}

TEST_CASE("e2e: peerings are created once their VPC exists, recorded pending, and the plan shows them until active") {
  Sandbox sb;
  apply_ok(sb, manifest({main_with({peering("vpc-0abc"), peering("vpc-0def", "210987654321")})}, {}));
  CHECK(sb.count(kPostPeering) == 2);
  const json sent = json::parse(sb.sim().last_body(kPostPeering));  // either is last
  CHECK(sent["peer_region_code"] == "us-east-1");
  CHECK((sent["peer_vpc_id"] == "vpc-0abc" || sent["peer_account_id"] == "210987654321"));
  const json rec = find_resource(sb.state(), kPeeringAddress);
  REQUIRE(rec.is_object());
  CHECK(rec["kind"] == "peering");
  CHECK(rec["parent"] == "main");
  CHECK(rec["status"] == "pending");
  check_clean_refreshed(sb);

  // Accepted by the peer: the next apply's refresh records it; failed: the plan shows its message.
  const json peerings = sb.sim().all_peerings();
  REQUIRE(peerings.size() == 2);
  std::string abc, def;
  for (const auto& p : peerings) (p["peer_vpc_id"] == "vpc-0abc" ? abc : def) = p["id"];
  REQUIRE(sb.sim().console_nested("peerings", abc, "accept", "").status == 200);
  REQUIRE(sb.sim().console_nested("peerings", def, "fail", R"({"error_message":"peer account refused"})").status == 200);
  RunResult plan = sb.run({"plan", "--refresh"});
  INFO(plan.describe());
  CHECK(plan.exit_code == 0);
  CHECK(find_resource(sb.state(), kPeeringAddress)["status"] == "pending");  // a plan writes nothing
  CHECK(contains(plan.out, "peer account refused"));
  REQUIRE(sb.apply().exit_code == 0);
  CHECK(find_resource(sb.state(), kPeeringAddress)["status"] == "active");

  // A changed peer is a replacement: a conflict without --prune.
  sb.write("dbform.yaml", manifest({main_with({peering("vpc-0abc", "999999999999"), peering("vpc-0def", "210987654321")})}, {}));
  RunResult changed = sb.run({"plan"});
  CHECK(changed.exit_code != 0);
  CHECK(contains(changed.out, "peer_account_id"));
  CHECK(contains(changed.out, "--prune"));
  // With --prune, through a saved plan: deleted, then created with the new peer.
  const std::string old_id = find_resource(sb.state(), kPeeringAddress)["id"];
  RunResult saved = sb.run({"plan", "--prune", "--out", "replace.plan"});
  INFO(saved.describe());
  REQUIRE(saved.exit_code == 0);
  RunResult applied = sb.run({"apply", "--auto-approve", "replace.plan"});
  INFO(applied.describe());
  REQUIRE(applied.exit_code == 0);
  CHECK(sb.count(kDeletePeering) == 1);
  CHECK(sb.count(kPostPeering) == 3);
  CHECK(json::parse(sb.sim().last_body(kPostPeering))["peer_account_id"] == "999999999999");
  CHECK(find_resource(sb.state(), kPeeringAddress)["id"] != old_id);
  CHECK(sb.sim().all_peerings().size() == 2);

  // Pruned with their VPC: the peerings go first.
  apply_ok(sb, manifest({}, {}), {"--prune"});
  CHECK(sb.count(kDeletePeering) == 3);
  CHECK(sb.sim().all_peerings().empty());
  CHECK(sb.sim().all_vpcs().empty());
}

TEST_CASE("e2e: faults: a lost answer and a 504 after commit on replica set and peering creates: each made once") {
  using Kind = dbform::RouteFault::Kind;
  for (Kind kind : {Kind::LoseAnswer, Kind::GatewayTimeout}) {
    Sandbox sb;
    sb.sim().set_route_faults({{kPostSet, kind, 1, 1}, {kPostPeering, kind, 1, 1}});
    apply_ok(sb, manifest({main_with({peering("vpc-0abc")})}, {orders_with({replica_set("reporting")})}));
    CHECK(sb.count(kPostSet) == 1);
    CHECK(sb.count(kPostPeering) == 1);
    CHECK(sb.sim().all_replica_sets().size() == 1);
    CHECK(sb.sim().all_peerings().size() == 1);
    CHECK(find_resource(sb.state(), kSetAddress)["status"] == "active");
    CHECK_FALSE(find_resource(sb.state(), kPeeringAddress)["id"].get<std::string>().empty());
    check_clean_refreshed(sb);
  }
}

TEST_CASE("e2e: a read replica set of the declared name that the state does not record is not created beside it") {
  Sandbox sb;
  apply_ok(sb, manifest({}, {service_yaml("orders")}));
  const std::string service = find_resource(sb.state(), service_address("orders"))["id"];
  // Made outside dbform (or recorded in a state that was lost).
  httplib::Client client("127.0.0.1", sb.port());
  auto made = client.Post(("/public/api/v1/projects/" + kProject + "/services/" + service + "/replicaSets").c_str(),
                          httplib::Headers{{"Authorization", "Bearer " + kKey}},
                          R"({"name":"reporting","nodes":1,"cpu_millis":1000,"memory_gbs":4})", "application/json");
  REQUIRE(made);
  REQUIRE(made->status == 202);
  sb.write("dbform.yaml", manifest({}, {orders_with({replica_set("reporting")})}));
  for (const char* refresh : {"--refresh", "--no-refresh"}) {
    RunResult r = sb.run({"apply", "--auto-approve", refresh});
    INFO(r.describe());
    CHECK(r.exit_code != 0);
    CHECK(contains(r.all(), "already exists"));
  }
  CHECK(sb.count(kPostSet) == 1);
  CHECK(sb.sim().all_replica_sets().size() == 1);
}

namespace {

// A read replica set or peering made outside dbform, through the API (`path` under the project):
// its id.
const json kPeerBody = {{"peer_account_id", "123456789012"}, {"peer_region_code", "us-east-1"}, {"peer_vpc_id", "vpc-0abc"}};
const json kSetBody = {{"name", "reporting"}, {"nodes", 2}, {"cpu_millis", 1000}, {"memory_gbs", 4}};

}  // namespace

TEST_CASE("e2e: import ADDRESS ID records a read replica set and a peering in their recorded service and VPC") {
  Sandbox sb;
  apply_ok(sb, manifest({main_with({})}, {orders_with({})}));
  const std::string service = find_resource(sb.state(), service_address("orders"))["id"];
  const std::string vpc = find_resource(sb.state(), vpc_address("main"))["id"];
  const std::string set_id = made_outside(sb, "/services/" + service + "/replicaSets", kSetBody);
  const std::string peering_id = made_outside(sb, "/vpcs/" + vpc + "/peerings", kPeerBody);
  sb.write("dbform.yaml", manifest({main_with({peering("vpc-0abc")})}, {orders_with({replica_set("reporting")})}));
  const std::string before = sb.read("dbform.state.json");

  struct Refused {
    std::vector<std::string> args;
    std::string says;
  };
  for (const auto& c : std::vector<Refused>{
           {{"import", "reporting", "nosuchset"}, "acme-prod/services/orders has no read replica set with id nosuchset"},
           {{"import", "acme-prod/vpcs/main/peerings/vpc-0zzz", peering_id}, "is not declared in the manifests"},
           {{"import", "reporting", peering_id}, "has no read replica set with id"}}) {
    RunResult r = sb.run(c.args);
    INFO(r.describe());
    CHECK(r.exit_code == 1);
    CHECK(contains(r.err, c.says));
  }
  CHECK(sb.read("dbform.state.json") == before);

  RunResult set = sb.run({"import", "reporting", set_id});
  INFO(set.describe());
  REQUIRE(set.exit_code == 0);
  CHECK(contains(set.out, "shares the password of its service, acme-prod/services/orders"));
  RunResult peer = sb.run({"import", kPeeringAddress, peering_id});
  INFO(peer.describe());
  REQUIRE(peer.exit_code == 0);
  CHECK(find_resource(sb.state(), kSetAddress)["parent"] == "orders");
  CHECK(find_resource(sb.state(), kPeeringAddress)["id"] == peering_id);
  // Imported while it is being made: apply waits for it to be active, and creates nothing.
  apply_ok(sb, sb.read("dbform.yaml"));
  CHECK(find_resource(sb.state(), kSetAddress)["status"] == "active");
  CHECK(sb.count(kPostSet) == 1);  // the one made outside
  CHECK(sb.count(kPostPeering) == 1);
  check_clean_refreshed(sb);
}

TEST_CASE("e2e: import of a read replica set whose service the state does not record says to import the service first") {
  Sandbox sb;
  const std::string service = console_service(sb, {{"name", "orders"}, {"cpu_millis", "1000"}, {"memory_gbs", "4"}});
  const std::string set_id = made_outside(sb, "/services/" + service + "/replicaSets", kSetBody);
  sb.write("dbform.yaml", manifest({}, {orders_with({replica_set("reporting")})}));
  RunResult r = sb.run({"import", kSetAddress, set_id});
  INFO(r.describe());
  CHECK(r.exit_code == 1);
  CHECK(contains(r.err, "Import it first: `dbform import acme-prod/services/orders ID`"));
  CHECK_FALSE(sb.exists("dbform.state.json"));
  REQUIRE(sb.run({"import", "orders", service}).exit_code == 0);
  REQUIRE(sb.run({"import", kSetAddress, set_id}).exit_code == 0);
  apply_ok(sb, sb.read("dbform.yaml"));
  CHECK(sb.count(kPostSet) == 1);
  check_clean_refreshed(sb);
}

TEST_CASE("e2e: import --project --generate declares read replica sets and peerings under their service and VPC") {
  Sandbox sb;
  dbform::SimResponse made = sb.sim().console_create(kProject, "vpcs", R"({"name":"main","cidr":"10.5.0.0/16","region_code":"us-east-1"})");
  REQUIRE(made.status == 201);
  const std::string vpc = json::parse(made.body)["id"];
  const std::string service = console_service(sb, {{"name", "orders"}});
  made_outside(sb, "/services/" + service + "/replicaSets", kSetBody);
  const std::string pooled = made_outside(sb, "/services/" + service + "/replicaSets",
                                          {{"name", "adhoc"}, {"nodes", 1}, {"cpu_millis", 500}, {"memory_gbs", 2}});
  REQUIRE(sb.sim().console_nested("replica_sets", pooled, "enablePooler", "").status == 200);
  made_outside(sb, "/vpcs/" + vpc + "/peerings", kPeerBody);
  const json writes = writes_of(sb.counts());  // those made outside

  RunResult r = sb.run({"import", "--project", kProject, "--generate", "imported.yaml"});
  INFO(r.describe());
  REQUIRE(r.exit_code == 0);
  const std::string yaml = sb.read("imported.yaml");
  INFO(yaml);
  CHECK(contains(yaml, "read_replicas:"));
  CHECK(contains(yaml, "peerings:"));
  CHECK(contains(yaml, "peer_vpc_id: vpc-0abc"));
  CHECK(contains(yaml, "cpu_millis: 500"));
  for (const char* address : {"acme-prod/services/orders/replicas/reporting", "acme-prod/services/orders/replicas/adhoc",
                              "acme-prod/vpcs/main/peerings/vpc-0abc"})
    CHECK(contains(r.out, address));
  CHECK(!sb.exists("dbform.state.json"));  // recorded nothing: apply records what the plan imports
  // The sets were still being made: apply records them, waits for them, and changes nothing.
  RunResult waited = sb.run({"apply", "-f", "imported.yaml", "--auto-approve"});
  INFO(waited.describe());
  CHECK(waited.exit_code == 0);
  CHECK(contains(waited.out, "5 imported"));
  CHECK(find_resource(sb.state(), "acme-prod/services/orders/replicas/adhoc")["settings"]["connection_pooler"] == true);
  RunResult plan = sb.run({"plan", "-f", "imported.yaml", "--refresh", "--detailed-exitcode"});
  INFO(plan.describe());
  CHECK(plan.exit_code == 0);
  CHECK(sb.state()["resources"].size() == 5);
  CHECK(writes_of(sb.counts()) == writes);  // the API was only read

  // A set added in the console to a service the state records now: declared where that service is.
  made_outside(sb, "/services/" + service + "/replicaSets", {{"name", "late"}, {"nodes", 1}, {"cpu_millis", 500}, {"memory_gbs", 2}});
  const std::string before = sb.read("dbform.state.json");
  RunResult again = sb.run({"import", "--project", kProject, "--generate", "more.yaml"});
  INFO(again.describe());
  CHECK(again.exit_code == 1);
  CHECK(contains(again.err, "is in acme-prod/services/orders, which the state records already: declare it under"));
  CHECK(contains(again.err, "`dbform import acme-prod/services/orders/replicas/late "));
  CHECK_FALSE(sb.exists("more.yaml"));
  CHECK(sb.read("dbform.state.json") == before);
}

TEST_CASE("e2e: a read replica set just made is not taken for deleted while its service's list lags behind") {
  // The API has no read of one set, only its service's list: missing from it within the settle
  // window of its create is "not listed yet", never "deleted outside dbform" (which would plan a
  // second create).
  auto config = default_sim_config();
  config.faults.list_lag = dbform::Duration(4000);
  Sandbox sb(config);
  apply_ok(sb, manifest({}, {orders_with({})}));
  apply_ok(sb, manifest({}, {orders_with({replica_set("reporting")})}), {"--no-wait"});
  CHECK(sb.count(kPostSet) == 1);
  RunResult plan = sb.run({"plan", "--refresh"});
  INFO(plan.describe());
  CHECK(plan.exit_code == 0);
  CHECK_FALSE(contains(plan.all(), "deleted outside"));
  CHECK(contains(plan.out, "Plan: 0 to create"));
  CHECK(contains(plan.out, "wait for READY, no new create"));
  apply_ok(sb, sb.read("dbform.yaml"));  // watched to active through the lag
  CHECK(sb.count(kPostSet) == 1);
  CHECK(find_resource(sb.state(), kSetAddress)["status"] == "active");
  check_clean_refreshed(sb);
}

TEST_CASE("e2e: a created_at edited into the future does not hide a read replica set gone from its list") {
  // "Created lately" is what lets a lagging list miss a set; a hand-edited created_at years ahead
  // must not make that last for ever.
  Sandbox sb;
  apply_ok(sb, manifest({}, {orders_with({replica_set("reporting")})}));
  const std::string id = find_resource(sb.state(), kSetAddress)["id"];
  REQUIRE(sb.sim().console_nested("replica_sets", id, "delete", "").status == 200);  // deleted outside dbform
  json state = sb.state();
  for (auto& r : state["resources"])
    if (r["address"] == kSetAddress) r["created_at"] = "2099-01-01T00:00:00Z";
  sb.write("dbform.state.json", state.dump(2));
  RunResult plan = sb.run({"plan"});
  INFO(plan.describe());
  CHECK(plan.exit_code == 0);
  CHECK(contains(plan.out, "deleted outside dbform"));
  CHECK(contains(plan.out, "Plan: 1 to create"));
}

TEST_CASE("e2e: state rm of a service forgets its read replica sets with it, and they keep running") {
  Sandbox sb;
  apply_ok(sb, manifest({}, {orders_with({replica_set("reporting")})}));
  const long long requests = sb.total_requests();
  RunResult rm = sb.run({"state", "rm", "orders"});
  INFO(rm.describe());
  CHECK(rm.exit_code == 0);
  CHECK(contains(rm.out, "Removed " + kSetAddress + " from the state"));
  CHECK(sb.state()["resources"].empty());
  CHECK(sb.total_requests() == requests);
  CHECK(sb.sim().all_replica_sets().size() == 1);
}
