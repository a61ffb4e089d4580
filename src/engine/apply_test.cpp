// The apply engine against a scripted API: order of creates, intents, recording, unknown outcomes,
// adoption, preflight, stopping and updates.
#include <algorithm>
#include <catch2/catch.hpp>
#include <condition_variable>

#include "engine/test_support.h"
#include "util/text.h"

using namespace dbform;
using namespace dbform::test;
using nlohmann::json;
using R = FakeTransport;

namespace {

size_t index_of(const std::vector<HttpRequest>& reqs, const std::string& method, const std::string& suffix) {
  for (size_t i = 0; i < reqs.size(); ++i)
    if (reqs[i].method == method && path_of(reqs[i]).ends_with(suffix)) return i;
  return reqs.size();
}

const json kFullService = {{"initial_password", "pw-orders"},
                           {"endpoint", {{"host", "orders.db.test"}, {"port", 5432}}},
                           {"connection_pooler", {{"endpoint", {{"host", "pool.orders.db.test"}, {"port", 6432}}}}}};

}  // namespace

TEST_CASE("engine: intents before creates, results right after") {
  Harness h;
  h.vpc("p1", "main");
  h.service("p1", "orders");
  h.service("p1", "billing");
  std::mutex mu;
  std::vector<std::string> problems;  // seen inside the handler, asserted on the test's thread
  auto problem = [&](std::string p) {
    std::lock_guard<std::mutex> lock(mu);
    problems.push_back(std::move(p));
  };
  h.fake.set_handler([&](const HttpRequest& r) -> HttpResponse {
    const std::string path = path_of(r);
    if (r.method == "POST") {
      const std::string name = json::parse(r.body).at("name");
      const bool vpc = path.ends_with("/vpcs");
      auto rec = h.store.last_record("p1/" + std::string(vpc ? "vpcs/" : "services/") + name);
      if (!rec) problem(name + ": nothing recorded before its create was sent");
      else if (!rec->create_pending || !rec->id.empty()) problem(name + ": the record written first is not an intent");
      if (vpc) return R::response(201, R"({"id":"vpc-1","name":"main","cidr":"10.0.0.0/16"})");
      json extra = name == "orders" ? kFullService : json::object();
      return R::response(202, service_json("svc-" + name, name, "QUEUED", extra));
    }
    const std::string id = path.substr(path.rfind('/') + 1);
    auto rec = h.store.last_record("p1/services/" + id.substr(4));
    if (!rec || rec->id != id || rec->create_pending) problem(id + ": polled before the create's result was saved");
    json pooler = id == "svc-orders" ? json{{"connection_pooler", kFullService["connection_pooler"]}} : json::object();
    return R::response(200, service_json(id, id.substr(4), "READY", pooler));  // reads carry no password
  });

  ApplyResult result = h.apply();

  CHECK(problems == std::vector<std::string>{});
  CHECK(result.failures.empty());
  CHECK(result.created == 3);
  CHECK(result.ready == 3);
  CHECK(h.fake.count("POST", "/projects/p1/vpcs") == 1);
  CHECK(h.fake.count("POST", "/projects/p1/services") == 2);

  const State stored = *h.store.read();
  for (const State* s : std::vector<const State*>{&h.state, &stored}) {
    const ResourceRecord* orders = s->find("p1/services/orders");
    REQUIRE(orders);
    CHECK(orders->id == "svc-orders");
    CHECK_FALSE(orders->create_pending);
    CHECK(orders->status == "READY");
    CHECK(orders->initial_password == "pw-orders");  // the READY poll had none: kept
    CHECK(orders->endpoint_host == "orders.db.test");
    CHECK(orders->endpoint_port == 5432);
    CHECK(orders->pooler_host == "pool.orders.db.test");
    CHECK(orders->pooler_port == 6432);
    CHECK(orders->settings == json{{"cpu_millis", "1000"}, {"memory_gbs", "4"}});
    CHECK_FALSE(orders->last_response.contains("initial_password"));
    const ResourceRecord* vpc = s->find("p1/vpcs/main");
    REQUIRE(vpc);
    CHECK(vpc->id == "vpc-1");
    CHECK_FALSE(vpc->create_pending);
  }
  CHECK(h.events.of(EventKind::Ready).size() == 3);
  CHECK(h.events.of(EventKind::Created, "p1/services/orders").at(0).resource_id == "svc-orders");
}

TEST_CASE("engine: never more requests in flight than the parallelism") {
  const int parallelism = GENERATE(1, 3);
  const int total = 7;
  Harness h;
  h.options.parallelism = parallelism;
  h.options.wait = false;
  for (int i = 0; i < total; ++i) h.service("p1", "s" + std::to_string(i));
  std::mutex mu;
  std::condition_variable cv;
  int current = 0, max_seen = 0, arrived = 0;
  bool open = false;
  h.fake.set_handler([&](const HttpRequest& r) {
    std::unique_lock<std::mutex> lock(mu);
    max_seen = std::max(max_seen, ++current);
    ++arrived;
    // Hold the first requests until `parallelism` of them are inside at once (proving the engine
    // does use its workers), or until no more can come.
    if (current >= parallelism || arrived == total) open = true;
    cv.notify_all();
    cv.wait_for(lock, std::chrono::seconds(10), [&] { return open; });
    --current;
    const std::string name = json::parse(r.body).at("name");
    return R::response(202, service_json("svc-" + name, name, "QUEUED"));
  });

  ApplyResult result = h.apply();

  CHECK(max_seen == parallelism);
  CHECK(result.created == total);
  CHECK(result.failures.empty());
  CHECK(h.fake.count("GET", "") == 2);  // --no-wait: nothing polled; the name guard's two lists only
}

