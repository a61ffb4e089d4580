// The simulator core without sockets: a FakeClock drives the status timeline.
#include "sim/simulator.h"
#include "sim/test_support.h"

#include <catch2/catch.hpp>

#include <regex>

using dbform::Duration;
using dbform::FakeClock;
using dbform::SimConfig;
using dbform::SimResponse;
using dbform::Simulator;
using nlohmann::json;

namespace {

// "pub-b:secret-b" in base64, as `Authorization: Basic` carries it.
const std::string kBasicB = "Basic cHViLWI6c2VjcmV0LWI=";

SimConfig test_config() { return dbform::test::timed_config({{"key-a", "proj-a", "ci-key"}, {"pub-b:secret-b", "proj-b"}}, 7); }

struct SimHarness : dbform::test::SimCore {
  explicit SimHarness(SimConfig config = test_config()) : SimCore(std::move(config)) {}

  SimResponse create_service(const json& body, const std::string& project = "proj-a",
                             const std::string& authorization = "Bearer key-a") {
    return call("POST", "/projects/" + project + "/services", body.dump(), authorization);
  }
  std::string status_of(const std::string& id) {
    return json::parse(call("GET", "/projects/proj-a/services/" + id).body)["status"];
  }
};

json body_of(const SimResponse& response) { return json::parse(response.body); }

}  // namespace

TEST_CASE("sim: a new service goes QUEUED, CONFIGURING, then READY as time passes") {
  SimHarness h;
  auto created = h.create_service({{"name", "orders"}});
  REQUIRE(created.status == 202);
  std::string id = body_of(created)["service_id"];
  CHECK(body_of(created)["status"] == "QUEUED");
  CHECK(h.status_of(id) == "QUEUED");
  h.clock.advance(std::chrono::milliseconds(999));
  CHECK(h.status_of(id) == "QUEUED");
  h.clock.advance(std::chrono::milliseconds(1));
  CHECK(h.status_of(id) == "CONFIGURING");
  h.clock.advance(std::chrono::milliseconds(1999));
  CHECK(h.status_of(id) == "CONFIGURING");
  h.clock.advance(std::chrono::milliseconds(1));
  CHECK(h.status_of(id) == "READY");
  h.clock.advance(std::chrono::hours(5));
  CHECK(h.status_of(id) == "READY");
}

TEST_CASE("sim: the create answer has the vendor's Service fields and types") {
  SimHarness h;
  auto created = h.create_service({{"name", "metrics"},
                                   {"addons", {"time-series", "ai"}},
                                   {"cpu_millis", "2000"},
                                   {"memory_gbs", "8"},
                                   {"environment_tag", "PROD"},
                                   {"region_code", "eu-central-1"},
                                   {"replica_count", 1}});
  REQUIRE(created.status == 202);
  CHECK(created.headers.at("Content-Type") == "application/json");
  json s = body_of(created);
  std::string id = s["service_id"];
  CHECK(std::regex_match(id, std::regex("[a-z0-9]{10}")));
  CHECK(s["project_id"] == "proj-a");
  CHECK(s["name"] == "metrics");
  CHECK(s["region_code"] == "eu-central-1");
  CHECK(s["service_type"] == "TIMESCALEDB");
  CHECK(std::regex_match(s["created"].get<std::string>(), std::regex(R"(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ)")));
  REQUIRE(s["resources"].size() == 1);
  CHECK(s["resources"][0]["spec"]["cpu_millis"] == 2000);  // numbers in answers, strings in requests
  CHECK(s["resources"][0]["spec"]["memory_gbs"] == 8);
  CHECK(s["resources"][0]["spec"]["cpu_millis"].is_number());
  CHECK(s["metadata"]["environment"] == "PROD");
  CHECK(s["ha_replicas"]["replica_count"] == 1);
  CHECK(s["endpoint"]["host"] == id + ".proj-a.tsdb.sim.local");
  int port = s["endpoint"]["port"];
  CHECK((port >= 30000 && port <= 39999));
  CHECK_FALSE(s.contains("connection_pooler"));  // off until enablePooler
  CHECK_FALSE(s.contains("vpc_endpoint"));       // in no VPC until attachToVPC
}

