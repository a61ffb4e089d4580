// The real SimServer on a loopback port, driven by the real client stack (ApiClient over
// CurlTransport), as `dbform apply` would drive it.
#include <catch2/catch.hpp>

#include <set>
#include <thread>

#include "api/client.h"
#include "error_of.h"
#include "http/curl_transport.h"
#include "sim/gzip.h"
#include "sim/simulator.h"
#include "sim/test_support.h"
#include "tls/test_pki.h"

using namespace dbform;
using nlohmann::json;

namespace {

SimConfig server_config() { return test::timed_config({{"key-a", "proj-a", "ci"}, {"pub-b:secret-b", "proj-b"}}, 3); }

// A simulator on 127.0.0.1:<free port>. One FakeClock drives the simulator's timeline and the
// client's back-off sleeps, so nothing in these tests waits for real time.
struct LiveSim {
  explicit LiveSim(SimConfig config = server_config()) : sim(std::move(config), clock), server(sim) {
    port = server.start("127.0.0.1", 0);
  }
  std::string url(const std::string& path = "") const { return "http://127.0.0.1:" + std::to_string(port) + path; }
  ApiClient client(AuthScheme scheme = AuthScheme::Bearer) {
    RetryPolicy retry;
    retry.seed = 1;
    return ApiClient(transport, clock, url("/public/api/v1"), scheme, retry);
  }
  HttpResponse get(const std::string& path, const std::string& authorization = "") {
    HttpRequest request{"GET", url(path), {}, ""};
    if (!authorization.empty()) request.headers.push_back({"Authorization", authorization});
    return transport.send(request);
  }

  FakeClock clock;
  Simulator sim;
  SimServer server;
  CurlTransport transport;
  int port = 0;
};

ServiceCreateRequest named(std::string name) {
  ServiceCreateRequest request;
  request.name = std::move(name);
  return request;
}

}  // namespace

TEST_CASE("sim: SimServer serves every call of the API to ApiClient over curl") {
  LiveSim live;
  REQUIRE(live.port > 0);
  ApiClient api = live.client();

  AuthInfo who = api.auth_info("key-a");
  CHECK(who.project_id == "proj-a");
  CHECK(who.key_name == "ci");

  ServiceCreateRequest request;
  request.name = "orders";
  request.addons = {"time-series"};
  request.cpu_millis = "1000";
  request.memory_gbs = "4";
  request.replica_count = 1;
  Service created = api.create_service("key-a", "proj-a", request);
  CHECK(created.status == "QUEUED");
  CHECK(created.service_type == "TIMESCALEDB");
  CHECK(created.initial_password.size() >= 16);
  CHECK(created.endpoint.port.has_value());
  CHECK(created.replica_count == 1);

  live.clock.advance(std::chrono::seconds(3));
  auto read = api.get_service("key-a", "proj-a", created.service_id);
  REQUIRE(read.has_value());
  CHECK(read->status == "READY");
  CHECK(read->initial_password.empty());
  CHECK_FALSE(api.get_service("key-a", "proj-a", "nosuchid00").has_value());
  REQUIRE(api.list_services("key-a", "proj-a").size() == 1);

  ApiObject vpc = api.create_at("key-a", kVpcRoute, "proj-a", "",
                                 {{"name", "main"}, {"cidr", "10.0.0.0/16"}, {"region_code", "us-east-1"}});
  CHECK_FALSE(vpc.id.empty());
  REQUIRE(api.list_at("key-a", kVpcRoute, "proj-a", "").size() == 1);
  CHECK(api.get_at("key-a", kVpcRoute, "proj-a", "", vpc.id)->raw["name"] == "main");

  auto resized = api.update_service("key-a", "proj-a", created.service_id, "resize",
                                    {{"cpu_millis", "2000"}, {"memory_gbs", "8"}});
  REQUIRE(resized);
  CHECK(resized->status == "UPGRADING");
  live.clock.advance(std::chrono::seconds(2));
  CHECK_FALSE(api.update_service("key-a", "proj-a", created.service_id, "enablePooler", nullptr));
  CHECK_FALSE(api.get_service("key-a", "proj-a", created.service_id)->pooler_endpoint.empty());

  CHECK(live.sim.request_counts() == json{{"GET /auth/info", 1},
                                          {"POST /projects/{project_id}/services", 1},
                                          {"GET /projects/{project_id}/services/{service_id}", 3},
                                          {"GET /projects/{project_id}/services", 1},
                                          {"POST /projects/{project_id}/vpcs", 1},
                                          {"GET /projects/{project_id}/vpcs", 1},
                                          {"GET /projects/{project_id}/vpcs/{vpc_id}", 1},
                                          {"POST /projects/{project_id}/services/{service_id}/resize", 1},
                                          {"POST /projects/{project_id}/services/{service_id}/enablePooler", 1}});
}