TEST_CASE("engine: a create whose outcome is unknown is looked up by name before anything is re-sent") {
  Harness h;
  h.service("p1", "orders");
  SECTION("answered 500") {
    h.fake.on("POST", "/projects/p1/services", R::response(500, R"({"code":"internal","message":"boom"})"));
  }
  SECTION("connection lost after sending") { h.fake.fail("POST", "/projects/p1/services", true); }

  SECTION("one match: adopted, no second create") {
    h.fake.on("POST", "/projects/p1/services", R::response(500));
    h.fake.on("GET", "/projects/p1/services",
              R::response(200, "[" + service_json("svc-x", "other", "READY") + "," +
                                   service_json("svc-9", "orders", "CONFIGURING") + "]"));
    h.fake.always("GET", "/services/svc-9", R::response(200, service_json("svc-9", "orders", "READY")));
    std::string pending_when_sent;
    h.fake.set_handler([&](const HttpRequest& r) {
      // The new password is on disk, as pending, before the call that sets it.
      auto rec = h.store.last_record("p1/services/orders");
      if (rec && path_of(r).ends_with("/services/svc-9/updatePassword")) pending_when_sent = rec->pending_password.text();
      return R::response(204);
    });
    ApplyResult result = h.apply();
    CHECK(h.fake.count("POST", "/projects/p1/services") == 1);
    CHECK(result.adopted == 1);
    CHECK(result.created == 0);
    CHECK(result.ready == 1);
    auto adopted = h.events.of(EventKind::Adopted, "p1/services/orders");
    REQUIRE(adopted.size() == 1);
    CHECK(adopted[0].resource_id == "svc-9");
    CHECK_THAT(adopted[0].message, Catch::Contains("password"));
    auto rec = h.store.last_record("p1/services/orders");
    REQUIRE(rec);
    CHECK(rec->id == "svc-9");
    CHECK_FALSE(rec->create_pending);
    CHECK(rec->status == "READY");
    // Its initial password was lost with the answer: a new one, set through the API and recorded.
    CHECK(h.fake.count("POST", "/services/svc-9/updatePassword") == 1);
    std::string sent_body;
    for (const auto& r : h.fake.requests())
      if (path_of(r).ends_with("/updatePassword")) sent_body = r.body;
    CHECK(rec->initial_password.text().size() >= 32);
    CHECK(json::parse(sent_body) == json{{"password", rec->initial_password.text()}});
    CHECK(pending_when_sent == rec->initial_password.text());
    CHECK(rec->pending_password.empty());
    return;
  }
  SECTION("two matches: failure naming both, intent kept") {
    h.fake.on("POST", "/projects/p1/services", R::response(502));
    h.fake.on("GET", "/projects/p1/services",
              R::response(200, "[" + service_json("svc-1", "orders", "READY") + "," +
                                   service_json("svc-2", "orders", "READY") + "]"));
    ApplyResult result = h.apply();
    CHECK(h.fake.count("POST", "/projects/p1/services") == 1);
    REQUIRE(result.failures.size() == 1);
    CHECK_THAT(result.failures[0], Catch::StartsWith("p1/services/orders: ") && Catch::Contains("svc-1") &&
                                       Catch::Contains("svc-2"));
    auto rec = h.store.last_record("p1/services/orders");
    REQUIRE(rec);  // the next run must look again, not create a third
    CHECK(rec->create_pending);
    CHECK(rec->id.empty());
    return;
  }

  // No match anywhere in the settle window: created again, exactly once, after the last lookup.
  h.fake.always("GET", "/projects/p1/services", R::response(200, "[" + service_json("svc-x", "other", "READY") + "]"));
  h.fake.on("POST", "/projects/p1/services", R::response(202, service_json("svc-2", "orders", "READY")));
  const auto start = h.clock.now();
  ApplyResult result = h.apply();
  auto reqs = h.fake.requests();
  CHECK(h.fake.count("POST", "/projects/p1/services") == 2);
  // The name guard's list, then lookups at 0, w/16, w/8, w/4, w/2 and w of the settle window w.
  CHECK(h.fake.count("GET", "/projects/p1/services") == 1 + 6);
  CHECK(h.clock.now() - start >= h.options.settle_window);
  size_t last_lookup = 0, second_create = 0, creates = 0;
  for (size_t i = 0; i < reqs.size(); ++i) {
    if (reqs[i].method == "GET" && path_of(reqs[i]).ends_with("/projects/p1/services")) last_lookup = i;
    if (reqs[i].method == "POST" && ++creates == 2) second_create = i;
  }
  CHECK(last_lookup < second_create);
  CHECK(result.created == 1);
  CHECK(result.adopted == 0);
  CHECK(result.failures.empty());
  CHECK(h.state.find("p1/services/orders")->id == "svc-2");
}