TEST_CASE("sim: defaults for a minimal create, and shared or fractional resources") {
  SimHarness h;
  json minimal = body_of(h.create_service({{"name", "tiny"}}));
  CHECK(minimal["service_type"] == "POSTGRES");
  CHECK(minimal["region_code"] == "us-east-1");
  CHECK(minimal["metadata"]["environment"] == "DEV");
  CHECK(minimal["ha_replicas"]["replica_count"] == 0);
  CHECK(minimal["resources"][0]["spec"]["cpu_millis"] == 500);
  CHECK(minimal["resources"][0]["spec"]["memory_gbs"] == 2);

  json shared = body_of(h.create_service({{"name", "free"}, {"cpu_millis", "shared"}, {"memory_gbs", "shared"}}));
  CHECK(shared["resources"][0]["spec"]["cpu_millis"] == 500);
  CHECK(shared["resources"][0]["spec"]["memory_gbs"] == 2);

  json half = body_of(h.create_service({{"name", "half"}, {"cpu_millis", "250"}, {"memory_gbs", "0.5"}}));
  CHECK(half["resources"][0]["spec"]["cpu_millis"] == 250);
  CHECK(half["resources"][0]["spec"]["memory_gbs"] == 0.5);
}

TEST_CASE("sim: initial_password is in the create answer only") {
  SimHarness h;
  json created = body_of(h.create_service({{"name", "orders"}}));
  std::string password = created["initial_password"];
  CHECK(password.size() >= 16);
  std::string id = created["service_id"];
  CHECK_FALSE(body_of(h.call("GET", "/projects/proj-a/services/" + id)).contains("initial_password"));
  json list = body_of(h.call("GET", "/projects/proj-a/services"));
  REQUIRE(list.size() == 1);
  CHECK_FALSE(list[0].contains("initial_password"));
  CHECK(h.sim.all_services().dump().find(password) == std::string::npos);
}

TEST_CASE("sim: create-service bodies are validated like the real API") {
  SimHarness h;
  auto rejected = [&](const json& body, const std::string& expected_words) {
    auto response = h.create_service(body);
    INFO(body.dump() << " -> " << response.body);
    CHECK(response.status == 400);
    json error = body_of(response);
    CHECK(error["code"] == "BAD_REQUEST");
    CHECK_THAT(error["message"].get<std::string>(), Catch::Contains(expected_words));
  };
  rejected({{"name", "a"}, {"cpu_millis", 1000}}, "cpu_millis must be a string");
  rejected({{"name", "a"}, {"memory_gbs", 4}}, "memory_gbs must be a string");
  rejected({{"name", "a"}, {"cpu_millis", "0"}}, "cpu_millis must be a positive integer");
  rejected({{"name", "a"}, {"cpu_millis", "1.5"}}, "cpu_millis must be a positive integer");
  rejected({{"name", "a"}, {"memory_gbs", "lots"}}, "memory_gbs must be a positive number");
  rejected({{"addons", json::array()}}, "name is required");
  rejected({{"name", ""}}, "name must not be empty");
  rejected({{"name", 5}}, "name must be a string");
  rejected({{"name", std::string(129, 'x')}}, "at most 128");
  rejected({{"name", "a"}, {"size", "large"}}, "unknown field 'size'");
  rejected({{"name", "a"}, {"addons", {"vector"}}}, "addons items");
  rejected({{"name", "a"}, {"addons", "ai"}}, "addons must be an array");
  rejected({{"name", "a"}, {"environment_tag", "STAGING"}}, "environment_tag");
  rejected({{"name", "a"}, {"replica_count", -1}}, "replica_count");
  rejected({{"name", "a"}, {"replica_count", "1"}}, "replica_count");
  rejected({{"name", "a"}, {"replica_count", 1.5}}, "replica_count");
  rejected({{"name", "a"}, {"region_code", nullptr}}, "region_code");
  rejected(json::array(), "JSON object");

  auto not_json = h.call("POST", "/projects/proj-a/services", "{name:");
  CHECK(not_json.status == 400);
  CHECK(h.sim.all_services().empty());

  CHECK(h.create_service({{"name", std::string(128, 'x')}}).status == 202);
}