TEST_CASE("sim: SimServer accepts Basic keys and refuses wrong ones with the API's errors") {
  LiveSim live;
  ApiClient basic = live.client(AuthScheme::Basic);
  CHECK(basic.auth_info("pub-b:secret-b").project_id == "proj-b");

  ApiClient bearer = live.client();
  const auto unknown_key = thrown<ApiError>([&] { bearer.list_services("not-a-key", "proj-a"); });
  REQUIRE(unknown_key);
  CHECK(unknown_key->status() == 401);
  CHECK_THAT(unknown_key->api_message(), Catch::Contains("invalid or missing API key"));
  const auto other_project = thrown<ApiError>([&] { bearer.list_services("key-a", "proj-b"); });
  REQUIRE(other_project);
  CHECK(other_project->status() == 403);
  CHECK_THAT(other_project->api_message(), Catch::Contains("API key is not valid for project proj-b"));
}

TEST_CASE("sim: SimServer answers at / as well as at the base path, and serves debug routes without a key") {
  LiveSim live;
  CHECK(live.get("/auth/info", "Bearer key-a").status == 200);
  CHECK(live.get("/public/api/v1/auth/info", "Bearer key-a").status == 200);
  CHECK(live.get("/public/api/v1/auth/info").status == 401);
  HttpResponse unknown = live.get("/public/api/v1/nothing/here", "Bearer key-a");
  CHECK(unknown.status == 404);
  CHECK(json::parse(unknown.body)["code"] == "NOT_FOUND");
  CHECK(unknown.header("content-type") == "application/json; charset=utf-8");
  CHECK(unknown.header("content-encoding").empty());  // small answers go as they are

  live.client().create_service("key-a", "proj-a", named("orders"));
  json services = json::parse(live.get("/_sim/services").body);
  REQUIRE(services.size() == 1);
  CHECK(services[0]["name"] == "orders");
  CHECK_FALSE(services[0].contains("initial_password"));
  CHECK(json::parse(live.get("/_sim/vpcs").body) == json::array());
  // The console: a change outside dbform, without a key.
  const std::string id = services[0]["service_id"];
  HttpResponse retag = live.transport.send({"POST", live.url("/_sim/services/" + id + "/setEnvironment"), {},
                                            R"({"environment":"PROD"})"});
  CHECK(retag.status == 200);
  CHECK(json::parse(retag.body)["metadata"]["environment"] == "PROD");
  CHECK(live.transport.send({"DELETE", live.url("/_sim/services/" + id), {}, ""}).status == 200);
  CHECK(json::parse(live.get("/_sim/services").body) == json::array());
  json counts = json::parse(live.get("/_sim/requests").body);
  CHECK(counts["GET /auth/info"] == 3);
  CHECK(counts["POST /projects/{project_id}/services"] == 1);
}