TEST_CASE("engine: a create refused with 4xx forgets the intent and fails that resource only") {
  Harness h;
  h.service("p1", "bad");
  h.service("p1", "good");
  h.fake.set_handler([](const HttpRequest& r) {
    const std::string name = json::parse(r.body).at("name");
    if (name == "bad") return R::response(400, R"({"code":"invalid","message":"cpu_millis is not allowed"})");
    return R::response(202, service_json("svc-good", "good", "READY"));
  });
  ApplyResult result = h.apply();
  REQUIRE(result.failures.size() == 1);
  CHECK_THAT(result.failures[0], Catch::StartsWith("p1/services/bad: ") && Catch::Contains("400") &&
                                     Catch::Contains("cpu_millis is not allowed"));
  CHECK(result.ready == 1);
  CHECK(h.fake.count("POST", "/services") == 2);  // a refusal is not retried
  CHECK(h.state.find("p1/services/bad") == nullptr);
  CHECK_FALSE(h.store.last_record("p1/services/bad"));
  bool intent_was_written = false;
  for (const auto& s : h.store.snapshots()) intent_was_written |= s.find("p1/services/bad") != nullptr;
  CHECK(intent_was_written);
  CHECK(h.store.last_record("p1/services/good")->status == "READY");
  CHECK(h.events.of(EventKind::Failed, "p1/services/bad").size() == 1);
}

// The first create's answer was lost and the list never showed it within the settle window; the
// second is refused. The first may still exist (a list lagging longer than the window), so its
// intent stays for the next apply to look up, rather than being forgotten as "nothing created".
TEST_CASE("engine: a create refused after an unknown outcome keeps its intent") {
  Harness h;
  h.service("p1", "orders");
  size_t creates = 0;
  SECTION("this run's first create was unknown") {
    h.fake.on("POST", "/projects/p1/services", R::response(504));
    creates = 2;
  }
  SECTION("an earlier run's create was unknown (an adopt)") {
    h.recorded("p1", "orders", "", "", /*create_pending=*/true);
    creates = 1;
  }
  h.fake.always("GET", "/projects/p1/services", R::response(200, "[]"));
  h.fake.on("POST", "/projects/p1/services", R::response(400, R"({"code":"quota","message":"too many services"})"));
  ApplyResult result = h.apply();
  REQUIRE(result.failures.size() == 1);
  CHECK_THAT(result.failures[0], Catch::Contains("too many services") && Catch::Contains("looks it up by name"));
  const ResourceRecord* rec = h.state.find("p1/services/orders");
  REQUIRE(rec);
  CHECK(rec->create_pending);
  CHECK(rec->id.empty());
  CHECK(h.fake.count("POST", "/projects/p1/services") == creates);
}

TEST_CASE("engine: an adopt action lists by name first and creates only when nothing is found") {
  Harness h;
  h.service("p1", "orders");
  h.recorded("p1", "orders", "", "", /*create_pending=*/true);
  h.fake.always("GET", "/services/svc-5", R::response(200, service_json("svc-5", "orders", "READY")));
  SECTION("found") {
    h.fake.on("GET", "/projects/p1/services", R::response(200, "[" + service_json("svc-5", "orders", "QUEUED") + "]"));
    h.fake.always("POST", "/services/svc-5/updatePassword", R::response(204));
    ApplyResult result = h.apply();
    REQUIRE(h.plan.actions.at(0).action == Action::Adopt);
    CHECK(h.fake.count("POST", "/services") == 0);
    CHECK(result.adopted == 1);
    CHECK(result.ready == 1);
    CHECK(h.state.find("p1/services/orders")->id == "svc-5");
    CHECK(h.events.of(EventKind::Adopted).size() == 1);
  }
  SECTION("not found") {
    h.fake.always("GET", "/projects/p1/services", R::response(200, "[]"));
    h.fake.on("POST", "/projects/p1/services", R::response(202, service_json("svc-5", "orders", "QUEUED")));
    ApplyResult result = h.apply();
    auto reqs = h.fake.requests();
    CHECK(index_of(reqs, "GET", "/projects/p1/services") < index_of(reqs, "POST", "/projects/p1/services"));
    CHECK(h.fake.count("POST", "/services") == 1);
    CHECK(result.created == 1);
    CHECK(result.ready == 1);
  }
  CHECK_FALSE(h.state.find("p1/services/orders")->create_pending);
}