TEST_CASE("sim: the same service name may be created twice") {
  SimHarness h;
  json first = body_of(h.create_service({{"name", "orders"}}));
  json second = body_of(h.create_service({{"name", "orders"}}));
  CHECK(first["service_id"] != second["service_id"]);
  CHECK(h.sim.all_services().size() == 2);
}

TEST_CASE("sim: services are per project and unknown ids are 404") {
  SimHarness h;
  h.create_service({{"name", "a1"}});
  h.create_service({{"name", "b1"}}, "proj-b", kBasicB);
  json a = body_of(h.call("GET", "/projects/proj-a/services"));
  REQUIRE(a.size() == 1);
  CHECK(a[0]["name"] == "a1");
  auto missing = h.call("GET", "/projects/proj-a/services/nosuchid00");
  CHECK(missing.status == 404);
  CHECK(body_of(missing)["code"] == "NOT_FOUND");
  // Another project's service is not visible through this project's path.
  std::string b_id = h.sim.all_services()[1]["service_id"];
  CHECK(h.call("GET", "/projects/proj-a/services/" + b_id).status == 404);
}

TEST_CASE("sim: VPCs are created (201) and listed per project") {
  SimHarness h;
  auto created = h.call("POST", "/projects/proj-a/vpcs",
                        json{{"name", "main"}, {"cidr", "10.0.0.0/16"}, {"region_code", "us-east-1"}}.dump());
  REQUIRE(created.status == 201);
  json vpc = body_of(created);
  CHECK(std::regex_match(vpc["id"].get<std::string>(), std::regex("[0-9]+")));
  CHECK(vpc == json{{"id", vpc["id"]}, {"name", "main"}, {"cidr", "10.0.0.0/16"}, {"region_code", "us-east-1"}});
  CHECK(body_of(h.call("GET", "/projects/proj-a/vpcs")) == json::array({vpc}));
  CHECK(body_of(h.call("GET", "/projects/proj-b/vpcs", "", kBasicB)).empty());
  CHECK(h.sim.all_vpcs()[0]["project_id"] == "proj-a");

  auto ipv6 = h.call("POST", "/projects/proj-a/vpcs",
                     json{{"name", "v6"}, {"cidr", "fd00::/48"}, {"region_code", "us-east-1"}}.dump());
  CHECK(ipv6.status == 201);
}

TEST_CASE("sim: VPC bodies are validated") {
  SimHarness h;
  auto rejected = [&](const json& body, const std::string& expected_words) {
    auto response = h.call("POST", "/projects/proj-a/vpcs", body.dump());
    INFO(body.dump() << " -> " << response.body);
    CHECK(response.status == 400);
    CHECK_THAT(body_of(response)["message"].get<std::string>(), Catch::Contains(expected_words));
  };
  rejected({{"cidr", "10.0.0.0/16"}, {"region_code", "us-east-1"}}, "name is required");
  rejected({{"name", "m"}, {"region_code", "us-east-1"}}, "cidr is required");
  rejected({{"name", "m"}, {"cidr", "10.0.0.0/16"}}, "region_code is required");
  rejected({{"name", "m"}, {"cidr", "10.0.0.0/33"}, {"region_code", "r"}}, "cidr must be");
  rejected({{"name", "m"}, {"cidr", "10.0.0.0"}, {"region_code", "r"}}, "cidr must be");
  rejected({{"name", "m"}, {"cidr", 10}, {"region_code", "r"}}, "cidr must be a string");
  rejected({{"name", "m"}, {"cidr", "10.0.0.0/8"}, {"region_code", "r"}, {"tags", "x"}}, "unknown field 'tags'");
  CHECK(h.sim.all_vpcs().empty());
}

TEST_CASE("sim: Bearer and Basic keys are accepted, others get 401, other projects 403") {
  SimHarness h;
  CHECK(h.call("GET", "/projects/proj-a/services").status == 200);
  CHECK(h.call("GET", "/projects/proj-b/services", "", kBasicB).status == 200);
  CHECK(h.call("GET", "/projects/proj-b/services", "", "Bearer pub-b:secret-b").status == 200);
  CHECK(h.call("GET", "/projects/proj-a/services", "", "bearer key-a").status == 200);

  for (std::string bad : {"", "Bearer ", "Bearer nope", "Basic !!!!", "Basic a2V5LWE", "Token key-a", "key-a"}) {
    INFO("Authorization: " << bad);
    auto response = h.call("GET", "/projects/proj-a/services", "", bad);
    CHECK(response.status == 401);
    CHECK(body_of(response) == json{{"code", "UNAUTHORIZED"}, {"message", "invalid or missing API key"}});
  }
  auto forbidden = h.create_service({{"name", "x"}}, "proj-b");
  CHECK(forbidden.status == 403);
  CHECK(body_of(forbidden) ==
        json{{"code", "FORBIDDEN"}, {"message", "API key is not valid for project proj-b"}});
  CHECK(h.sim.all_services().empty());
}