TEST_CASE("sim: answers of 1 KiB and more are gzip-compressed for clients that accept gzip, never brotli") {
  LiveSim live;
  ApiClient api = live.client();
  for (int i = 0; i < 8; ++i) api.create_service("key-a", "proj-a", named("svc-" + std::to_string(i)));
  auto list_with = [&](const std::string& accept) {
    HttpRequest request{"GET", live.url("/public/api/v1/projects/proj-a/services"),
                        {{"Authorization", "Bearer key-a"}, {"Accept-Encoding", accept}}, ""};
    return live.transport.send(request);
  };
  HttpResponse gzipped = list_with("br, gzip, deflate");
  CHECK(gzipped.header("content-encoding") == "gzip");
  CHECK(json::parse(gzipped.body).size() == 8);  // curl decoded it
  for (const char* refused : {"br", "gzip;q=0, br", "identity"}) {
    HttpResponse plain = list_with(refused);
    CHECK(plain.header("content-encoding").empty());
    CHECK(json::parse(plain.body).size() == 8);
  }
  CHECK(sim::accepts_gzip("gzip"));
  CHECK(sim::accepts_gzip(" deflate , GZIP ;q=0.5"));
  CHECK(sim::accepts_gzip("*;q=0.1"));
  CHECK_FALSE(sim::accepts_gzip("gzip; q=0.000"));
  CHECK_FALSE(sim::accepts_gzip("gzip;q=0, *"));  // named outright, it wins over `*`
  CHECK_FALSE(sim::accepts_gzip("gzip;level=1;Q=0"));
  CHECK(sim::accepts_gzip("br;q=0, x-gzip;q=0.2"));
  CHECK_FALSE(sim::accepts_gzip("*;q=0"));
  CHECK_FALSE(sim::accepts_gzip(""));
}

TEST_CASE("sim: a dropped create reaches the client as a transport error, yet the service exists") {
  SimConfig config = server_config();
  config.faults.drop_create_every = 1;
  LiveSim live(config);

  HttpRequest raw{"POST", live.url("/public/api/v1/projects/proj-a/vpcs"),
                  {{"Authorization", "Bearer key-a"}, {"Content-Type", "application/json"}},
                  R"({"name":"main","cidr":"10.0.0.0/16","region_code":"us-east-1"})"};
  try {
    live.transport.send(raw);
    FAIL("expected the connection to drop");
  } catch (const TransportError& e) {
    CHECK(e.may_have_reached_server());
  }
  CHECK(live.sim.all_vpcs().size() == 1);

  ApiClient api = live.client();
  const auto e = thrown<ApiError>([&] { api.create_service("key-a", "proj-a", named("orders")); });
  REQUIRE(e);
  CHECK(e->status() == 0);
  CHECK(e->outcome_unknown());
  json services = live.sim.all_services();
  REQUIRE(services.size() == 1);
  CHECK(services[0]["name"] == "orders");
  // The client must not have sent the create again.
  CHECK(live.sim.request_counts()["POST /projects/{project_id}/services"] == 1);
  // Reads are never dropped: the client can find what it made.
  CHECK(api.list_services("key-a", "proj-a").at(0).name == "orders");
}

TEST_CASE("sim: 429 with Retry-After over HTTP is waited out and retried by the client") {
  SimConfig config = server_config();
  config.faults.rate_limit_every = 2;
  config.faults.retry_after_seconds = 4;
  LiveSim live(config);
  ApiClient api = live.client();
  api.auth_info("key-a");                      // call 1
  auto before = live.clock.now();
  CHECK(api.auth_info("key-a").project_id == "proj-a");  // call 2 is 429, call 3 succeeds
  CHECK(live.clock.now() - before >= std::chrono::seconds(4));
  CHECK(live.sim.request_counts()["GET /auth/info"] == 3);
}

TEST_CASE("sim: SimServer serves many clients at once") {
  LiveSim live;
  constexpr int kClients = 12;
  std::vector<std::string> ids(kClients);
  std::vector<std::thread> threads;
  for (int i = 0; i < kClients; ++i) {
    threads.emplace_back([&live, &ids, i] {
      ApiClient api = live.client();
      ids[i] = api.create_service("key-a", "proj-a", named("svc-" + std::to_string(i))).service_id;
      for (int poll = 0; poll < 5; ++poll) api.get_service("key-a", "proj-a", ids[i]);
    });
  }
  for (auto& thread : threads) thread.join();
  CHECK(std::set<std::string>(ids.begin(), ids.end()).size() == kClients);
  CHECK(live.sim.all_services().size() == kClients);
  CHECK(live.sim.request_counts()["GET /projects/{project_id}/services/{service_id}"] == kClients * 5);
}

