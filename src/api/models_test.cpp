#include "api/models.h"

#include <catch2/catch.hpp>

#include "util/error.h"

using dbform::Error;
using nlohmann::json;

TEST_CASE("api: service create body sends cpu and memory as strings and omits unset fields") {
  dbform::ServiceCreateRequest req;
  req.name = "orders";
  req.addons = {"time-series"};
  req.cpu_millis = "1000";
  req.memory_gbs = "4";
  req.environment_tag = "PROD";
  req.region_code = "us-east-1";
  req.replica_count = 1;
  CHECK(dbform::to_json(req).dump() ==
        R"({"addons":["time-series"],"cpu_millis":"1000","environment_tag":"PROD","memory_gbs":"4",)"
        R"("name":"orders","region_code":"us-east-1","replica_count":1})");

  dbform::ServiceCreateRequest minimal;
  minimal.name = "tiny";
  CHECK(dbform::to_json(minimal).dump() == R"({"name":"tiny"})");

  dbform::ServiceCreateRequest shared;
  shared.name = "s";
  shared.cpu_millis = "shared";
  shared.memory_gbs = "shared";
  shared.replica_count = 0;  // zero is a value, not "unset"
  CHECK(dbform::to_json(shared).dump() == R"({"cpu_millis":"shared","memory_gbs":"shared","name":"s","replica_count":0})");
}

TEST_CASE("api: vpc create body has exactly name, cidr and region_code") {
  dbform::VpcCreateRequest req{"main", "10.0.0.0/16", "us-east-1"};
  CHECK(dbform::to_json(req) == json{{"name", "main"}, {"cidr", "10.0.0.0/16"}, {"region_code", "us-east-1"}});
}

TEST_CASE("api: auth info accepts api_key and the deprecated apiKey") {
  json key = {{"name", "ci-key"},
              {"public_key", "tskey_abc"},
              {"created", "2024-01-15T10:30:00Z"},
              {"project", {{"id", "p1"}, {"name", "Prod"}, {"plan_type", "FREE"}}},
              {"issuing_user", {{"id", "u1"}, {"name", "Ann"}, {"email", "ann@example.com"}}}};
  for (const char* spelling : {"api_key", "apiKey"}) {
    INFO(spelling);
    auto info = dbform::parse_auth_info(json{{"type", "apiKey"}, {spelling, key}});
    CHECK(info.type == "apiKey");
    CHECK(info.key_name == "ci-key");
    CHECK(info.public_key == "tskey_abc");
    CHECK(info.project_id == "p1");
    CHECK(info.project_name == "Prod");
    CHECK(info.plan_type == "FREE");
    CHECK(info.user_name == "Ann");
    CHECK(info.user_email == "ann@example.com");
    CHECK(info.created == "2024-01-15T10:30:00Z");
  }
  CHECK(dbform::parse_auth_info(json::object()).project_id.empty());
  CHECK_THROWS_AS(dbform::parse_auth_info(json::array()), Error);
}

TEST_CASE("api: service mapping reads every documented field") {
  json j = json::parse(R"({
    "service_id": "s1", "project_id": "p1", "name": "orders", "region_code": "us-east-1",
    "service_type": "TIMESCALEDB", "status": "QUEUED", "created": "2025-01-15T09:30:00Z",
    "initial_password": "hunter2-secret",
    "endpoint": {"host": "db.example.com", "port": 32625},
    "connection_pooler": {"endpoint": {"host": "pool.example.com", "port": 6432}},
    "vpc_endpoint": {"host": "vpc.example.com", "port": 5432, "vpc_id": "1337"},
    "ha_replicas": {"replica_count": 2, "sync_replica_count": 0},
    "metadata": {"environment": "PROD"},
    "resources": [{"id": "r1", "spec": {"cpu_millis": 1000, "memory_gbs": 4}}]
  })");
  auto s = dbform::parse_service(j);
  CHECK(s.service_id == "s1");
  CHECK(s.project_id == "p1");
  CHECK(s.name == "orders");
  CHECK(s.region_code == "us-east-1");
  CHECK(s.service_type == "TIMESCALEDB");
  CHECK(s.status == "QUEUED");
  CHECK(s.created == "2025-01-15T09:30:00Z");
  CHECK(s.initial_password == "hunter2-secret");
  CHECK(s.endpoint.str() == "db.example.com:32625");
  CHECK(s.pooler_endpoint.str() == "pool.example.com:6432");
  CHECK(s.vpc_endpoint == json{{"host", "vpc.example.com"}, {"port", 5432}, {"vpc_id", "1337"}});
  CHECK(s.replica_count == 2);
  CHECK(s.environment == "PROD");
  // The raw copy keeps everything (resources with numeric cpu/memory included) but the password.
  CHECK_FALSE(s.raw.contains("initial_password"));
  CHECK(s.raw.dump().find("hunter2-secret") == std::string::npos);
  CHECK(s.raw["resources"][0]["spec"]["cpu_millis"] == 1000);
  CHECK(s.raw["name"] == "orders");
}

