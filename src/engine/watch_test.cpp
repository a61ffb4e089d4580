// Watching services until READY: statuses, failures, retries, time-outs, wait actions, and a main
// loop that neither spins nor stalls while requests are in flight.
#include <catch2/catch.hpp>
#include <condition_variable>

#include "engine/test_support.h"
#include "plan/poll_schedule.h"
#include "plan/kinds.h"

using namespace dbform;
using namespace dbform::test;
using nlohmann::json;
using R = FakeTransport;
using std::chrono::milliseconds;

namespace {

// Creates answer 202 QUEUED with id svc-any.
void answer_creates(Harness& h) {
  h.fake.always("POST", "/projects/p1/services", R::response(202, service_json("svc-any", "any", "QUEUED")));
}

// The apply of `h` makes its one service READY, after `polls` reads of svc-any.
void check_ready_after(Harness& h, size_t polls) {
  ApplyResult result = h.apply();
  CHECK(result.failures.empty());
  CHECK(result.ready == 1);
  CHECK(h.fake.count("GET", "/services/svc-any") == polls);
}

HttpResponse created(const HttpRequest& r, const std::string& status = "QUEUED") {
  const std::string name = json::parse(r.body).at("name");
  return R::response(202, service_json("svc-" + name, name, status));
}

}  // namespace

