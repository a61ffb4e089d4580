#include "api/client.h"

#include <catch2/catch.hpp>

#include <ctime>

#include "error_of.h"
#include "http/fake_transport.h"

using dbform::ApiClient;
using dbform::ApiError;
using dbform::AuthScheme;
using dbform::FakeClock;
using dbform::FakeTransport;
using nlohmann::json;
using std::chrono::milliseconds;
using std::chrono::seconds;

namespace {

const std::string kKey = "sk-very-secret-key-123";
const std::string kBase = "https://api.test/v1";
const char* kServiceBody = R"({"service_id":"s1","name":"orders","status":"QUEUED","initial_password":"pw-123456"})";

struct Fixture {
  FakeTransport transport;
  FakeClock clock;
  FakeClock::TimePoint start = clock.now();
  ApiClient client{transport, clock, kBase + "/", AuthScheme::Bearer, dbform::RetryPolicy{6, milliseconds(500), milliseconds(30'000), 42}};

  milliseconds waited() const { return std::chrono::duration_cast<milliseconds>(clock.now() - start); }
};

dbform::ServiceCreateRequest orders_request() {
  dbform::ServiceCreateRequest req;
  req.name = "orders";
  req.cpu_millis = "1000";
  req.memory_gbs = "4";
  return req;
}

// "Thu, 01 Jan 2026 01:00:20 GMT"
std::string http_date(std::chrono::system_clock::time_point t) {
  std::time_t tt = std::chrono::system_clock::to_time_t(t);
  std::tm tm{};
  gmtime_r(&tt, &tm);
  char buf[64];
  std::strftime(buf, sizeof buf, "%a, %d %b %Y %H:%M:%S GMT", &tm);
  return buf;
}

}  // namespace

TEST_CASE("api: create service sends the exact body and headers") {
  Fixture f;
  f.transport.on("POST", "/projects/p1/services", FakeTransport::response(202, kServiceBody));
  auto service = f.client.create_service(kKey, "p1", orders_request());
  CHECK(service.service_id == "s1");
  CHECK(service.initial_password == "pw-123456");

  auto sent = f.transport.requests();
  REQUIRE(sent.size() == 1);
  CHECK(sent[0].method == "POST");
  CHECK(sent[0].url == "https://api.test/v1/projects/p1/services");  // trailing slash of the base dropped
  CHECK(sent[0].body == R"({"cpu_millis":"1000","memory_gbs":"4","name":"orders"})");
  CHECK(FakeTransport::header_of(sent[0], "Authorization") == "Bearer " + kKey);
  CHECK(FakeTransport::header_of(sent[0], "Content-Type") == "application/json");
  CHECK(FakeTransport::header_of(sent[0], "Accept") == "application/json");
  CHECK(FakeTransport::header_of(sent[0], "User-Agent") == "dbform/0.1.0");
}

TEST_CASE("api: reads send no body and no content type, ids are escaped in paths") {
  Fixture f;
  f.transport.on("GET", "/services/s%2F1%20x", FakeTransport::response(200, kServiceBody));
  auto service = f.client.get_service(kKey, "p/1", "s/1 x");
  REQUIRE(service);
  auto sent = f.transport.requests();
  REQUIRE(sent.size() == 1);
  CHECK(sent[0].url == "https://api.test/v1/projects/p%2F1/services/s%2F1%20x");
  CHECK(sent[0].body.empty());
  CHECK(FakeTransport::header_of(sent[0], "Content-Type").empty());
}

TEST_CASE("api: basic scheme sends base64 of the key") {
  FakeTransport transport;
  FakeClock clock;
  ApiClient client(transport, clock, kBase, AuthScheme::Basic);
  transport.on("GET", "/auth/info", FakeTransport::response(200, R"({"type":"apiKey","api_key":{"project":{"id":"p1"}}})"));
  CHECK(client.auth_info("pub:secret").project_id == "p1");
  CHECK(FakeTransport::header_of(transport.requests().at(0), "Authorization") == "Basic cHViOnNlY3JldA==");
}

TEST_CASE("api: error messages name status, method, path and the API's message, never the key") {
  Fixture f;
  SECTION("JSON error body") {
    f.transport.on("POST", "/services",
                   FakeTransport::response(401, R"({"code":"UNAUTHORIZED","message":"invalid API key"})"));
    const auto e = thrown<ApiError>([&] { f.client.create_service(kKey, "p1", orders_request()); });
    REQUIRE(e);
    // A 401 also names the other auth scheme: a right key sent the wrong way answers 401 too
    // (README: "a 401 ... usually means the other scheme").
    CHECK(std::string(e->what()) ==
          "POST /projects/p1/services: 401 Unauthorized: invalid API key (code UNAUTHORIZED). A 401 for a key that "
          "is right usually means the other scheme: this request sent it as a Bearer token; try "
          "DBFORM_AUTH_SCHEME=basic with the key as public:secret");
    CHECK(e->status() == 401);
    CHECK(e->method() == "POST");
    CHECK(e->path() == "/projects/p1/services");
    CHECK(e->api_message() == "invalid API key (code UNAUTHORIZED)");
    CHECK_FALSE(e->outcome_unknown());
  }
  SECTION("other JSON is excerpted") {
    f.transport.on("GET", "/auth/info", FakeTransport::response(403, R"({"detail":["no access"]})"));
    CHECK_THROWS_WITH(f.client.auth_info(kKey),
                      "GET /auth/info: 403 Forbidden: {\"detail\":[\"no access\"]}");
  }
  SECTION("a text body is excerpted on one line") {
    f.transport.on("GET", "/vpcs", FakeTransport::response(400, "bad\n  request\r\n" + std::string(500, 'x')));
    const auto e = thrown<ApiError>([&] { f.client.list_at(kKey, dbform::kVpcRoute, "p1", ""); });
    REQUIRE(e);
    std::string what = e->what();
    CHECK(what.rfind("GET /projects/p1/vpcs: 400 Bad Request: bad request xxx", 0) == 0);
    CHECK(what.find('\n') == std::string::npos);
    CHECK(what.size() < 300);
  }
  SECTION("an empty body adds nothing") {
    f.transport.on("GET", "/auth/info", FakeTransport::response(418));
    CHECK_THROWS_WITH(f.client.auth_info(kKey), "GET /auth/info: 418");
  }
  SECTION("a body echoing the key is redacted") {
    f.transport.on("GET", "/auth/info", FakeTransport::response(401, R"({"message":"key )" + kKey + R"( is revoked"})"));
    const auto e = thrown<ApiError>([&] { f.client.auth_info(kKey); });
    REQUIRE(e);
    CHECK(std::string(e->what()).find(kKey) == std::string::npos);
    CHECK(e->api_message().find(kKey) == std::string::npos);
    CHECK(std::string(e->what()).find("key *** is revoked") != std::string::npos);
  }
  CHECK(f.transport.requests().size() == 1);  // none of these is retried
}

TEST_CASE("api: reads retry 503 with exponential backoff measured on the clock") {
  Fixture f;
  f.transport.on("GET", "/services/s1", FakeTransport::response(503));
  f.transport.on("GET", "/services/s1", FakeTransport::response(503, R"({"message":"busy"})"));
  f.transport.on("GET", "/services/s1", FakeTransport::response(200, kServiceBody));
  auto service = f.client.get_service(kKey, "p1", "s1");
  REQUIRE(service);
  CHECK(service->status == "QUEUED");
  CHECK(f.transport.count("GET", "/services/s1") == 3);
  // Full jitter: the first wait is at most 500ms, the second at most 1000ms.
  CHECK(f.waited() <= milliseconds(1500));
}

TEST_CASE("api: read retries stop at max_attempts with waits capped by max_backoff") {
  FakeTransport transport;
  FakeClock clock;
  auto start = clock.now();
  ApiClient client(transport, clock, kBase, AuthScheme::Bearer, {5, milliseconds(1000), milliseconds(2000), 7});
  transport.always("GET", "/vpcs", FakeTransport::response(502, "<html>bad gateway</html>"));
  const auto e = thrown<ApiError>([&] { client.list_at(kKey, dbform::kVpcRoute, "p1", ""); });
  REQUIRE(e);
  CHECK(e->status() == 502);
  CHECK(std::string(e->what()) == "GET /projects/p1/vpcs: 502 Bad Gateway: <html>bad gateway</html> (after 5 attempts)");
  CHECK(transport.requests().size() == 5);
  CHECK(clock.now() - start <= milliseconds(1000 + 2000 + 2000 + 2000));
  CHECK(clock.now() - start > milliseconds(0));
}

TEST_CASE("api: reads retry transport errors, then report them as an ApiError without status") {
  Fixture f;
  f.transport.fail("GET", "/auth/info", true, "timed out");
  f.transport.on("GET", "/auth/info", FakeTransport::response(200, R"({"type":"apiKey"})"));
  CHECK(f.client.auth_info(kKey).type == "apiKey");
  CHECK(f.transport.requests().size() == 2);

  FakeTransport down;
  FakeClock clock;
  ApiClient client(down, clock, kBase, AuthScheme::Bearer, {3, milliseconds(10), milliseconds(100), 1});
  for (int i = 0; i < 3; ++i) down.fail("GET", "/auth/info", false, "connection refused");
  const auto e = thrown<ApiError>([&] { client.auth_info(kKey); });
  REQUIRE(e);
  CHECK(e->status() == 0);
  CHECK_FALSE(e->outcome_unknown());
  CHECK(std::string(e->what()).find("GET /auth/info: could not reach the API (after 3 attempts)") == 0);
  CHECK(std::string(e->what()).find("connection refused") != std::string::npos);
  CHECK(down.requests().size() == 3);
}

TEST_CASE("api: Retry-After seconds and HTTP-dates are lower bounds of the wait") {
  Fixture f;
  SECTION("delta seconds") {
    f.transport.on("GET", "/auth/info", FakeTransport::response(429, "", {{"retry-after", "7"}}));
    f.transport.on("GET", "/auth/info", FakeTransport::response(200, "{}"));
    f.client.auth_info(kKey);
    CHECK(f.waited() >= seconds(7));
    CHECK(f.waited() <= seconds(8));
  }
  SECTION("HTTP-date") {
    std::string date = http_date(f.clock.wall_now() + seconds(20));
    f.transport.on("GET", "/auth/info", FakeTransport::response(503, "", {{"retry-after", date}}));
    f.transport.on("GET", "/auth/info", FakeTransport::response(200, "{}"));
    f.client.auth_info(kKey);
    CHECK(f.waited() >= seconds(20));
    CHECK(f.waited() <= seconds(21));
  }
  SECTION("absurd values are capped at five minutes") {
    f.transport.on("GET", "/auth/info", FakeTransport::response(429, "", {{"retry-after", "86400"}}));
    f.transport.on("GET", "/auth/info", FakeTransport::response(200, "{}"));
    f.client.auth_info(kKey);
    CHECK(f.waited() == std::chrono::minutes(5));
  }
  SECTION("garbage is ignored") {
    f.transport.on("GET", "/auth/info", FakeTransport::response(429, "", {{"retry-after", "soon"}}));
    f.transport.on("GET", "/auth/info", FakeTransport::response(200, "{}"));
    f.client.auth_info(kKey);
    CHECK(f.waited() <= milliseconds(500));
  }
  CHECK(f.transport.requests().size() == 2);
}

TEST_CASE("api: a create refused with 429 is retried after Retry-After") {
  Fixture f;
  f.transport.on("POST", "/services", FakeTransport::response(429, R"({"message":"slow down"})", {{"retry-after", "3"}}));
  f.transport.on("POST", "/services", FakeTransport::response(202, kServiceBody));
  CHECK(f.client.create_service(kKey, "p1", orders_request()).service_id == "s1");
  CHECK(f.transport.count("POST", "/projects/p1/services") == 2);
  CHECK(f.waited() >= seconds(3));
}

TEST_CASE("api: a create answered 5xx is never re-sent and reports an unknown outcome") {
  Fixture f;
  f.transport.always("POST", "/services", FakeTransport::response(500, R"({"message":"oops"})"));
  const auto e = thrown<ApiError>([&] { f.client.create_service(kKey, "p1", orders_request()); });
  REQUIRE(e);
  CHECK(e->outcome_unknown());
  CHECK(e->status() == 500);
  CHECK(std::string(e->what()).find("POST /projects/p1/services: 500 Internal Server Error: oops") == 0);
  CHECK(f.transport.requests().size() == 1);
  CHECK(f.waited() == milliseconds(0));
}

TEST_CASE("api: a create whose request may have reached the server is never re-sent") {
  Fixture f;
  f.transport.fail("POST", "/vpcs", /*may_have_reached_server=*/true, "connection reset");
  f.transport.always("POST", "/vpcs", FakeTransport::response(201, R"({"id":"v1"})"));
  std::vector<dbform::Exchange> logged;
  f.client.log_exchanges([&](const dbform::Exchange& x) { logged.push_back(x); });
  const auto e = thrown<ApiError>([&] {
    f.client.create_at(kKey, dbform::kVpcRoute, "p1", "", to_json(dbform::VpcCreateRequest{"main", "10.0.0.0/16", "us-east-1"}));
  });
  REQUIRE(e);
  CHECK(e->outcome_unknown());
  CHECK(e->status() == 0);
  CHECK(std::string(e->what()).find("connection reset") != std::string::npos);
  CHECK(f.transport.requests().size() == 1);
  // The exchange is logged before the error is thrown, with why it got no answer and no retry.
  REQUIRE(logged.size() == 1);
  CHECK(logged[0].status == 0);
  CHECK(logged[0].error.find("connection reset") != std::string::npos);
  CHECK(logged[0].retry.empty());
}

TEST_CASE("api: a create whose connection was refused is retried") {
  Fixture f;
  f.transport.fail("POST", "/vpcs", /*may_have_reached_server=*/false, "connection refused");
  f.transport.on("POST", "/vpcs", FakeTransport::response(201, R"({"id":"v1","name":"main"})"));
  auto vpc = f.client.create_at(kKey, dbform::kVpcRoute, "p1", "",
                                to_json(dbform::VpcCreateRequest{"main", "10.0.0.0/16", "us-east-1"}));
  CHECK(vpc.id == "v1");
  auto sent = f.transport.requests();
  REQUIRE(sent.size() == 2);
  CHECK(sent[1].body == R"({"cidr":"10.0.0.0/16","name":"main","region_code":"us-east-1"})");
}

TEST_CASE("api: a create answered 4xx other than 429 fails at once with a known outcome") {
  Fixture f;
  f.transport.always("POST", "/services", FakeTransport::response(422, R"({"code":"INVALID","message":"bad cpu"})"));
  const auto e = thrown<ApiError>([&] { f.client.create_service(kKey, "p1", orders_request()); });
  REQUIRE(e);
  CHECK_FALSE(e->outcome_unknown());
  CHECK(e->status() == 422);
  CHECK(f.transport.requests().size() == 1);
}

TEST_CASE("api: a 2xx create answer that cannot be read is an unknown outcome") {
  Fixture f;
  SECTION("not JSON") { f.transport.on("POST", "/services", FakeTransport::response(202, "<html>")); }
  SECTION("no service_id") { f.transport.on("POST", "/services", FakeTransport::response(202, R"({"name":"orders"})")); }
  const auto e = thrown<ApiError>([&] { f.client.create_service(kKey, "p1", orders_request()); });
  REQUIRE(e);
  CHECK(e->outcome_unknown());
  CHECK(std::string(e->what()).find("POST /projects/p1/services") == 0);
  CHECK(f.transport.requests().size() == 1);
}

TEST_CASE("api: get_service maps 404 to nullopt and does not retry 401") {
  Fixture f;
  f.transport.on("GET", "/services/gone", FakeTransport::response(404, R"({"code":"NOT_FOUND","message":"no such service"})"));
  CHECK_FALSE(f.client.get_service(kKey, "p1", "gone"));

  f.transport.always("GET", "/services/s1", FakeTransport::response(401, R"({"message":"invalid API key"})"));
  CHECK_THROWS_AS(f.client.get_service(kKey, "p1", "s1"), ApiError);
  CHECK(f.transport.count("GET", "/services/s1") == 1);
  CHECK(f.waited() == milliseconds(0));
}

TEST_CASE("api: 404 on other reads is an error") {
  Fixture f;
  f.transport.on("GET", "/projects/nope/services", FakeTransport::response(404));
  CHECK_THROWS_WITH(f.client.list_services(kKey, "nope"), "GET /projects/nope/services: 404 Not Found");
}

TEST_CASE("api: list calls map arrays and reject other shapes naming the call") {
  Fixture f;
  f.transport.on("GET", "/services", FakeTransport::response(200, std::string("[") + kServiceBody + R"(,{"service_id":"s2"}])"));
  auto services = f.client.list_services(kKey, "p1");
  REQUIRE(services.size() == 2);
  CHECK(services[1].service_id == "s2");

  f.transport.on("GET", "/services", FakeTransport::response(200, R"({"services":[]})"));
  CHECK_THROWS_WITH(f.client.list_services(kKey, "p1"),
                    "GET /projects/p1/services: expected a JSON array of services, but the API sent object");

  f.transport.on("GET", "/vpcs", FakeTransport::response(200, R"([{"id":5}])"));
  CHECK_THROWS_WITH(f.client.list_at(kKey, dbform::kVpcRoute, "p1", ""),
                    Catch::StartsWith("GET /projects/p1/vpcs: VPC: field `id` must be a string"));
}

TEST_CASE("api: a 2xx body that is not JSON is an error that quotes nothing of it") {
  Fixture f;
  f.transport.on("GET", "/services/s1",
                 FakeTransport::response(200, R"({"service_id":"s1","initial_password":"pw-leak)", {{"content-type", "text/plain"}}));
  try {
    f.client.get_service(kKey, "p1", "s1");
    FAIL("no error");
  } catch (const dbform::Error& e) {
    std::string what = e.what();
    CHECK(what.find("GET /projects/p1/services/s1: the API answered 200 but the body is not valid JSON") == 0);
    CHECK(what.find("text/plain") != std::string::npos);
    CHECK(what.find("pw-leak") == std::string::npos);
  }
}

TEST_CASE("api: updates post the document's bodies, are retried like reads, and map a Service answer") {
  Fixture f;
  f.transport.on("POST", "/services/s1/resize", FakeTransport::response(503));
  f.transport.on("POST", "/services/s1/resize", FakeTransport::response(202, kServiceBody));
  f.transport.on("POST", "/services/s1/enablePooler", FakeTransport::response(200, R"({"message":"ok"})"));
  auto resized = f.client.update_service(kKey, "p1", "s1", "resize", {{"cpu_millis", "2000"}, {"memory_gbs", "8"}});
  REQUIRE(resized);
  CHECK(resized->service_id == "s1");
  CHECK_FALSE(f.client.update_service(kKey, "p1", "s1", "enablePooler", nullptr));
  auto sent = f.transport.requests();
  REQUIRE(sent.size() == 3);
  CHECK(sent[0].body == R"({"cpu_millis":"2000","memory_gbs":"8"})");
  CHECK(sent[1].body == sent[0].body);  // the same request again after the 503
  CHECK(FakeTransport::header_of(sent[0], "Content-Type") == "application/json");
  CHECK(sent[2].url == "https://api.test/v1/projects/p1/services/s1/enablePooler");
  CHECK(sent[2].body.empty());
  CHECK(FakeTransport::header_of(sent[2], "Content-Type").empty());
}

TEST_CASE("api: read replica sets: the create sends integers once, the resize digit strings, lists answer for one set") {
  Fixture f;
  f.transport.on("POST", "/services/s1/replicaSets",
                 FakeTransport::response(202, R"({"id":"rs1","name":"reporting","status":"creating","nodes":2,)"
                                              R"("cpu_millis":1000,"memory_gbs":4,"endpoint":{"host":"h","port":5432}})"));
  const dbform::ReplicaSet created = f.client.create_replica_set(kKey, "p1", "s1", {"reporting", 2, 1000, 4});
  CHECK(created.id == "rs1");
  CHECK(created.status == "creating");
  CHECK(created.nodes == 2);
  CHECK(created.endpoint.str() == "h:5432");
  auto sent = f.transport.requests();
  REQUIRE(sent.size() == 1);
  CHECK(json::parse(sent[0].body) == json{{"name", "reporting"}, {"nodes", 2}, {"cpu_millis", 1000}, {"memory_gbs", 4}});

  f.transport.on("POST", "/services/s1/replicaSets", FakeTransport::response(503, "{}"));
  CHECK_THROWS_AS(f.client.create_replica_set(kKey, "p1", "s1", {"reporting", 2, 1000, 4}), ApiError);
  CHECK(f.transport.count("POST", "/services/s1/replicaSets") == 2);  // a create: never re-sent

  f.transport.on("POST", "/replicaSets/rs1/resize", FakeTransport::response(503, "{}"));
  f.transport.on("POST", "/replicaSets/rs1/resize", FakeTransport::response(202, R"({"message":"ok"})"));
  f.client.update_replica_set(kKey, "p1", "s1", "rs1", "resize", {{"cpu_millis", "2000"}, {"memory_gbs", "8"}});
  CHECK(f.transport.count("POST", "/projects/p1/services/s1/replicaSets/rs1/resize") == 2);  // retried like a read
  CHECK(json::parse(f.transport.requests().back().body) == json{{"cpu_millis", "2000"}, {"memory_gbs", "8"}});
  f.transport.on("POST", "/replicaSets/rs1/enablePooler", FakeTransport::response(200, R"({"message":"ok"})"));
  f.client.update_replica_set(kKey, "p1", "s1", "rs1", "enablePooler", nullptr);
  CHECK(f.transport.requests().back().body.empty());

  f.transport.on("GET", "/services/s1/replicaSets",
                 FakeTransport::response(200, R"([{"id":"rs1","name":"reporting","status":"active","metadata":)"
                                              R"({"environment":"PROD"},"connection_pooler":{"endpoint":{"host":"p","port":6432}}}])"));
  const auto listed = f.client.list_replica_sets(kKey, "p1", "s1");
  REQUIRE(listed.size() == 1);
  CHECK(listed[0].environment == "PROD");
  CHECK(listed[0].pooler_endpoint.str() == "p:6432");
  f.transport.on("DELETE", "/replicaSets/rs1", FakeTransport::response(404, "{}"));
  CHECK_FALSE(f.client.delete_replica_set(kKey, "p1", "s1", "rs1"));
}

TEST_CASE("api: peerings by their route: create once with the peer, get maps 404 to nullopt, delete") {
  Fixture f;
  const dbform::ApiRoute& route = dbform::kPeeringRoute;
  f.transport.on("POST", "/vpcs/v1/peerings",
                 FakeTransport::response(201, R"({"id":"pr1","peer_account_id":"123","peer_region_code":"us-east-1",)"
                                              R"("peer_vpc_id":"vpc-0abc","status":"pending"})"));
  const dbform::ApiObject made =
      f.client.create_at(kKey, route, "p1", "v1", to_json(dbform::PeeringCreateRequest{"123", "us-east-1", "vpc-0abc"}));
  CHECK(made.id == "pr1");
  CHECK(dbform::parse_peering(made.raw).peer_vpc_id == "vpc-0abc");
  CHECK(json::parse(f.transport.requests()[0].body) ==
        json{{"peer_account_id", "123"}, {"peer_region_code", "us-east-1"}, {"peer_vpc_id", "vpc-0abc"}});
  f.transport.on("GET", "/peerings/pr1",
                 FakeTransport::response(200, R"({"id":"pr1","status":"failed","error_message":"VPC not found"})"));
  CHECK(dbform::parse_peering(f.client.get_at(kKey, route, "p1", "v1", "pr1")->raw).error_message == "VPC not found");
  f.transport.on("GET", "/peerings/pr1", FakeTransport::response(404, "{}"));
  CHECK_FALSE(f.client.get_at(kKey, route, "p1", "v1", "pr1"));
  f.transport.on("DELETE", "/peerings/pr1", FakeTransport::response(204, ""));
  CHECK(f.client.delete_at(kKey, route, "p1", "v1", "pr1"));
  f.transport.on("GET", "/vpcs/v1/peerings", FakeTransport::response(200, R"({"not":"a list"})"));
  CHECK_THROWS_WITH(f.client.list_at(kKey, route, "p1", "v1"), Catch::Contains("GET /projects/p1/vpcs/v1/peerings"));
}

// A kind of no product route, by its route alone: its path with the parent's id escaped
// in, its own id field, and the fields of its own its answers keep (api_field_names() drops them).
TEST_CASE("api: a kind by its route: its path, its id field, the fields it names kept, a create without the id unknown") {
  Fixture f;
  static const std::unordered_set<std::string> fields = {"exporter_id", "name", "status", "endpoint_url"};
  const dbform::ApiRoute route{"/services/{parent}/exporters", "exporter_id", "metric exporter", "metric exporters",
                               &fields};
  f.transport.on("POST", "/projects/p1/services/s%2F1/exporters",
                 FakeTransport::response(201, R"({"exporter_id":"e1","name":"m","endpoint_url":"https://x","other":1})"));
  const dbform::ApiObject made = f.client.create_at(kKey, route, "p1", "s/1", json{{"name", "m"}});
  CHECK(made.id == "e1");
  CHECK(made.raw == json{{"exporter_id", "e1"}, {"name", "m"}, {"endpoint_url", "https://x"}});
  CHECK(json::parse(f.transport.requests()[0].body) == json{{"name", "m"}});
  // Without the route's fields, the answer is read with api_field_names(): the kind's own fields
  // (its id field too) are dropped.
  for (int i = 0; i < 2; ++i)
    f.transport.on("GET", "/projects/p1/services/s%2F1/exporters",
                   FakeTransport::response(200, R"([{"exporter_id":"e1","name":"m","endpoint_url":"u"}])"));
  dbform::ApiRoute plain = route;
  plain.fields = nullptr;
  CHECK(f.client.list_at(kKey, plain, "p1", "s/1").at(0).raw == json{{"name", "m"}});
  const dbform::ApiObject listed = f.client.list_at(kKey, route, "p1", "s/1").at(0);
  CHECK(listed.id == "e1");
  CHECK(listed.raw == json{{"exporter_id", "e1"}, {"name", "m"}, {"endpoint_url", "u"}});
  f.transport.on("GET", "/exporters/e1", FakeTransport::response(404, "{}"));
  CHECK_FALSE(f.client.get_at(kKey, route, "p1", "s/1", "e1"));
  f.transport.on("POST", "/exporters/e1/rename", FakeTransport::response(200, "{}"));
  f.client.act_at(kKey, route, "p1", "s/1", "e1", "rename", json{{"name", "n"}});
  CHECK(f.transport.requests().back().body == R"({"name":"n"})");
  f.transport.on("DELETE", "/exporters/e1", FakeTransport::response(404, "{}"));
  CHECK_FALSE(f.client.delete_at(kKey, route, "p1", "s/1", "e1"));
  // A create answered without its id may still have made one: an unknown outcome, never sent again.
  f.transport.on("POST", "/projects/p1/services/s%2F1/exporters", FakeTransport::response(201, R"({"name":"m"})"));
  const auto e = thrown<ApiError>([&] { f.client.create_at(kKey, route, "p1", "s/1", json{{"name", "m"}}); });
  REQUIRE(e);
  CHECK(e->outcome_unknown());
  CHECK(std::string(e->what()).find("no `exporter_id`") != std::string::npos);
}