TEST_CASE("sim: auth info names the key's project and never shows the secret") {
  SimHarness h;
  auto response = h.call("GET", "/auth/info");
  REQUIRE(response.status == 200);
  json info = body_of(response);
  CHECK(info["type"] == "apiKey");
  CHECK(info["api_key"] == info["apiKey"]);
  CHECK(info["api_key"]["name"] == "ci-key");
  CHECK(info["api_key"]["project"]["id"] == "proj-a");
  CHECK(info["api_key"]["project"].contains("plan_type"));
  CHECK(info["api_key"]["issuing_user"].contains("email"));
  CHECK(response.body.find("key-a") == std::string::npos);

  json basic = body_of(h.call("GET", "/auth/info", "", kBasicB));
  CHECK(basic["api_key"]["public_key"] == "pub-b");
  CHECK(basic["api_key"]["project"]["id"] == "proj-b");
  CHECK(basic.dump().find("secret-b") == std::string::npos);
}

TEST_CASE("sim: unknown routes are 404 and wrong methods 405") {
  SimHarness h;
  auto unknown = h.call("GET", "/projects/proj-a/databases");
  CHECK(unknown.status == 404);
  CHECK(body_of(unknown)["code"] == "NOT_FOUND");
  CHECK(h.call("GET", "/projects/proj-a/services/").status == 404);
  auto wrong = h.call("DELETE", "/projects/proj-a/services");
  CHECK(wrong.status == 405);
  CHECK(wrong.headers.at("Allow") == "GET, POST");
  CHECK(h.call("POST", "/auth/info").status == 405);
}

TEST_CASE("sim: requests are counted per route template, faulted ones included") {
  SimConfig config = test_config();
  config.faults.rate_limit_every = 3;
  SimHarness h(config);
  std::string id = body_of(h.create_service({{"name", "a"}}))["service_id"];  // call 1
  h.call("GET", "/auth/info");                                               // 2
  h.call("GET", "/projects/proj-a/services/" + id);                          // 3: 429
  h.call("GET", "/projects/proj-a/services/" + id);                          // 4
  h.call("GET", "/projects/proj-a/services/" + id, "", "Bearer wrong");     // 5: 401
  h.call("GET", "/nowhere");
  CHECK(h.sim.request_counts() == json{{"POST /projects/{project_id}/services", 1},
                                       {"GET /auth/info", 1},
                                       {"GET /projects/{project_id}/services/{service_id}", 3},
                                       {"GET (unknown route)", 1}});
}

TEST_CASE("sim: every Nth API call is answered 429 with Retry-After") {
  SimConfig config = test_config();
  config.faults.rate_limit_every = 2;
  config.faults.retry_after_seconds = 7;
  SimHarness h(config);
  std::vector<int> statuses;
  for (int i = 0; i < 6; ++i) statuses.push_back(h.call("GET", "/auth/info").status);
  CHECK(statuses == std::vector<int>{200, 429, 200, 429, 200, 429});
  auto limited = h.call("GET", "/auth/info");  // 7th: passes; 8th limited
  limited = h.call("GET", "/auth/info");
  CHECK(limited.headers.at("Retry-After") == "7");
  CHECK(body_of(limited)["code"] == "TOO_MANY_REQUESTS");
}