TEST_CASE("engine: status classification and poll schedule") {
  CHECK(classify_status("READY") == StatusVerdict::Ready);
  CHECK(classify_status("PAUSED") == StatusVerdict::Paused);
  for (const char* s : {"DELETING", "DELETED"}) CHECK(classify_status(s) == StatusVerdict::Failed);
  for (const char* s : {"QUEUED", "CONFIGURING", "UNSTABLE", "PAUSING", "RESUMING", "UPGRADING", "OPTIMIZING", "",
                        "NEW_ONE"})
    CHECK(classify_status(s) == StatusVerdict::KeepWaiting);
  PollSchedule p;
  CHECK(p.after(milliseconds(0)) == milliseconds(1000));  // READY is seen within a second...
  CHECK(p.after(milliseconds(59'999)) == milliseconds(1000));
  CHECK(p.after(milliseconds(80'000)) == milliseconds(2000));  // ...then the pause grows
  CHECK(p.after(std::chrono::hours(1)) == milliseconds(10'000));
  PollSchedule fixed{milliseconds(100), milliseconds(100)};  // --poll-interval 100ms
  CHECK(fixed.after(std::chrono::hours(1)) == milliseconds(100));
}

TEST_CASE("engine: QUEUED -> CONFIGURING -> READY reports each change with its elapsed time") {
  Harness h;
  h.service("p1", "orders");
  h.fake.on("POST", "/projects/p1/services", R::response(202, service_json("svc-1", "orders", "QUEUED")));
  h.fake.on("GET", "/services/svc-1", R::response(200, service_json("svc-1", "orders", "CONFIGURING")));
  h.fake.on("GET", "/services/svc-1",
            R::response(200, service_json("svc-1", "orders", "CONFIGURING",
                                          {{"endpoint", {{"host", "o.db.test"}, {"port", 5432}}}})));
  h.fake.on("GET", "/services/svc-1", R::response(200, service_json("svc-1", "orders", "READY")));
  const auto start = h.clock.now();

  ApplyResult result = h.apply();

  CHECK(result.ready == 1);
  CHECK(result.failures.empty());
  const std::string addr = "p1/services/orders";
  CHECK(h.events.kinds_for(addr) == std::vector<EventKind>{EventKind::CreateSent, EventKind::Created,
                                                           EventKind::StatusChanged, EventKind::StatusChanged,
                                                           EventKind::Ready});
  auto changes = h.events.of(EventKind::StatusChanged, addr);
  CHECK(changes[0].status == "CONFIGURING");
  CHECK(changes[0].elapsed == milliseconds(1000));  // a poll every second in the first minute
  CHECK(changes[1].status == "READY");
  CHECK(changes[1].elapsed == milliseconds(3000));
  auto ready = h.events.of(EventKind::Ready, addr).at(0);
  CHECK(ready.elapsed == milliseconds(3000));
  CHECK(ready.message == "o.db.test:5432");
  CHECK(h.clock.now() - start == milliseconds(3000));
  CHECK(h.fake.count("GET", "/services/svc-1") == 3);
  // The state followed the statuses as they arrived.
  std::vector<std::string> statuses;
  for (const auto& s : h.store.snapshots()) {
    const ResourceRecord* r = s.find(addr);
    std::string st = r ? (r->create_pending ? "intent" : r->status) : "-";
    if (statuses.empty() || statuses.back() != st) statuses.push_back(st);
  }
  CHECK(statuses == std::vector<std::string>{"intent", "QUEUED", "CONFIGURING", "READY"});
  CHECK(h.store.last_record(addr)->endpoint_host == "o.db.test");
}

TEST_CASE("engine: UNSTABLE and unknown statuses keep waiting") {
  Harness h;
  h.service("p1", "orders");
  answer_creates(h);
  for (const char* s : {"UNSTABLE", "SOMETHING_NEW", "OPTIMIZING", "READY"})
    h.fake.on("GET", "/services/svc-any", R::response(200, service_json("svc-any", "orders", s)));
  check_ready_after(h, 4);
}

TEST_CASE("engine: DELETED, PAUSED and 404 fail that service only") {
  Harness h;
  for (const char* n : {"del", "paused", "gone", "fine"}) h.service("p1", n);
  h.fake.set_handler([](const HttpRequest& r) {
    if (r.method == "POST") return created(r);
    const std::string path = path_of(r);
    // Several are waited for: the project's list answers for them. `gone` is not in it, so it is
    // asked for by id, and that says 404.
    if (path.ends_with("/projects/p1/services"))
      return R::response(200, "[" + service_json("svc-del", "del", "DELETED") + "," +
                                  service_json("svc-paused", "paused", "PAUSED") + "," +
                                  service_json("svc-fine", "fine", "READY") + "]");
    if (path.ends_with("svc-gone")) return R::response(404, R"({"code":"not_found"})");
    return R::response(500, R"({"message":"unexpected call"})");
  });
  ApplyResult result = h.apply();
  CHECK(result.ready == 1);
  CHECK(result.created == 4);
  REQUIRE(result.failures.size() == 3);
  auto failure_of = [&](const std::string& name) {
    for (const auto& f : result.failures)
      if (f.starts_with("p1/services/" + name + ": ")) return f;
    return std::string("(none)");
  };
  CHECK_THAT(failure_of("del"), Catch::Contains("DELETED") && Catch::Contains("state rm"));
  // Not declared paused: PAUSED fails its watch, naming the field that would make it expected.
  CHECK_THAT(failure_of("paused"), Catch::Contains("PAUSED") && Catch::Contains("paused: true"));
  CHECK_THAT(failure_of("gone"), Catch::Contains("404") && Catch::Contains("svc-gone"));
  CHECK(h.events.of(EventKind::Failed).size() == 3);
  CHECK(h.events.of(EventKind::Ready, "p1/services/fine").size() == 1);
  // Each was created: its id stays recorded so it is never created twice.
  CHECK(h.store.last_record("p1/services/del")->id == "svc-del");
  // One list answered for del, paused and fine; gone, absent from it, was asked for by id. A failed
  // service is not polled again.
  CHECK(h.fake.count("GET", "/projects/p1/services") == 1 + 1);  // the name guard's, and one round
  CHECK(h.fake.count("GET", "/services/svc-gone") == 1);
}

TEST_CASE("engine: 5xx and connection errors during a watch are retried") {
  Harness h;  // the client tries each read twice
  h.service("p1", "orders");
  answer_creates(h);
  h.fake.on("GET", "/services/svc-any", R::response(503, "", {{"retry-after", "2"}}));
  h.fake.fail("GET", "/services/svc-any", /*may_have_reached_server=*/true);  // the first poll gives up here
  h.fake.on("GET", "/services/svc-any", R::response(502, "<html>bad gateway</html>"));
  h.fake.on("GET", "/services/svc-any", R::response(200, service_json("svc-any", "orders", "READY")));
  check_ready_after(h, 4);
}

TEST_CASE("engine: a service not READY within the wait timeout fails naming its last status") {
  Harness h;
  h.options.wait_timeout = std::chrono::minutes(1);
  h.service("p1", "slow");
  h.service("p1", "quick");
  h.fake.set_handler([](const HttpRequest& r) {
    if (r.method == "POST") return created(r);
    if (path_of(r).ends_with("svc-quick")) return R::response(200, service_json("svc-quick", "quick", "READY"));
    return R::response(200, service_json("svc-slow", "slow", "CONFIGURING"));
  });
  const auto start = h.clock.now();
  ApplyResult result = h.apply();
  REQUIRE(result.failures.size() == 1);
  CHECK_THAT(result.failures[0], Catch::StartsWith("p1/services/slow: ") && Catch::Contains("last status CONFIGURING") &&
                                     Catch::Contains("not READY after"));
  CHECK(result.ready == 1);
  const auto waited = h.clock.now() - start;
  CHECK(waited >= std::chrono::minutes(1));
  CHECK(waited < std::chrono::seconds(61));
  const size_t polls = h.fake.count("GET", "/services/svc-slow");
  CHECK(polls >= 55);  // once a second in the first minute of a wait
  CHECK(polls <= 61);
  CHECK(h.store.last_record("p1/services/slow")->id == "svc-slow");
}

TEST_CASE("engine: a wait action polls a recorded service and never creates it") {
  Harness h;
  ResourceRecord& rec = h.made("p1", "orders", "svc-7", "CONFIGURING");
  rec.initial_password = "pw-from-create";
  h.fake.on("GET", "/services/svc-7",
            R::response(200, service_json("svc-7", "orders", "CONFIGURING", {{"initial_password", ""}})));
  h.fake.on("GET", "/services/svc-7", R::response(200, service_json("svc-7", "orders", "READY")));

  SECTION("waiting") {
    ApplyResult result = h.apply();
    REQUIRE(h.plan.actions.at(0).action == Action::Wait);
    CHECK(h.fake.count("POST", "") == 0);
    CHECK(result.created == 0);
    CHECK(result.ready == 1);
    CHECK(h.state.find("p1/services/orders")->initial_password == "pw-from-create");
    CHECK(h.store.last_record("p1/services/orders")->initial_password == "pw-from-create");
    CHECK(h.store.last_record("p1/services/orders")->status == "READY");
  }
  SECTION("--no-wait leaves it alone") {
    h.options.wait = false;
    ApplyResult result = h.apply();
    CHECK(h.fake.requests().empty());
    CHECK(result.failures.empty());
    CHECK(result.ready == 0);
  }
}

TEST_CASE("engine: polls go on while a slow create is in flight") {
  Harness h;
  h.options.polls.interval = milliseconds(50);
  h.service("p1", "fast");
  h.service("p1", "slow");
  std::mutex mu;
  std::condition_variable cv;
  bool fast_polled = false, slow_saw_poll = false;
  h.fake.set_handler([&](const HttpRequest& r) {
    if (r.method == "POST") {
      if (json::parse(r.body).at("name") == "slow") {
        std::unique_lock<std::mutex> lock(mu);
        slow_saw_poll = cv.wait_for(lock, std::chrono::seconds(5), [&] { return fast_polled; });
      }
      return created(r);
    }
    if (path_of(r).ends_with("svc-fast")) {
      std::lock_guard<std::mutex> lock(mu);
      fast_polled = true;
      cv.notify_all();
    }
    const std::string id = path_of(r).substr(path_of(r).rfind('/') + 1);
    return R::response(200, service_json(id, id.substr(4), "READY"));
  });
  ApplyResult result = h.apply();
  CHECK(slow_saw_poll);
  CHECK(result.ready == 2);
}

TEST_CASE("engine: the main loop does not spin while every worker is busy") {
  Harness h;
  h.options.parallelism = 1;
  h.service("p1", "waiting");
  h.service("p1", "new");
  h.recorded("p1", "waiting", "svc-waiting", "QUEUED");  // its first poll is due at once
  long reads_during_create = -1;
  h.fake.set_handler([&](const HttpRequest& r) {
    if (r.method == "POST") {
      // Hold the only worker for a moment, as a slow API would, and see what the engine does.
      const long before = h.clock.reads.load();
      std::mutex mu;
      std::unique_lock<std::mutex> lock(mu);
      std::condition_variable().wait_for(lock, milliseconds(100));
      reads_during_create = h.clock.reads.load() - before;
      return created(r, "READY");
    }
    return R::response(200, service_json("svc-waiting", "waiting", "READY"));
  });
  ApplyResult result = h.apply();
  CHECK(result.ready == 2);
  CHECK(reads_during_create >= 0);
  CHECK(reads_during_create < 50);
}

TEST_CASE("engine: where several services of a project are waited for, one list a round answers for all") {
  Harness h;
  h.options.wait_timeout = std::chrono::minutes(1);
  const int count = 40;
  for (int i = 0; i < count; ++i) h.service("p1", "s" + std::to_string(i));
  std::atomic<int> rounds{0};
  h.fake.set_handler([&](const HttpRequest& r) {
    if (r.method == "POST") return created(r);
    if (!path_of(r).ends_with("/projects/p1/services")) return R::response(500, R"({"message":"a GET by id"})");
    // The first round sees every one CONFIGURING, the second READY.
    const std::string status = ++rounds == 1 ? "CONFIGURING" : "READY";
    json list = json::array();
    for (int i = 0; i < count; ++i)
      list.push_back(json::parse(service_json("svc-s" + std::to_string(i), "s" + std::to_string(i), status)));
    return R::response(200, list.dump());
  });
  ApplyResult result = h.apply();
  CHECK(result.ready == count);
  CHECK(result.failures.empty());
  CHECK(h.fake.count("GET", "/projects/p1/services") <= 4);  // not one call per service and round
  CHECK(h.fake.count("GET", "/services/svc-s0") == 0);
}

TEST_CASE("engine: a service the list does not show yet (lists lag) is asked for by id, then found") {
  Harness h;
  for (const char* n : {"a", "b", "late"}) h.service("p1", n);
  int lists = 0;
  h.fake.set_handler([&](const HttpRequest& r) {
    if (r.method == "POST") return created(r);
    const std::string path = path_of(r);
    if (path.ends_with("/projects/p1/services")) {
      ++lists;
      return R::response(200, "[" + service_json("svc-a", "a", "READY") + "," + service_json("svc-b", "b", "READY") +
                                  "]");
    }
    if (path.ends_with("/services/svc-late")) return R::response(200, service_json("svc-late", "late", "READY"));
    return R::response(500, R"({"message":"unexpected call"})");
  });
  ApplyResult result = h.apply();
  CHECK(result.ready == 3);
  CHECK(result.failures.empty());
  CHECK(lists == 1);
  CHECK(h.fake.count("GET", "/services/svc-late") == 1);
}

TEST_CASE("engine: polls have their own lane: creates holding every create worker do not hold them up") {
  Harness h;
  h.options.parallelism = 1;
  h.service("p1", "waiting");
  h.service("p1", "slow");
  h.recorded("p1", "waiting", "svc-waiting", "QUEUED");
  std::mutex mu;
  std::condition_variable cv;
  bool polled = false, create_saw_poll = false;
  h.fake.set_handler([&](const HttpRequest& r) {
    if (r.method == "POST") {
      std::unique_lock<std::mutex> lock(mu);
      create_saw_poll = cv.wait_for(lock, std::chrono::seconds(5), [&] { return polled; });
      return created(r, "READY");
    }
    {
      std::lock_guard<std::mutex> lock(mu);
      polled = true;
      cv.notify_all();
    }
    return R::response(200, service_json("svc-waiting", "waiting", "READY"));
  });
  ApplyResult result = h.apply();
  CHECK(create_saw_poll);  // the only create worker was busy, and the poll went all the same
  CHECK(result.ready == 2);
}

TEST_CASE("engine: with many projects watched, a quiet project is listed less often, and READY is still seen") {
  Harness h;
  h.options.wait_timeout = std::chrono::minutes(10);
  // 100 projects allow up to 4 intervals between a quiet project's rounds; 10 allow none. Three
  // services a project: each round is one list of it.
  const int projects = GENERATE(10, 100);
  const auto name = [](const std::string& project, int n) { return "db" + project.substr(1) + "-" + std::to_string(n); };
  for (int p = 0; p < projects; ++p)
    for (int n = 0; n < 3; ++n) h.service("p" + std::to_string(p), name("p" + std::to_string(p), n));
  const Clock::TimePoint start = h.clock.now();
  const Duration ready_after = std::chrono::milliseconds(30'500);  // between two rounds of the old back-off (2 s, then every 4 s)
  std::mutex mu;
  std::map<std::string, int> lists;  // project -> status lists (the name guard's are scripted apart)
  h.fake.set_handler([&](const HttpRequest& r) {
    if (r.method == "POST") return created(r);
    const std::string path = path_of(r);
    const size_t at = path.find("/projects/");
    if (at == std::string::npos || !path.ends_with("/services")) return R::response(500, R"({"message":"unexpected"})");
    const std::string project = path.substr(at + 10, path.rfind('/') - at - 10);
    {
      std::lock_guard<std::mutex> lock(mu);
      ++lists[project];
    }
    const std::string status = h.clock.now() - start >= ready_after ? "READY" : "CONFIGURING";
    json list = json::array();
    for (int n = 0; n < 3; ++n)
      list.push_back(json::parse(service_json("svc-" + name(project, n), name(project, n), status, {{"project_id", project}})));
    return R::response(200, list.dump());
  });
  ApplyResult result = h.apply();
  CHECK(result.ready == 3 * projects);
  CHECK(result.failures.empty());
  REQUIRE(lists.size() == static_cast<size_t>(projects));
  std::vector<int> counts;
  for (const auto& [project, n] : lists) counts.push_back(n);
  std::sort(counts.rbegin(), counts.rend());
  // One interval (1 s) apart for 30 s with few projects. With many, one project (the probe) is
  // listed every quarter interval until it shows READY; the others' first round comes after 8 s,
  // then one every 4 s, and one when the probe's READY says theirs are: 7 or 8 rounds.
  if (projects == 10) CHECK(counts.back() >= 30);
  else {
    CHECK(counts[0] <= 4 * ready_after / h.options.polls.interval + 2);
    CHECK(counts[1] <= 8);
  }
  // However long the pause, READY is seen within one of it; with many projects, within the
  // probe's quarter interval (the forecast adds nothing: it counts from the last create's answer).
  const Duration interval = h.options.polls.interval;
  if (projects == 10) CHECK(h.clock.now() - start <= ready_after + interval + std::chrono::seconds(1));
  else CHECK(h.clock.now() - start <= ready_after + interval / 4 + std::chrono::milliseconds(100));
}

TEST_CASE("engine: the forecast: projects are looked at when the fastest create seen says they are due") {
  ReadyForecast forecast;
  const Clock::TimePoint sent{};
  CHECK_FALSE(forecast.pause(sent, sent, std::nullopt));  // nothing learned: the usual schedule
  CHECK(forecast.ready_after(std::chrono::seconds(40)));
  CHECK(forecast.ready_after(std::chrono::seconds(30)));
  CHECK_FALSE(forecast.ready_after(std::chrono::seconds(35)));  // slower: the fastest stays
  // A project whose last create was answered 10 s after `sent`: due 30 s after that answer.
  const auto at = [&](int s) { return sent + std::chrono::seconds(s); };
  CHECK(forecast.pause(at(10), at(20), at(19)) == std::chrono::seconds(20));
  // Due already when it was learned (this project's last create was answered before the create that
  // taught it was sent) and no check sent since: looked at now; once a check was sent at or after
  // that time, its usual schedule.
  CHECK(forecast.pause(sent, at(31), at(29)) == Duration(0));
  CHECK(forecast.pause(sent, at(31), std::nullopt) == Duration(0));
  CHECK_FALSE(forecast.pause(sent, at(31), at(31)));
}

TEST_CASE("engine: a probe whose service fails ends probing: the others go back to their usual schedule") {
  Harness h;
  h.options.wait_timeout = std::chrono::minutes(10);
  h.options.parallelism = 1;  // creates in the plan's order: p0's is the first, so p0 is the probe
  // One service a project (each polled by id, so no quiet round ever sets its pause): while
  // probing, the other 99 wait 8 s a look (READY at 32.5 s would be seen at 40 s); after, 2 s.
  const int projects = 100;
  for (int p = 0; p < projects; ++p) h.service("p" + std::to_string(p), "db" + std::to_string(p));
  const Clock::TimePoint start = h.clock.now();
  const Duration ready_after = std::chrono::milliseconds(32'500);
  h.fake.set_handler([&](const HttpRequest& r) {
    if (r.method == "POST") return created(r);
    const std::string path = path_of(r);
    const std::string id = path.substr(path.rfind('/') + 1);  // svc-dbN
    const std::string name = id.substr(4);
    const std::string status = name == "db0" ? "DELETED" : h.clock.now() - start >= ready_after ? "READY" : "CONFIGURING";
    return R::response(200, service_json(id, name, status));
  });
  ApplyResult result = h.apply();
  REQUIRE(result.failures.size() == 1);
  CHECK_THAT(result.failures[0], Catch::StartsWith("p0/services/db0: "));
  CHECK(result.ready == projects - 1);
  CHECK(h.clock.now() - start <= ready_after + 2 * h.options.polls.interval + std::chrono::milliseconds(100));
}