TEST_CASE("engine: preflight checks each key of a project with work and refuses a wrong one") {
  Harness h;
  h.service("p1", "orders");
  auto auth = [](const std::string& project, const std::string& key_name) {
    return R::response(200, json{{"type", "apiKey"},
                                 {"api_key", {{"name", key_name}, {"project", {{"id", project}, {"name", "Staging"}}}}}}
                                .dump());
  };
  auto preflight = [&] {
    h.plan = make_plan(h.manifest, h.state);
    ApplyEngine engine(h.api, h.store, h.clock, h.events, h.options);
    engine.preflight(h.plan, h.keys());
  };

  SECTION("a key of another project") {
    h.fake.always("GET", "/auth/info", auth("p2", "ci-key"));
    std::string msg = message_of(preflight);
    CHECK_THAT(msg, Catch::Contains("`p1`") && Catch::Contains("`p2`") && Catch::Contains("ci-key") &&
                        Catch::Contains("DBFORM_API_KEY_p1"));
    CHECK_THAT(msg, !Catch::Contains("key-p1"));  // never the key itself
    CHECK(R::header_of(h.fake.requests().at(0), "Authorization") == "Bearer key-p1");
  }
  SECTION("a rejected key") {
    h.fake.always("GET", "/auth/info", R::response(401, R"({"code":"unauthorized","message":"invalid key"})"));
    std::string msg = message_of(preflight);
    CHECK_THAT(msg, Catch::Contains("401") && Catch::Contains("DBFORM_API_KEY_p1") && Catch::Contains("`p1`"));
  }
  SECTION("only projects with work are checked") {
    h.made("p0", "done", "svc-d", "READY");
    std::swap(h.manifest.projects[0], h.manifest.projects[1]);  // p0 first in the manifest
    h.fake.always("GET", "/auth/info", auth("p1", "p1-key"));
    CHECK(message_of(preflight) == "(nothing thrown)");
    REQUIRE(h.fake.requests().size() == 1);
    CHECK(R::header_of(h.fake.requests()[0], "Authorization") == "Bearer key-p1");
    auto passed = h.events.of(EventKind::PreflightPassed);
    REQUIRE(passed.size() == 1);
    CHECK_THAT(passed[0].message, Catch::Contains("p1-key") && Catch::Contains("DBFORM_API_KEY_p1"));
    return;
  }
  CHECK(h.fake.count("POST", "") == 0);
  CHECK(h.events.of(EventKind::PreflightPassed).empty());
}

TEST_CASE("engine: preflight names every problem at once") {
  Harness h;
  h.service("p1", "a");
  h.service("p2", "b");
  h.fake.set_handler([](const HttpRequest& r) {
    if (R::header_of(r, "Authorization") == "Bearer key-p1") return R::response(403, R"({"message":"revoked"})");
    return R::response(200, R"({"api_key":{"name":"k","project":{"id":"p3"}}})");
  });
  ApplyEngine engine(h.api, h.store, h.clock, h.events, h.options);
  Plan plan = make_plan(h.manifest, h.state);
  std::string msg = message_of([&] { engine.preflight(plan, h.keys()); });
  CHECK_THAT(msg, Catch::Contains("403") && Catch::Contains("revoked") && Catch::Contains("`p3`") &&
                      Catch::Contains("nothing was changed"));
}

TEST_CASE("engine: a stop starts nothing new, records what was in flight and lists what is pending") {
  Harness h;
  std::atomic<bool> stop{false};
  h.options.stop = &stop;
  h.options.parallelism = 2;
  for (const char* n : {"a", "b", "c", "d"}) h.service("p1", n);
  std::mutex mu;
  std::condition_variable cv;
  int arrived = 0;
  h.fake.set_handler([&](const HttpRequest& r) {
    const std::string name = json::parse(r.body).at("name");
    {
      // Both creates are on the wire before either answers; then SIGINT.
      std::unique_lock<std::mutex> lock(mu);
      ++arrived;
      cv.notify_all();
      cv.wait_for(lock, std::chrono::seconds(10), [&] { return arrived == 2; });
      stop = true;
    }
    return R::response(202, service_json("svc-" + name, name, "QUEUED", {{"initial_password", "pw"}}));
  });
  ApplyResult result = h.apply();
  CHECK(h.fake.count("POST", "/services") == 2);  // the two in flight; c and d never started
  CHECK(h.fake.count("GET", "") == 2);            // the name guard's lists; nothing polled
  CHECK(result.interrupted);
  CHECK(result.pending == std::vector<std::string>{"p1/services/a", "p1/services/b", "p1/services/c",
                                                   "p1/services/d"});
  for (const char* n : {"a", "b"}) {
    auto rec = h.store.last_record(std::string("p1/services/") + n);
    REQUIRE(rec);
    CHECK(rec->id == std::string("svc-") + n);
    CHECK(rec->initial_password == "pw");
    CHECK_FALSE(rec->create_pending);
  }
  CHECK_FALSE(h.store.last_record("p1/services/c"));
  CHECK(h.events.of(EventKind::Interrupted).size() == 1);
}

TEST_CASE("engine: when the intent cannot be saved, the create is not sent") {
  Harness h;
  h.service("p1", "orders");
  h.store.fail_writes();
  h.fake.always("POST", "/projects/p1/services", R::response(202, service_json("svc-1", "orders", "READY")));
  ApplyResult result = h.apply();
  CHECK_THAT(result.save_error, Catch::Contains("write refused"));
  CHECK(h.fake.count("POST", "") == 0);
  CHECK_FALSE(h.state.find("p1/services/orders"));  // the unsent intent is not kept in memory either
  CHECK(result.pending == std::vector<std::string>{"p1/services/orders"});
}