TEST_CASE("sim: error_rate faults repeat exactly for the same seed") {
  auto run = [](unsigned seed) {
    SimConfig config = test_config();
    config.seed = seed;
    config.faults.error_rate = 0.3;
    SimHarness h(config);
    std::vector<int> statuses;
    std::vector<std::string> ids;
    for (int i = 0; i < 60; ++i) {
      auto response = h.create_service({{"name", "s" + std::to_string(i)}});
      statuses.push_back(response.status);
      if (response.status == 500) {
        CHECK(body_of(response) == json{{"code", "INTERNAL"}, {"message", "simulated failure"}});
      } else {
        ids.push_back(body_of(response)["service_id"]);
      }
    }
    // A failed call did nothing.
    CHECK(h.sim.all_services().size() == ids.size());
    return std::make_pair(statuses, ids);
  };
  auto first = run(42);
  CHECK(first == run(42));
  CHECK(first.first != run(43).first);
  long failures = std::count(first.first.begin(), first.first.end(), 500);
  CHECK(failures > 5);
  CHECK(failures < 35);
}

TEST_CASE("sim: ids, ports and passwords repeat for the same seed") {
  auto run = [](unsigned seed) {
    SimConfig config = test_config();
    config.seed = seed;
    SimHarness h(config);
    return body_of(h.create_service({{"name", "orders"}}));
  };
  CHECK(run(5) == run(5));
  CHECK(run(5)["service_id"] != run(6)["service_id"]);
}

TEST_CASE("sim: stuck, deleted and unstable services follow their fault") {
  SimConfig config = test_config();
  config.faults.stuck = {"stuck-*"};
  config.faults.deleted = {"doomed"};
  config.faults.unstable = {"wobbly?"};
  SimHarness h(config);
  std::string stuck = body_of(h.create_service({{"name", "stuck-1"}}))["service_id"];
  std::string doomed = body_of(h.create_service({{"name", "doomed"}}))["service_id"];
  std::string wobbly = body_of(h.create_service({{"name", "wobbly2"}}))["service_id"];
  std::string normal = body_of(h.create_service({{"name", "wobbly22"}}))["service_id"];  // glob does not match

  h.clock.advance(std::chrono::milliseconds(1500));
  for (const auto& id : {stuck, doomed, wobbly, normal}) CHECK(h.status_of(id) == "CONFIGURING");
  h.clock.advance(std::chrono::seconds(2));  // 3.5s: past configuring
  CHECK(h.status_of(stuck) == "CONFIGURING");
  CHECK(h.status_of(doomed) == "DELETED");
  CHECK(h.status_of(wobbly) == "UNSTABLE");
  CHECK(h.status_of(normal) == "READY");
  h.clock.advance(std::chrono::seconds(2));  // 5.5s: UNSTABLE lasts one configuring_delay
  CHECK(h.status_of(wobbly) == "READY");
  h.clock.advance(std::chrono::hours(24));
  CHECK(h.status_of(stuck) == "CONFIGURING");
  CHECK(h.status_of(doomed) == "DELETED");
}

TEST_CASE("sim: every Nth create is performed but its answer is dropped") {
  SimConfig config = test_config();
  config.faults.drop_create_every = 2;
  SimHarness h(config);
  CHECK_FALSE(h.create_service({{"name", "one"}}).drop_connection);
  auto dropped = h.create_service({{"name", "two"}});
  CHECK(dropped.drop_connection);
  CHECK(h.sim.all_services().size() == 2);
  CHECK(h.sim.all_services()[1]["name"] == "two");
  // Reads are never dropped, and VPC creates count towards the same every-Nth.
  CHECK_FALSE(h.call("GET", "/projects/proj-a/services").drop_connection);
  auto vpc = h.call("POST", "/projects/proj-a/vpcs",
                    json{{"name", "main"}, {"cidr", "10.0.0.0/16"}, {"region_code", "r"}}.dump());
  CHECK_FALSE(vpc.drop_connection);
  CHECK(h.create_service({{"name", "four"}}).drop_connection);
  // Rejected creates were not performed and do not count.
  CHECK_FALSE(h.create_service({{"name", 1}}).drop_connection);
  CHECK_FALSE(h.create_service({{"name", "five"}}).drop_connection);
}

