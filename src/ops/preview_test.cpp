// preview down | up | sweep as operations of the core, and the helper they run in, driven without
// the command line: a memory store, the fake transport, a fake clock and a recording reporter.
#include <catch2/catch.hpp>
#include <unistd.h>

#include <filesystem>

#include "ops/test_support.h"
#include "ops/preview.h"
#include "state/previews.h"

using namespace dbform;
using namespace dbform::test;
using nlohmann::json;
using R = FakeTransport;

namespace {

class PreviewProgress : public PreviewReporter {
 public:
  void advisory(const PolicyViolation& v) override { said.push_back("advisory " + v.rule); }
  EventSink& events() override { return log; }
  void failed(const std::string& what) override { said.push_back("failed " + what); }
  void applying(const std::string&, const std::string& fork, const MigrationFile&) override {
    said.push_back("applying " + fork);
  }
  EventLog log;
  std::vector<std::string> said;
};

// Counts the folds the helper asks for.
class FoldingStore : public MemoryStateStore {
 public:
  using MemoryStateStore::MemoryStateStore;
  void compact(State&) override { ++folds; }
  int folds = 0;
};

const std::string kFork = preview_address("p1", "pr-7", "orders");

// The source `orders` READY, and preview pr-7's fork of it, whose create's outcome is unknown: its
// intent recorded at 12:00, no id.
State with_unknown_fork() {
  State s = new_state();
  s.upsert(ready_orders());
  ResourceRecord fork;
  fork.address = kFork;
  fork.project_id = "p1";
  fork.name = preview_fork_name("pr-7", "orders");
  fork.create_pending = true;
  fork.created_at = fork.updated_at = "2026-01-01T12:00:00Z";
  fork.settings = {{"fork", {{"from", "orders"}, {"strategy", "NOW"}}},
                   {"environment_tag", "DEV"},
                   {kPreviewKey, {{"name", "pr-7"}, {"service", "orders"}, {"expires_at", "2026-01-04T12:00:00Z"}}}};
  s.upsert(fork);
  return s;
}

void key_of_p1(Harness& h) {
  h.fake.always("GET", "/auth/info",
                R::response(200, json{{"type", "apiKey"},
                                      {"api_key", {{"name", "ci"}, {"project", {{"id", "p1"}, {"name", "Prod"}}}}}}
                                     .dump()));
}

PreviewContext context_of(Harness& h, StateStore& store, const char* operation) {
  ApplyOptions engine;
  engine.settle_window = std::chrono::seconds(2);
  return {StateAccess{store, operation, Duration(0), {}, env_with_key()}, [&h]() -> ApiClient& { return h.api; },
          h.clock, engine};
}

}  // namespace

TEST_CASE("ops: preview down settles a fork of unknown outcome in the engine's run - found and provably the fork: saved with the delete's journal, in one write, before the delete is sent") {
  Harness h;
  MemoryStateStore store(with_unknown_fork());
  key_of_p1(h);
  bool deleted = false;
  size_t writes_before_delete = 0;
  std::optional<ResourceRecord> recorded_before_delete;
  h.fake.set_handler([&](const HttpRequest& r) -> HttpResponse {
    const std::string path = path_of(r);
    if (r.method == "GET" && path.ends_with("/projects/p1/services")) {
      if (deleted) return R::response(200, "[]");
      return R::response(200, "[" + service_json("svc-fork", "orders-pr-7", "READY",
                                                 {{"forked_from", {{"service_id", "svc-orders"}}},
                                                  {"created", "2026-01-01T12:00:05Z"}}) + "]");
    }
    if (r.method == "DELETE" && path.ends_with("/services/svc-fork")) {
      deleted = true;
      writes_before_delete = store.writes();
      recorded_before_delete = store.last_record(kFork);
      return R::response(202, "{}");
    }
    if (r.method == "GET" && path.ends_with("/services/svc-fork")) {
      if (deleted) return R::response(404, R"({"code":"not_found"})");
      return R::response(200, service_json("svc-fork", "orders-pr-7", "READY"));
    }
    return R::response(404, R"({"code":"not_found","message":"not scripted"})");
  });
  PreviewProgress progress;
  const Manifest none;
  const PreviewDownOutcome out = preview_down_operation({context_of(h, store, "preview down"), none, "", "pr-7"}, progress);
  CHECK(out.recorded);
  CHECK(out.result.failures.empty());
  CHECK(out.result.deleted == 1);
  REQUIRE(recorded_before_delete);
  CHECK(recorded_before_delete->id == "svc-fork");  // adopted as found before its delete went out
  CHECK_FALSE(recorded_before_delete->create_pending);
  CHECK(writes_before_delete == 1);  // the settling and the delete's journal: one write, the run's
  CHECK_FALSE(store.read()->find(kFork));
}

TEST_CASE("ops: preview down forgets a fork that no lookup of the settle window found - saved by the run, nothing deleted") {
  Harness h;
  MemoryStateStore store(with_unknown_fork());
  key_of_p1(h);
  h.fake.always("GET", "/projects/p1/services", R::response(200, "[]"));
  PreviewProgress progress;
  const Manifest none;
  const PreviewDownOutcome out = preview_down_operation({context_of(h, store, "preview down"), none, "", "pr-7"}, progress);
  CHECK(out.result.forgotten == 1);
  CHECK(out.result.deleted == 0);
  CHECK(store.writes() == 1);
  CHECK_FALSE(store.read()->find(kFork));
  for (const auto& r : h.fake.requests()) CHECK(r.method == "GET");
}