TEST_CASE("engine: when the state stops being writable mid-run, nothing new starts and what was learned is kept") {
  Harness h;
  h.options.parallelism = 1;
  h.service("p1", "a");
  h.service("p1", "b");
  // The first create's answer arrives, and from then on the disk refuses every write.
  h.fake.set_handler([&](const HttpRequest&) {
    h.store.fail_writes();
    return R::response(202, service_json("svc-a", "a", "QUEUED", {{"initial_password", "pw-svc-a"}}));
  });
  ApplyResult result = h.apply();
  CHECK_THAT(result.save_error, Catch::Contains("write refused"));
  CHECK(result.unsaved_changes);
  CHECK(h.fake.count("POST", "/projects/p1/services") == 1);  // b was never sent
  REQUIRE(h.state.find("p1/services/a"));
  CHECK(h.state.find("p1/services/a")->id == "svc-a");  // in memory, for the recovery file
  CHECK(h.state.find("p1/services/a")->initial_password == "pw-svc-a");
  CHECK_FALSE(h.state.find("p1/services/b"));
}

TEST_CASE("engine: a VPC whose create outcome is unknown is adopted before the services declared in it go") {
  Harness h;
  h.vpc("p1", "main");
  h.service("p1", "orders").vpc = "main";
  h.fake.fail("POST", "/projects/p1/vpcs", /*may_have_reached_server=*/true);
  h.fake.on("GET", "/projects/p1/vpcs", R::response(200, R"([{"id":"vpc-7","name":"main"}])"));
  h.fake.on("POST", "/projects/p1/services", R::response(202, service_json("svc-1", "orders", "READY")));
  const json attached = {{"vpcEndpoint", {{"vpc_id", "vpc-7"}}}};
  h.fake.on("POST", "/services/svc-1/attachToVPC", R::response(202, service_json("svc-1", "orders", "UPGRADING")));
  h.fake.on("GET", "/services/svc-1", R::response(200, service_json("svc-1", "orders", "READY", attached)));
  ApplyResult result = h.apply();
  CHECK(result.failures.empty());
  CHECK(result.adopted == 1);
  CHECK(result.created == 1);
  CHECK(h.fake.count("POST", "/vpcs") == 1);
  auto reqs = h.fake.requests();
  // The name guard's list, then the VPC's create, then the list that finds it, then the service.
  const size_t create = index_of(reqs, "POST", "/projects/p1/vpcs");
  size_t adopted = reqs.size();
  for (size_t i = create; i < reqs.size() && adopted == reqs.size(); ++i)
    if (reqs[i].method == "GET" && path_of(reqs[i]).ends_with("/projects/p1/vpcs")) adopted = i;
  CHECK(adopted < index_of(reqs, "POST", "/projects/p1/services"));
  CHECK(json::parse(reqs.at(index_of(reqs, "POST", "/attachToVPC")).body) == json{{"vpc_id", "vpc-7"}});
  CHECK(h.state.find("p1/vpcs/main")->id == "vpc-7");
  CHECK(h.events.of(EventKind::Adopted, "p1/vpcs/main").at(0).message.empty());  // VPCs have no password
}

TEST_CASE("engine: a stop while waiting leaves the service recorded and pending, one after the end changes nothing") {
  Harness h;
  std::atomic<bool> stop{false};
  h.options.stop = &stop;
  h.service("p1", "orders");
  h.fake.on("POST", "/projects/p1/services", R::response(202, service_json("svc-1", "orders", "QUEUED")));
  // The stop arrives with the answer to the first poll, which shows `status`.
  auto stop_at_poll_answering = [&](const char* status) {
    h.fake.set_handler([&stop, status](const HttpRequest&) {
      stop = true;
      return R::response(200, service_json("svc-1", "orders", status));
    });
  };
  SECTION("while CONFIGURING") {
    stop_at_poll_answering("CONFIGURING");
    ApplyResult result = h.apply();
    CHECK(result.interrupted);
    CHECK(result.pending == std::vector<std::string>{"p1/services/orders"});
    CHECK(h.fake.count("GET", "/services/svc-1") == 1);
    CHECK(h.store.last_record("p1/services/orders")->status == "CONFIGURING");
    // The next run waits for it and never creates it again.
    CHECK(make_plan(h.manifest, h.state).actions.at(0).action == Action::Wait);
  }
  SECTION("with the last answer") {
    stop_at_poll_answering("READY");
    ApplyResult result = h.apply();
    CHECK_FALSE(result.interrupted);
    CHECK(result.pending.empty());
    CHECK(result.ready == 1);
  }
}

TEST_CASE("engine: the name guard creates nothing beside an unrecorded namesake, and nothing unchecked") {
  Harness h;
  h.script_name_guard = false;
  h.options.wait = false;
  h.service("p1", "legacy");
  h.service("p1", "fresh");
  h.service("p2", "other");
  h.service("p3", "renewed");
  h.fake.on("GET", "/projects/p1/services", R::response(200, "[" + service_json("svc-old", "legacy", "READY") + "]"));
  h.fake.on("GET", "/projects/p3/services", R::response(200, "[" + service_json("svc-gone", "renewed", "DELETING") + "]"));
  for (const char* p : {"p1", "p2", "p3"})
    h.fake.always("GET", std::string("/projects/") + p + "/vpcs", R::response(200, "[]"));
  h.fake.always("GET", "/projects/p2/services", R::response(503, R"({"message":"down"})"));
  h.fake.always("POST", "/projects/p3/services", R::response(202, service_json("svc-new", "renewed", "QUEUED")));
  ApplyResult result = h.apply();
  // `legacy` exists unrecorded: not created, named with its id; nor is anything else of p1 (another
  // writer is there). `renewed` only has a namesake being deleted: created. p2 could not be listed:
  // nothing of it is created.
  CHECK(h.fake.count("POST", "/projects/p1/services") == 0);
  CHECK(h.fake.count("POST", "/projects/p2/services") == 0);
  CHECK(h.fake.count("POST", "/projects/p3/services") == 1);
  CHECK(result.created == 1);
  REQUIRE(result.failures.size() == 3);
  CHECK_THAT(result.failures[0], Catch::StartsWith("p1/services/legacy: not created") && Catch::Contains("svc-old") &&
                                     Catch::Contains("dbform import p1/services/legacy svc-old"));
  CHECK_THAT(result.failures[1], Catch::StartsWith("p1/services/fresh: not created") &&
                                     Catch::Contains("p1/services/legacy exist(s) already") &&
                                     Catch::Contains("dbform plan"));
  CHECK_THAT(result.failures[2], Catch::StartsWith("p2/services/other: not created") && Catch::Contains("503"));
  CHECK_FALSE(h.state.find("p1/services/legacy"));
  CHECK_FALSE(h.state.find("p1/services/fresh"));
  CHECK_FALSE(h.state.find("p2/services/other"));
}