TEST_CASE("sim: route faults lose, replace with 504 or refuse the calls of one route, by count") {
  SimHarness h;
  const std::string id = body_of(h.create_service({{"name", "one"}}))["service_id"];
  const std::string route = "POST /projects/{project_id}/services/{service_id}/updatePassword";
  h.sim.set_route_faults({{route, dbform::RouteFault::Kind::LoseAnswer, 1, 1},
                          {route, dbform::RouteFault::Kind::GatewayTimeout, 2, 1},
                          {route, dbform::RouteFault::Kind::Refuse, 3, 0}});
  auto set = [&](const std::string& password) {
    return h.call("POST", "/projects/proj-a/services/" + id + "/updatePassword", json{{"password", password}}.dump());
  };
  auto lost = set("first-password");
  CHECK(lost.lose_answer);
  CHECK(h.sim.current_password(id) == "first-password");  // performed, only its answer lost
  auto gateway = set("second-password");
  CHECK(gateway.status == 504);
  CHECK(h.sim.current_password(id) == "second-password");
  for (int i = 0; i < 3; ++i) {  // refused from the third call on, every time, and not performed
    auto refused = set("third-password");
    CHECK(refused.status == 422);
    CHECK(h.sim.current_password(id) == "second-password");
  }
  CHECK(h.sim.fault_counts()["call refused (422): " + route] == 3);
  // Other routes are untouched, and clearing the faults heals the route.
  CHECK(h.call("GET", "/projects/proj-a/services/" + id).status == 200);
  h.sim.set_route_faults({});
  CHECK(set("fourth-password").status == 204);
}

TEST_CASE("sim: latency is spent on the clock before answering") {
  SimConfig config = test_config();
  config.faults.latency = std::chrono::milliseconds(250);
  SimHarness h(config);
  auto before = h.clock.now();
  h.call("GET", "/auth/info");
  h.call("GET", "/nowhere");
  CHECK(h.clock.now() - before == std::chrono::milliseconds(500));
}

namespace {

// A READY service of proj-a and the id of a VPC there.
struct UpdateHarness : SimHarness {
  UpdateHarness() {
    id = body_of(create_service({{"name", "orders"}, {"cpu_millis", "1000"}, {"memory_gbs", "4"}}))["service_id"];
    vpc = body_of(call("POST", "/projects/proj-a/vpcs",
                       json{{"name", "main"}, {"cidr", "10.0.0.0/16"}, {"region_code", "us-east-1"}}.dump()))["id"];
    clock.advance(std::chrono::seconds(3));
  }
  SimResponse act(const std::string& action, const json& body = nullptr) {
    return call("POST", "/projects/proj-a/services/" + id + "/" + action, body.is_null() ? "" : body.dump());
  }
  json service() { return body_of(call("GET", "/projects/proj-a/services/" + id)); }
  std::string id, vpc;
};

}  // namespace

TEST_CASE("sim: resize and setHA are asynchronous: UPGRADING with the old values, then READY with the new") {
  UpdateHarness h;
  REQUIRE(h.status_of(h.id) == "READY");
  auto resized = h.act("resize", {{"cpu_millis", "2000"}, {"memory_gbs", "8"}});
  REQUIRE(resized.status == 202);
  CHECK(body_of(resized)["status"] == "UPGRADING");
  CHECK(h.service()["resources"][0]["spec"]["cpu_millis"] == 1000);
  // Another change while it is upgrading is refused, as the real service refuses it.
  auto busy = h.act("setHA", {{"replica_count", 2}});
  CHECK(busy.status == 409);
  CHECK(body_of(busy)["code"] == "CONFLICT");
  h.clock.advance(std::chrono::seconds(2));
  json s = h.service();
  CHECK(s["status"] == "READY");
  CHECK(s["resources"][0]["spec"]["cpu_millis"] == 2000);
  CHECK(s["resources"][0]["spec"]["memory_gbs"] == 8);
  REQUIRE(h.act("setHA", {{"replica_count", 2}}).status == 202);
  h.clock.advance(std::chrono::seconds(2));
  CHECK(h.service()["ha_replicas"]["replica_count"] == 2);
  auto counts = h.sim.request_counts();
  CHECK(counts["POST /projects/{project_id}/services/{service_id}/resize"] == 1);
  CHECK(counts["POST /projects/{project_id}/services/{service_id}/setHA"] == 2);
}