TEST_CASE("ops: preview down refuses a namesake that is not provably the fork - the record stays, nothing is written or deleted") {
  Harness h;
  MemoryStateStore store(with_unknown_fork());
  key_of_p1(h);
  h.fake.always("GET", "/projects/p1/services",
                R::response(200, "[" + service_json("svc-other", "orders-pr-7", "READY",
                                                    {{"forked_from", {{"service_id", "svc-elsewhere"}}}}) + "]"));
  PreviewProgress progress;
  const Manifest none;
  const PreviewDownOutcome out = preview_down_operation({context_of(h, store, "preview down"), none, "", "pr-7"}, progress);
  REQUIRE(out.result.failures.size() == 1);
  CHECK_THAT(out.result.failures[0], Catch::Contains("not provably this preview's fork"));
  CHECK(store.writes() == 0);
  REQUIRE(store.read()->find(kFork));
  CHECK(store.read()->find(kFork)->create_pending);
}

TEST_CASE("ops: preview down of a preview not recorded takes the lock, builds no API and writes nothing") {
  Harness h;
  MemoryStateStore store(with_unknown_fork());
  PreviewProgress progress;
  const Manifest none;
  PreviewContext context = context_of(h, store, "preview down");
  context.api = []() -> ApiClient& { throw Error("the API was built"); };
  const PreviewDownOutcome out = preview_down_operation({context, none, "", "pr-9"}, progress);
  CHECK_FALSE(out.recorded);
  CHECK(store.writes() == 0);
  CHECK(h.fake.requests().empty());
}

TEST_CASE("ops: preview up is refused under a lock held elsewhere before anything is read or sent") {
  Harness h;
  LockedStore store(with_unknown_fork());
  DesiredProject& p = h.project("p1");
  DesiredService orders;
  orders.name = "orders";
  p.services.push_back(orders);
  DesiredPreviews block;
  block.services = {"orders"};
  block.strategy = "NOW";
  block.ttl = "72h";
  block.ttl_ms = 72LL * 3600 * 1000;
  block.max = 3;
  p.previews = block;
  PreviewProgress progress;
  const PolicySet no_rules;
  const auto connector = libpq_connector();
  const std::string msg = message_of([&] {
    preview_up_operation({context_of(h, store, "preview up"), h.manifest, "", "pr-7", false, no_rules, *connector, false},
                         progress);
  });
  CHECK_THAT(msg, Catch::Contains("locked by another preview up"));
  CHECK(h.fake.requests().empty());
  CHECK(store.writes() == 0);
}

TEST_CASE("ops: preview sweep with nothing due calls nothing and lists what it keeps") {
  Harness h;
  State s = with_unknown_fork();
  s.find(kFork)->id = "svc-fork";
  s.find(kFork)->create_pending = false;
  s.find(kFork)->status = "READY";
  MemoryStateStore store(s);
  PreviewProgress progress;
  const Manifest none;
  const PreviewSweepOutcome out =
      preview_sweep_operation({context_of(h, store, "preview sweep"), none, "", {"pr-7"}, 3}, progress);
  CHECK(out.choice.due.empty());
  REQUIRE(out.choice.kept.size() == 1);
  CHECK_THAT(out.choice.kept[0], Catch::Contains("p1/previews/pr-7"));
  CHECK(h.fake.requests().empty());
  CHECK(store.writes() == 0);
}

TEST_CASE("ops: the locked-state helper saves what the body says, folds after, then runs what follows in the lock") {
  FoldingStore store;
  StateAccess access{store, "state rm", Duration(0), {}, env_with_key()};
  std::vector<std::string> order;
  const State saved = with_locked_state(access, [&](State& state) {
    state.upsert(recorded_service("p1", "a", "svc-a", ""));
    Changes c;
    c.save = Changes::Save::Whole;
    c.fold = true;
    c.then = [&](const State& s) { order.push_back("then " + std::to_string(store.folds) + " " + std::to_string(s.serial)); };
    return c;
  });
  CHECK(store.writes() == 1);
  CHECK(store.folds == 1);
  CHECK(order == std::vector<std::string>{"then 1 1"});
  CHECK(saved.find("p1/services/a"));
}

TEST_CASE("ops: the locked-state helper runs no body under a held lock, and names the recovery file when the engine could not save") {
  LockedStore locked;
  bool ran = false;
  CHECK_THAT(message_of([&] {
               with_locked_state({locked, "state rm", Duration(0), {}, env_with_key()}, [&](State&) {
                 ran = true;
                 return Changes{};
               });
             }),
             Catch::Contains("locked by another"));
  CHECK_FALSE(ran);

  MemoryStateStore store;
  const std::filesystem::path dir = std::filesystem::temp_directory_path() / ("dbform-locked-test-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  EnvLookup env = [&](const std::string& name) -> std::optional<std::string> {
    if (name == "TMPDIR") return dir.string();
    return std::nullopt;
  };
  ApplyResult run;
  run.save_error = "disk full";
  run.unsaved_changes = true;
  const std::string msg = message_of([&] {
    with_locked_state({store, "preview up", Duration(0), {}, env}, [&](State&) {
      Changes c;
      c.engine = &run;
      c.fold = true;
      return c;
    });
  });
  CHECK_THAT(msg, Catch::Contains("disk full") && Catch::Contains(dir.string() + "/dbform.state.recovery-"));
  std::filesystem::remove_all(dir);
}