TEST_CASE("sim: SimServer refuses a busy port, and stop() is safe to repeat") {
  LiveSim live;
  FakeClock clock;
  Simulator other(server_config(), clock);
  SimServer second(other);
  CHECK_THROWS_WITH(second.start("127.0.0.1", live.port), Catch::Contains("cannot listen on 127.0.0.1:"));
  live.server.stop();
  live.server.stop();
  live.server.wait();  // returns at once: the listener has finished
  CHECK_THROWS_AS(live.get("/auth/info", "Bearer key-a"), TransportError);
}

TEST_CASE("sim: --connection-delay charges each new connection once, before its first answer") {
  FakeClock clock;
  Simulator sim(server_config(), clock);
  const Duration delay = std::chrono::milliseconds(200);
  SimServer server(sim, delay);
  const int port = server.start("127.0.0.1", 0);
  const std::string url = "http://127.0.0.1:" + std::to_string(port) + "/_sim/requests";
  CurlTransport kept;  // one connection, kept alive
  const auto started = std::chrono::steady_clock::now();
  CHECK(kept.send({"GET", url, {}, ""}).status == 200);
  CHECK(std::chrono::steady_clock::now() - started >= delay);  // the handshake's cost was paid
  CHECK(kept.send({"GET", url, {}, ""}).status == 200);
  CHECK(server.connections_charged() == 1);
  CurlTransport other;  // a second connection pays again
  CHECK(other.send({"GET", url, {}, ""}).status == 200);
  CHECK(server.connections_charged() == 2);
  server.stop();
}

// The API over TLS. The client is what every command uses (ApiClient, CurlTransport
// with the CA bundle SSL_CERT_FILE names); a refused certificate fails the first call at once,
// without the retries and back-off a network failure gets, and nothing reaches the simulator.
TEST_CASE("sim: SimServer over HTTPS serves ApiClient trusting its CA, and a refused certificate fails at once, unretried") {
  tlstest::TempPki pki;
  FakeClock clock;
  Simulator sim(server_config(), clock);
  SimServer server(sim, Duration(0), SimTls{pki.file("good.pem"), pki.file("good.key")});
  const int port = server.start("127.0.0.1", 0);
  const std::string base = "https://localhost:" + std::to_string(port) + "/public/api/v1";
  RetryPolicy retry;
  retry.seed = 1;

  TransportOptions trusting;
  trusting.ca_file = pki.file("ca.pem");
  CurlTransport transport(trusting);
  ApiClient client(transport, clock, base, AuthScheme::Bearer, retry);
  CHECK(client.auth_info("key-a").project_id == "proj-a");
  Service created = client.create_service("key-a", "proj-a", named("orders"));
  CHECK(created.name == "orders");
  CHECK(sim.request_counts()["POST /projects/{project_id}/services"] == 1);

  CurlTransport untrusting;  // the system's CAs: the test CA is not among them
  ApiClient refused(untrusting, clock, base, AuthScheme::Bearer, retry);
  const auto before = clock.now();
  const json counts = sim.request_counts();
  for (int call = 0; call < 2; ++call) {
    const auto e = thrown<ApiError>([&] {
      if (call == 0) refused.auth_info("key-a");
      else refused.create_service("key-a", "proj-a", named("billing"));
    });
    REQUIRE(e);
    INFO(e->what());
    CHECK(std::string(e->what()).find(": could not reach the API: ") != std::string::npos);
    CHECK(std::string(e->what()).find("(after") == std::string::npos);  // one attempt
    CHECK(std::string(e->what()).find("unknown issuer") != std::string::npos);
    CHECK_FALSE(e->outcome_unknown());  // nothing was sent: not "may or may not exist"
  }
  CHECK(clock.now() == before);  // no back-off was slept
  CHECK(sim.request_counts() == counts);
  server.stop();
}

TEST_CASE("sim: SimServer refuses a TLS certificate and key it cannot load, naming them") {
  tlstest::TempPki pki;
  FakeClock clock;
  Simulator sim(server_config(), clock);
  CHECK_THROWS_WITH(SimServer(sim, Duration(0), SimTls{pki.file("good.pem"), pki.file("expired.key")}),
                    Catch::Contains("cannot serve HTTPS with certificate " + pki.file("good.pem") + " and key " +
                                    pki.file("expired.key")));
}