TEST_CASE("sim: update bodies are checked as strictly as the published document") {
  UpdateHarness h;
  CHECK(h.act("resize", {{"cpu_millis", 2000}, {"memory_gbs", "8"}}).status == 400);      // a number
  CHECK(h.act("resize", {{"cpu_millis", "2000"}}).status == 400);                         // both required
  CHECK(h.act("resize", {{"cpu_millis", "2000"}, {"memory_gbs", "0.5"}}).status == 400);  // ^[0-9]+$
  CHECK(h.act("resize", {{"cpu_millis", "shared"}, {"memory_gbs", "8"}}).status == 400);
  CHECK(h.act("setEnvironment", {{"environment", "STAGING"}}).status == 400);
  CHECK(h.act("setEnvironment", {{"environment_tag", "PROD"}}).status == 400);
  CHECK(h.act("setHA", json::object()).status == 400);
  CHECK(h.act("setHA", {{"replica_count", -1}}).status == 400);
  CHECK(h.act("attachToVPC", {{"vpc_id", 12}}).status == 400);
  CHECK(h.act("attachToVPC", {{"vpc_id", "12"}}).status == 404);  // no such VPC
  CHECK(h.act("setHA", {{"replica_count", 1}, {"sync_replica_count", 2}}).status == 400);  // sync <= replicas
  CHECK(h.act("setHA", {{"sync_replica_count", 1}}).status == 400);  // the service has no replicas
  CHECK(h.act("rename", json::object()).status == 400);
  CHECK(h.act("rename", {{"name", ""}}).status == 400);
  CHECK(h.act("rename", {{"name", "x"}, {"extra", 1}}).status == 400);
  CHECK(h.act("rebuild", {{"name", "x"}}).status == 404);  // no such call
  CHECK(h.status_of(h.id) == "READY");  // nothing was started
}

TEST_CASE("sim: stop and start: PAUSING, PAUSED, RESUMING, READY, and calls only when READY") {
  UpdateHarness h;
  CHECK(h.act("start").status == 409);  // it runs
  auto stopped = h.act("stop");
  REQUIRE(stopped.status == 202);
  CHECK(body_of(stopped)["status"] == "PAUSING");
  CHECK(h.act("stop").status == 409);
  h.clock.advance(std::chrono::seconds(2));
  CHECK(h.service()["status"] == "PAUSED");
  CHECK(h.act("setEnvironment", {{"environment", "PROD"}}).status == 409);  // a paused service takes no change
  CHECK(h.act("updatePassword", {{"password", "a-new-one"}}).status == 204);
  auto started = h.act("start");
  REQUIRE(started.status == 202);
  CHECK(body_of(started)["status"] == "RESUMING");
  h.clock.advance(std::chrono::seconds(2));
  CHECK(h.service()["status"] == "READY");
  // From the console: at once.
  REQUIRE(h.sim.console(h.id, "stop", "").status == 200);
  CHECK(h.service()["status"] == "PAUSED");
  auto counts = h.sim.request_counts();
  CHECK(counts["POST /projects/{project_id}/services/{service_id}/stop"] == 2);
  CHECK(counts["POST /projects/{project_id}/services/{service_id}/start"] == 2);
}

TEST_CASE("sim: rename a service (200, the Service) and a VPC (200, a message), and setHA sets both counts") {
  UpdateHarness h;
  auto renamed = h.act("rename", {{"name", "orders-v2"}});
  REQUIRE(renamed.status == 200);
  CHECK(body_of(renamed)["name"] == "orders-v2");
  CHECK(body_of(h.call("GET", "/projects/proj-a/services"))[0]["name"] == "orders-v2");
  auto vpc = h.call("POST", "/projects/proj-a/vpcs/" + h.vpc + "/rename", json{{"name", "edge"}}.dump());
  REQUIRE(vpc.status == 200);
  CHECK(body_of(h.call("GET", "/projects/proj-a/vpcs/" + h.vpc))["name"] == "edge");
  CHECK(h.call("POST", "/projects/proj-a/vpcs/" + h.vpc + "/rename", "{}").status == 400);
  CHECK(h.call("POST", "/projects/proj-a/vpcs/999/rename", json{{"name", "x"}}.dump()).status == 404);
  REQUIRE(h.act("setHA", {{"replica_count", 2}, {"sync_replica_count", 1}}).status == 202);
  h.clock.advance(std::chrono::seconds(2));
  CHECK(h.service()["ha_replicas"] == json{{"replica_count", 2}, {"sync_replica_count", 1}});
}