TEST_CASE("engine: after an unknown outcome, a list that lags is asked again until the service shows") {
  Harness h;
  h.service("p1", "orders");
  h.fake.on("POST", "/projects/p1/services", R::response(504, R"({"message":"gateway timeout"})"));
  h.fake.on("GET", "/projects/p1/services", R::response(200, "[]"));
  h.fake.on("GET", "/projects/p1/services", R::response(200, "[]"));
  h.fake.always("GET", "/projects/p1/services",
                R::response(200, "[" + service_json("svc-late", "orders", "READY",
                                                    {{"region_code", "eu-west-1"},
                                                     {"resources", json::array({{{"spec", {{"cpu_millis", 2000},
                                                                                           {"memory_gbs", 8}}}}})}}) +
                                     "]"));
  h.fake.always("GET", "/services/svc-late", R::response(200, service_json("svc-late", "orders", "READY")));
  h.fake.always("POST", "/services/svc-late/updatePassword", R::response(204));
  ApplyResult result = h.apply();
  CHECK(h.fake.count("POST", "/projects/p1/services") == 1);  // never re-sent
  CHECK(h.fake.count("GET", "/projects/p1/services") == 1 + 3);
  CHECK(result.adopted == 1);
  CHECK(result.failures.empty());
  // Recorded as found, so the next plan shows that it is not what was declared, and puts it back.
  const ResourceRecord* rec = h.state.find("p1/services/orders");
  REQUIRE(rec);
  CHECK(rec->settings == json{{"cpu_millis", "1000"}, {"memory_gbs", "4"}});
  CHECK(rec->observed.value("cpu_millis", "") == "2000");
  CHECK(rec->observed.value("region_code", "") == "eu-west-1");
  const Plan next = make_plan(h.manifest, h.state);
  REQUIRE(next.actions.at(0).action == Action::Update);
  CHECK(next.actions.at(0).calls.at(0).body == json{{"cpu_millis", "1000"}, {"memory_gbs", "4"}});
  CHECK_THAT(h.events.of(EventKind::Adopted).at(0).message, Catch::Contains("differ"));
}

TEST_CASE("engine: a stop ends the settle window at once and sends nothing more") {
  Harness h;
  std::atomic<bool> stop{false};
  h.options.stop = &stop;
  h.options.settle_window = std::chrono::hours(1);
  h.service("p1", "orders");
  h.fake.on("POST", "/projects/p1/services", R::response(500));
  int lookups = 0;
  h.fake.set_handler([&](const HttpRequest&) {
    if (++lookups == 2) stop = true;  // SIGTERM while the lookups wait
    return R::response(200, "[]");
  });
  const auto start = h.clock.now();
  ApplyResult result = h.apply();
  CHECK(lookups == 2);
  CHECK(h.clock.now() - start < std::chrono::minutes(10));  // not the rest of the hour
  CHECK(h.fake.count("POST", "") == 1);
  CHECK(result.interrupted);
  auto rec = h.store.last_record("p1/services/orders");
  REQUIRE(rec);  // the next apply looks it up again before creating
  CHECK(rec->create_pending);
}

// A renderer that sees each event only once the store has what it tells, and then fails.
class CheckingFailingSink : public EventSink {
 public:
  explicit CheckingFailingSink(MemoryStateStore& store) : store_(store) {}
  void on_event(const Event& e) override {
    if (e.kind == EventKind::Created || e.kind == EventKind::Ready) {
      auto rec = store_.last_record(e.address);
      if (!rec || (rec->id != e.resource_id && e.kind == EventKind::Created)) unsaved.push_back(e.address);
    }
    ++seen;
    throw std::runtime_error("write: Broken pipe");
  }
  MemoryStateStore& store_;
  std::vector<std::string> unsaved;
  int seen = 0;
};

