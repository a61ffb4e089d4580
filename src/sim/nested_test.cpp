// Read replica sets and VPC peerings in the simulator: the routes, bodies and statuses of the
// vendor's document, and the console routes tests use to change them "outside dbform".
#include <catch2/catch.hpp>

#include "sim/simulator.h"
#include "sim/test_support.h"

using dbform::SimConfig;
using dbform::SimResponse;
using nlohmann::json;

namespace {

SimConfig nested_config() { return dbform::test::timed_config({{"key-a", "proj-a", "ci-key"}}, 11); }

struct Nested : dbform::test::SimCore {
  explicit Nested(SimConfig config = nested_config()) : SimCore(std::move(config)) {}

  // A READY service's id.
  std::string service(const std::string& name = "orders") {
    const SimResponse created = call("POST", "/projects/proj-a/services", json{{"name", name}}.dump());
    clock.advance(std::chrono::seconds(4));
    return json::parse(created.body)["service_id"];
  }
  std::string vpc() {
    const json body = {{"name", "main"}, {"cidr", "10.0.0.0/16"}, {"region_code", "us-east-1"}};
    return json::parse(call("POST", "/projects/proj-a/vpcs", body.dump()).body)["id"];
  }
  json sets_of(const std::string& service_id) {
    return json::parse(call("GET", "/projects/proj-a/services/" + service_id + "/replicaSets").body);
  }
};

const json kSet = {{"name", "reporting"}, {"nodes", 2}, {"cpu_millis", 1000}, {"memory_gbs", 4}};

}  // namespace

TEST_CASE("sim: a read replica set is created with integers, creating then active, and resized with digit strings") {
  Nested h;
  const std::string svc = h.service();
  const std::string sets = "/projects/proj-a/services/" + svc + "/replicaSets";
  SimResponse created = h.call("POST", sets, kSet.dump());
  REQUIRE(created.status == 202);
  const json set = json::parse(created.body);
  const std::string id = set["id"];
  CHECK(set["status"] == "creating");
  CHECK(set["nodes"] == 2);
  CHECK(set["cpu_millis"] == 1000);
  CHECK(set["endpoint"]["host"].get<std::string>().find(id) == 0);
  h.clock.advance(std::chrono::seconds(3));
  CHECK(h.sets_of(svc).at(0)["status"] == "active");

  // The create takes integers; digit strings are refused, as the document's types say.
  json strings = kSet;
  strings["cpu_millis"] = "1000";
  CHECK(h.call("POST", sets, strings.dump()).status == 400);
  CHECK(h.call("POST", sets, json{{"name", "r"}, {"nodes", 0}, {"cpu_millis", 1}, {"memory_gbs", 1}}.dump()).status ==
        400);
  // The resize takes digit strings; integers are refused.
  CHECK(h.call("POST", sets + "/" + id + "/resize", json{{"cpu_millis", 2000}, {"memory_gbs", 8}}.dump()).status == 400);
  SimResponse resized = h.call("POST", sets + "/" + id + "/resize", json{{"cpu_millis", "2000"}, {"memory_gbs", "8"}}.dump());
  CHECK(resized.status == 202);
  CHECK(h.sets_of(svc).at(0)["status"] == "resizing");
  CHECK(h.call("POST", sets + "/" + id + "/enablePooler").status == 409);  // only when active
  h.clock.advance(std::chrono::seconds(2));
  const json after = h.sets_of(svc).at(0);
  CHECK(after["status"] == "active");
  CHECK(after["cpu_millis"] == 2000);
  CHECK(after["memory_gbs"] == 8);

  CHECK(h.call("POST", sets + "/" + id + "/enablePooler").status == 200);
  CHECK(h.sets_of(svc).at(0)["connection_pooler"]["endpoint"]["port"].is_number());
  CHECK(h.call("POST", sets + "/" + id + "/setEnvironment", json{{"environment", "PROD"}}.dump()).status == 200);
  CHECK(h.sets_of(svc).at(0)["metadata"]["environment"] == "PROD");
  CHECK(h.call("POST", sets + "/" + id + "/disablePooler").status == 200);
  CHECK_FALSE(h.sets_of(svc).at(0).contains("connection_pooler"));
  CHECK(h.call("GET", sets + "/" + id).status == 405);  // the document has no GET of one replica set
}

TEST_CASE("sim: a replica set needs its service READY, and the service's delete waits for its replica sets") {
  Nested h;
  const std::string fresh = json::parse(h.call("POST", "/projects/proj-a/services", json{{"name", "x"}}.dump()).body)["service_id"];
  CHECK(h.call("POST", "/projects/proj-a/services/" + fresh + "/replicaSets", kSet.dump()).status == 409);
  const std::string svc = h.service("orders");
  const std::string sets = "/projects/proj-a/services/" + svc + "/replicaSets";
  const std::string id = json::parse(h.call("POST", sets, kSet.dump()).body)["id"];
  CHECK(h.call("DELETE", "/projects/proj-a/services/" + svc).status == 409);
  CHECK(h.call("DELETE", sets + "/" + id).status == 202);
  CHECK(h.sets_of(svc).at(0)["status"] == "deleting");
  h.clock.advance(std::chrono::seconds(1));
  CHECK(h.sets_of(svc).empty());
  CHECK(h.call("DELETE", sets + "/" + id).status == 404);
  CHECK(h.call("DELETE", "/projects/proj-a/services/" + svc).status == 202);
  CHECK(h.sim.request_counts()["POST /projects/{project_id}/services/{service_id}/replicaSets"] == 2);
  CHECK(h.sim.request_counts()["DELETE /projects/{project_id}/services/{service_id}/replicaSets/{replica_set_id}"] == 2);
}