TEST_CASE("sim: setEnvironment and the pooler answer 200 and change at once") {
  UpdateHarness h;
  auto set = h.act("setEnvironment", {{"environment", "PROD"}});
  REQUIRE(set.status == 200);
  CHECK(body_of(set).contains("message"));
  CHECK(h.service()["metadata"]["environment"] == "PROD");
  REQUIRE(h.act("enablePooler").status == 200);
  json s = h.service();
  CHECK(s["connection_pooler"]["endpoint"]["port"].is_number_integer());
  CHECK(s["status"] == "READY");
  REQUIRE(h.act("disablePooler").status == 200);
  CHECK_FALSE(h.service().contains("connection_pooler"));
}

TEST_CASE("sim: attachToVPC and detachFromVPC move the service, through UPGRADING") {
  UpdateHarness h;
  REQUIRE(h.act("attachToVPC", {{"vpc_id", h.vpc}}).status == 202);
  CHECK(h.status_of(h.id) == "UPGRADING");
  h.clock.advance(std::chrono::seconds(2));
  CHECK(h.service()["vpc_endpoint"]["vpc_id"] == h.vpc);
  // A VPC with a service attached cannot be deleted.
  CHECK(h.call("DELETE", "/projects/proj-a/vpcs/" + h.vpc).status == 409);
  CHECK(h.act("detachFromVPC", {{"vpc_id", "1234567890"}}).status != 202);
  REQUIRE(h.act("detachFromVPC", {{"vpc_id", h.vpc}}).status == 202);
  h.clock.advance(std::chrono::seconds(2));
  CHECK_FALSE(h.service().contains("vpc_endpoint"));
  CHECK(h.call("DELETE", "/projects/proj-a/vpcs/" + h.vpc).status == 204);
  CHECK(h.call("GET", "/projects/proj-a/vpcs/" + h.vpc).status == 404);
}

TEST_CASE("sim: a deleted service is DELETING, then gone") {
  UpdateHarness h;
  REQUIRE(h.call("DELETE", "/projects/proj-a/services/" + h.id).status == 202);
  CHECK(h.status_of(h.id) == "DELETING");
  h.clock.advance(std::chrono::seconds(1));
  CHECK(h.call("GET", "/projects/proj-a/services/" + h.id).status == 404);
  CHECK(body_of(h.call("GET", "/projects/proj-a/services")).empty());
}

TEST_CASE("sim: the console changes a service outside dbform, at once and without a key") {
  UpdateHarness h;
  auto resized = h.sim.console(h.id, "resize", json{{"cpu_millis", 500}, {"memory_gbs", 2}}.dump());
  REQUIRE(resized.status == 200);
  json s = h.service();
  CHECK(s["status"] == "READY");
  CHECK(s["resources"][0]["spec"]["cpu_millis"] == 500);
  REQUIRE(h.sim.console(h.id, "setEnvironment", json{{"environment", "PROD"}}.dump()).status == 200);
  CHECK(h.service()["metadata"]["environment"] == "PROD");
  REQUIRE(h.sim.console(h.id, "delete", "").status == 200);
  CHECK(h.call("GET", "/projects/proj-a/services/" + h.id).status == 404);
  CHECK(h.sim.console(h.id, "delete", "").status == 404);
  // The console is not an API call.
  CHECK_FALSE(h.sim.request_counts().contains("DELETE /projects/{project_id}/services/{service_id}"));
}

TEST_CASE("sim: every call served_calls() lists is routed and counted under its own name (docs/simulator.md lists them)") {
  SimHarness h;
  for (const auto& call : Simulator::served_calls()) {
    const std::string method = call.substr(0, call.find(' '));
    std::string path = call.substr(call.find(' ') + 1);
    // Ids that do not exist: the route is matched, and answered 404 for the resource, not for the route.
    path = std::regex_replace(path, std::regex(R"(\{project_id\})"), "proj-a");
    path = std::regex_replace(path, std::regex(R"(\{[a-z_]+\})"), "x1");
    SimResponse r = h.call(method, path, "{}");
    INFO(call << " -> " << r.status << " " << r.body);
    CHECK(r.status != 405);
    CHECK(r.body.find("no route for") == std::string::npos);
    CHECK(h.sim.request_counts().value(call, 0) == 1);
  }
}