TEST_CASE("engine: results are saved before any renderer sees them, and a failing renderer stops nothing") {
  Harness h;
  h.service("p1", "a");
  h.service("p1", "b");
  h.fake.set_handler([](const HttpRequest& r) {
    if (r.method == "POST") {
      const std::string name = json::parse(r.body).at("name");
      return R::response(202, service_json("svc-" + name, name, "READY", {{"initial_password", "pw-" + name}}));
    }
    return R::response(200, "[]");
  });
  CheckingFailingSink sink(h.store);
  h.plan = make_plan(h.manifest, h.state);
  ApplyEngine engine(h.api, h.store, h.clock, sink, h.options);
  ApplyResult result = engine.apply(h.plan, h.keys(), h.state);
  CHECK(sink.unsaved.empty());
  CHECK(sink.seen >= 4);  // every event was still offered
  CHECK(result.created == 2);
  CHECK(result.ready == 2);
  for (const char* n : {"a", "b"}) CHECK(h.store.last_record(std::string("p1/services/") + n)->initial_password == std::string("pw-") + n);
}

TEST_CASE("engine: a new password the API did not confirm stays pending, and the next apply sets it again") {
  Harness h;
  h.made("p1", "orders", "svc-1", "READY").pending_password = "chosen-before-the-crash-0123456789";
  h.fake.always("GET", "/services/svc-1", R::response(200, service_json("svc-1", "orders", "READY")));
  SECTION("refused") {
    h.fake.always("POST", "/services/svc-1/updatePassword", R::response(400, R"({"message":"too weak"})"));
    ApplyResult result = h.apply();
    REQUIRE(h.plan.actions.at(0).action == Action::Wait);
    REQUIRE(result.failures.size() == 1);
    CHECK_THAT(result.failures[0], Catch::Contains("too weak") && Catch::Contains("pending"));
    CHECK_THAT(result.failures[0], !Catch::Contains("chosen-before-the-crash"));
    CHECK(h.state.find("p1/services/orders")->pending_password == "chosen-before-the-crash-0123456789");
    CHECK(h.state.find("p1/services/orders")->initial_password.empty());
  }
  SECTION("confirmed") {
    h.fake.always("POST", "/services/svc-1/updatePassword", R::response(204));
    ApplyResult result = h.apply();
    CHECK(result.failures.empty());
    CHECK(result.ready == 1);
    CHECK(h.fake.requests().back().body == R"({"password":"chosen-before-the-crash-0123456789"})");
    CHECK(h.store.last_record("p1/services/orders")->initial_password == "chosen-before-the-crash-0123456789");
    CHECK(h.store.last_record("p1/services/orders")->pending_password.empty());
    CHECK(make_plan(h.manifest, h.state).actions.at(0).action == Action::NoOp);
  }
}

TEST_CASE("engine: a service whose new password is on the way is not polled, so it is set once") {
  Harness h;
  const std::vector<std::string> names = {"adopted", "slow1", "slow2", "slow3"};
  for (const auto& n : names) h.service("p1", n);
  std::mutex mu;
  std::condition_variable cv;
  int checks = 0;  // status checks: lists and GETs by id
  auto status_of = [&](const std::string& name) {
    if (name == "adopted") return checks == 1 ? "QUEUED" : "READY";  // the lookup after the lost answer finds it QUEUED
    return checks < 8 ? "CONFIGURING" : "READY";
  };
  h.fake.set_handler([&](const HttpRequest& r) {
    const std::string path = path_of(r);
    if (r.method == "POST" && path.ends_with("/updatePassword")) {
      // Slow to answer: list rounds go on meanwhile, for the three services still CONFIGURING.
      std::unique_lock<std::mutex> lock(mu);
      const int seen = checks;
      cv.wait_for(lock, std::chrono::seconds(5), [&] { return checks >= seen + 2; });
      return R::response(204);
    }
    if (r.method == "POST") {
      const std::string name = json::parse(r.body).at("name");
      if (name == "adopted") return R::response(500);  // performed, its answer lost
      return R::response(202, service_json("svc-" + name, name, "QUEUED"));
    }
    std::lock_guard<std::mutex> lock(mu);
    ++checks;
    cv.notify_all();
    if (!path.ends_with("/projects/p1/services")) {
      const std::string name = path.substr(path.rfind("/svc-") + 5);
      return R::response(200, service_json("svc-" + name, name, status_of(name)));
    }
    json list = json::array();
    for (const auto& n : names) list.push_back(json::parse(service_json("svc-" + n, n, status_of(n))));
    return R::response(200, list.dump());
  });
  ApplyResult result = h.apply();
  INFO((result.failures.empty() ? std::string() : result.failures[0]));
  CHECK(result.failures.empty());
  CHECK(result.ready == 4);
  CHECK(h.fake.count("POST", "/services/svc-adopted/updatePassword") == 1);
  CHECK(h.state.find("p1/services/adopted")->initial_password.text().size() >= 32);
}

namespace {

json spec(int cpu, int memory) { return {{"resources", json::array({{{"spec", {{"cpu_millis", cpu}, {"memory_gbs", memory}}}}})}}; }

}  // namespace