TEST_CASE("sim: a replica set named in `deleted` ends in error, and the console resizes one at once") {
  SimConfig config = nested_config();
  config.faults.deleted = {"broken*"};
  Nested h(config);
  const std::string svc = h.service();
  const std::string sets = "/projects/proj-a/services/" + svc + "/replicaSets";
  json broken = kSet;
  broken["name"] = "broken-1";
  h.call("POST", sets, broken.dump());
  const std::string id = json::parse(h.call("POST", sets, kSet.dump()).body)["id"];
  h.clock.advance(std::chrono::seconds(4));
  const json listed = h.sets_of(svc);
  CHECK(listed.at(0)["status"] == "error");
  CHECK(listed.at(1)["status"] == "active");
  SimResponse console = h.sim.console_nested("replica_sets", id, "resize", json{{"cpu_millis", 500}, {"memory_gbs", 2}}.dump());
  CHECK(console.status == 200);
  CHECK(h.sets_of(svc).at(1)["cpu_millis"] == 500);
  CHECK(h.sets_of(svc).at(1)["status"] == "active");
}

TEST_CASE("sim: a peering is pending until the console accepts or fails it, and a VPC with one is not deleted") {
  Nested h;
  const std::string vpc = h.vpc();
  const std::string peerings = "/projects/proj-a/vpcs/" + vpc + "/peerings";
  const json body = {{"peer_account_id", "123456789012"}, {"peer_region_code", "us-east-1"}, {"peer_vpc_id", "vpc-0abc"}};
  SimResponse created = h.call("POST", peerings, body.dump());
  REQUIRE(created.status == 201);
  const json peering = json::parse(created.body);
  const std::string id = peering["id"];
  CHECK(peering["status"] == "pending");
  CHECK(peering["peer_vpc_id"] == "vpc-0abc");
  CHECK(peering["provisioned_id"].is_string());
  CHECK(h.call("POST", peerings, json{{"peer_account_id", "1"}, {"peer_region_code", "us-east-1"}}.dump()).status == 400);
  CHECK(h.call("POST", "/projects/proj-a/vpcs/999/peerings", body.dump()).status == 404);

  CHECK(h.sim.console_nested("peerings", id, "fail", json{{"error_message", "peer VPC not found"}}.dump()).status == 200);
  json shown = json::parse(h.call("GET", peerings + "/" + id).body);
  CHECK(shown["status"] == "failed");
  CHECK(shown["error_message"] == "peer VPC not found");
  h.sim.console_nested("peerings", id, "accept", "");
  shown = json::parse(h.call("GET", peerings).body).at(0);
  CHECK(shown["status"] == "active");
  CHECK_FALSE(shown.contains("error_message"));

  CHECK(h.call("DELETE", "/projects/proj-a/vpcs/" + vpc).status == 409);
  CHECK(h.call("DELETE", peerings + "/" + id).status == 204);
  CHECK(h.call("GET", peerings + "/" + id).status == 404);
  CHECK(h.call("DELETE", "/projects/proj-a/vpcs/" + vpc).status == 204);
}

TEST_CASE("sim: the create faults and the list lag hold for replica sets and peerings too") {
  SimConfig config = nested_config();
  config.faults.gateway_timeout_every = 1;
  config.faults.list_lag = std::chrono::seconds(5);
  Nested h(config);
  const std::string svc = json::parse(h.sim.console_create("proj-a", "services", json{{"name", "o"}}.dump()).body)["service_id"];
  const std::string vpc = json::parse(h.sim.console_create("proj-a", "vpcs",
                                                           json{{"name", "main"}, {"cidr", "10.0.0.0/16"},
                                                                {"region_code", "us-east-1"}}.dump()).body)["id"];
  CHECK(h.call("POST", "/projects/proj-a/services/" + svc + "/replicaSets", kSet.dump()).status == 504);
  const json peer = {{"peer_account_id", "1"}, {"peer_region_code", "us-east-1"}, {"peer_vpc_id", "vpc-1"}};
  CHECK(h.call("POST", "/projects/proj-a/vpcs/" + vpc + "/peerings", peer.dump()).status == 504);
  // Committed although the gateway said otherwise; listed only after the lag.
  CHECK(h.sets_of(svc).empty());
  CHECK(json::parse(h.call("GET", "/projects/proj-a/vpcs/" + vpc + "/peerings").body).empty());
  h.clock.advance(std::chrono::seconds(5));
  CHECK(h.sets_of(svc).size() == 1);
  CHECK(json::parse(h.call("GET", "/projects/proj-a/vpcs/" + vpc + "/peerings").body).size() == 1);
  CHECK(h.sim.all_replica_sets().size() == 1);
  CHECK(h.sim.all_peerings().at(0)["vpc_id"] == vpc);
}