TEST_CASE("api: service mapping tolerates missing, unknown and renamed fields") {
  auto empty = dbform::parse_service(json::object());
  CHECK(empty.service_id.empty());
  CHECK(empty.status.empty());
  CHECK(empty.endpoint.empty());
  CHECK(empty.pooler_endpoint.empty());
  CHECK(empty.vpc_endpoint.is_null());
  CHECK_FALSE(empty.replica_count);

  auto s = dbform::parse_service(json::parse(R"({
    "service_id": "s2", "service_type": "TIMESERIESDB", "brand_new_field": {"x": [1, 2]},
    "vpcEndpoint": {"host": "old-spelling"}, "endpoint": {"host": "h"}
  })"));
  CHECK(s.service_id == "s2");
  CHECK(s.service_type == "TIMESERIESDB");
  CHECK(s.vpc_endpoint == json{{"host", "old-spelling"}});
  CHECK(s.endpoint.host == "h");
  CHECK_FALSE(s.endpoint.port);
  CHECK(s.raw.contains("brand_new_field"));

  for (const char* type : {"SQLDB", "POSTGRES", "VECTOR"}) {
    CHECK(dbform::parse_service(json{{"service_type", type}}).service_type == type);
  }
  // Both spellings sent: the documented one wins.
  auto both = dbform::parse_service(json{{"vpc_endpoint", {{"host", "new"}}}, {"vpcEndpoint", {{"host", "old"}}}});
  CHECK(both.vpc_endpoint["host"] == "new");
}

TEST_CASE("api: wrong-typed optional service fields read as absent, a wrong-typed id is an error") {
  auto s = dbform::parse_service(json::parse(R"({
    "service_id": "s3", "name": 42, "status": null, "endpoint": {"host": 7, "port": "abc"},
    "connection_pooler": "nope", "ha_replicas": {"replica_count": "two"}, "metadata": [],
    "initial_password": 12345
  })"));
  CHECK(s.service_id == "s3");
  CHECK(s.name.empty());
  CHECK(s.status.empty());
  CHECK(s.endpoint.empty());
  CHECK(s.pooler_endpoint.empty());
  CHECK_FALSE(s.replica_count);
  CHECK(s.environment.empty());
  CHECK(s.initial_password.empty());
  CHECK_FALSE(dbform::parse_service(json{{"endpoint", {{"port", 70000}}}}).endpoint.port);

  CHECK_THROWS_WITH(dbform::parse_service(json{{"service_id", 17}}),
                    Catch::Contains("service_id") && Catch::Contains("must be a string"));
  CHECK_THROWS_WITH(dbform::parse_service(json::array()), Catch::Contains("expected a JSON object"));
  CHECK_THROWS_WITH(dbform::parse_service(json("text")), Catch::Contains("string"));
}

TEST_CASE("api: vpc mapping") {
  auto v = dbform::parse_vpc(json::parse(R"({"id":"1234","name":"main","cidr":"10.0.0.0/16",
                                             "region_code":"us-east-1","extra":true})"));
  CHECK(v.id == "1234");
  CHECK(v.name == "main");
  CHECK(v.cidr == "10.0.0.0/16");
  CHECK(v.region_code == "us-east-1");
  CHECK(v.raw["extra"] == true);
  CHECK(dbform::parse_vpc(json{{"name", 3}}).name.empty());
  CHECK_THROWS_WITH(dbform::parse_vpc(json{{"id", 1234}}), Catch::Contains("`id` must be a string"));
  CHECK_THROWS_AS(dbform::parse_vpc(json(nullptr)), Error);
}