TEST_CASE("engine: an update is journaled before its call, cleared after, and watched until its change shows") {
  Harness h;
  h.made("p1", "orders", "svc-orders", "READY");
  h.manifest.projects[0].services[0].cpu_millis = "2000";
  int gets = 0;
  std::vector<std::string> problems;
  h.fake.set_handler([&](const HttpRequest& r) -> HttpResponse {
    const std::string path = path_of(r);
    if (r.method == "POST" && path.ends_with("/resize")) {
      auto rec = h.store.last_record("p1/services/orders");
      if (!rec || rec->pending_call.value("call", "") != "resize") problems.push_back("resize sent before it was recorded");
      if (json::parse(r.body) != json{{"cpu_millis", "2000"}, {"memory_gbs", "4"}}) problems.push_back("body " + r.body);
      return R::response(202, service_json("svc-orders", "orders", "UPGRADING", spec(1000, 4)));
    }
    // READY before the change shows (a view that lags), then READY with it.
    ++gets;
    return R::response(200, service_json("svc-orders", "orders", "READY", gets < 3 ? spec(1000, 4) : spec(2000, 4)));
  });
  ApplyResult result = h.apply();
  CHECK(problems == std::vector<std::string>{});
  CHECK(result.failures.empty());
  CHECK(result.updated == 1);
  CHECK(h.fake.count("POST", "/resize") == 1);
  CHECK(gets == 3);  // it did not stop at the first READY, which did not show the change
  const ResourceRecord* rec = h.state.find("p1/services/orders");
  CHECK(rec->pending_call.is_null());
  CHECK(rec->settings["cpu_millis"] == "2000");
  CHECK(h.store.last_record("p1/services/orders")->pending_call.is_null());
  CHECK(make_plan(h.manifest, h.state).summary.update == 0);
  CHECK(h.events.of(EventKind::UpdateSent).size() == 1);
  CHECK(h.events.of(EventKind::Updated).size() == 1);
}

TEST_CASE("engine: a resize whose gateway answered 504 after it was made is not made a third time") {
  Harness h;
  h.made("p1", "orders", "svc-orders", "READY");
  h.manifest.projects[0].services[0].cpu_millis = "2000";
  bool made = false;
  h.fake.set_handler([&](const HttpRequest& r) -> HttpResponse {
    if (r.method == "POST") {
      // The first is made but its answer is a 504; the retry is refused: the service is busy.
      if (made) return R::response(409, R"({"code":"CONFLICT","message":"service is UPGRADING"})");
      made = true;
      return R::response(504, R"({"message":"gateway timeout"})");
    }
    return R::response(200, service_json("svc-orders", "orders", "READY", spec(2000, 4)));
  });
  ApplyResult result = h.apply();
  INFO(dbform::join(result.failures, "\n"));
  CHECK(result.failures.empty());
  CHECK(h.fake.count("POST", "/resize") == 2);  // the client's retry of the 504; then the service tells
  CHECK(h.state.find("p1/services/orders")->settings["cpu_millis"] == "2000");
  CHECK(make_plan(h.manifest, h.state).summary.update == 0);
}

TEST_CASE("engine: a call left pending by a stopped run is checked first, and sent only if its change is missing") {
  for (bool made : {true, false}) {
    Harness h;
    ResourceRecord& rec = h.made("p1", "orders", "svc-orders", "READY");
    rec.pending_call = {{"call", "resize"}, {"body", {{"cpu_millis", "2000"}, {"memory_gbs", "4"}}}};
    h.manifest.projects[0].services[0].cpu_millis = "2000";
    int resizes = 0;
    h.fake.set_handler([&](const HttpRequest& r) -> HttpResponse {
      if (r.method == "POST") {
        ++resizes;
        return R::response(202, service_json("svc-orders", "orders", "UPGRADING", spec(1000, 4)));
      }
      const bool shows = made || resizes > 0;
      return R::response(200, service_json("svc-orders", "orders", "READY", shows ? spec(2000, 4) : spec(1000, 4)));
    });
    ApplyResult result = h.apply();
    CHECK(result.failures.empty());
    CHECK(resizes == (made ? 0 : 1));
    CHECK(h.state.find("p1/services/orders")->pending_call.is_null());
    CHECK(h.state.find("p1/services/orders")->settings["cpu_millis"] == "2000");
  }
}

TEST_CASE("engine: an update that the API refuses fails that service by name, and the others go on") {
  Harness h;
  h.made("p1", "orders", "svc-orders", "READY");
  h.made("p1", "billing", "svc-billing", "READY");
  for (auto& s : h.manifest.projects[0].services) s.environment_tag = "PROD";
  h.fake.set_handler([&](const HttpRequest& r) -> HttpResponse {
    const std::string path = path_of(r);
    if (r.method == "POST")
      return path.find("svc-orders") != std::string::npos
                 ? R::response(400, R"({"code":"BAD_REQUEST","message":"environment cannot change on this plan"})")
                 : R::response(200, R"({"message":"ok"})");
    const std::string id = path.substr(path.rfind('/') + 1);
    return R::response(200, service_json(id, id.substr(4), "READY", {{"metadata", {{"environment", "PROD"}}}}));
  });
  ApplyResult result = h.apply();
  REQUIRE(result.failures.size() == 1);
  CHECK_THAT(result.failures[0], Catch::Contains("p1/services/orders") && Catch::Contains("setEnvironment failed") &&
                                     Catch::Contains("cannot change on this plan"));
  CHECK(h.state.find("p1/services/billing")->settings["environment_tag"] == "PROD");
  CHECK_FALSE(h.state.find("p1/services/orders")->settings.contains("environment_tag"));
  CHECK(h.state.find("p1/services/orders")->pending_call.is_null());
}
