// plan and apply as operations of the core, driven without the command line: a memory store, the
// fake transport, a fake clock, and a reporter that records what it was told.
#include <unistd.h>

#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>

#include "ops/test_support.h"
#include "ops/operation.h"
#include "policy/loader.h"

using namespace dbform;
using namespace dbform::test;
using nlohmann::json;
using R = FakeTransport;

namespace {

// Records what the operation reported, and hands the engine's events to the harness's log.
class Reporter : public ApplyReporter {
 public:
  explicit Reporter(EventSink& events) : events_(events) {}
  void warning(const Diagnostic& w) override { said.push_back("warning: " + w.str()); }
  void no_state(const StateStore&) override { said.push_back("no state"); }
  void plan(const Plan&, const std::string& saved_from) override { said.push_back("plan " + saved_from); }
  void conflicts(const Plan&) override { said.push_back("conflicts"); }
  void nothing_to_do() override { said.push_back("nothing to do"); }
  void cancelled() override { said.push_back("cancelled"); }
  EventSink& start(const Plan&) override {
    said.push_back("start");
    return events_;
  }
  std::vector<std::string> said;

 private:
  EventSink& events_;
};

// Every project's key from DBFORM_API_KEY; TMPDIR as given.
EnvLookup env_with(const std::string& tmpdir = "") {
  return [tmpdir](const std::string& name) -> std::optional<std::string> {
    if (name == "DBFORM_API_KEY") return "key-p1";
    if (name == "TMPDIR" && !tmpdir.empty()) return tmpdir;
    return std::nullopt;
  };
}

// The API of a project that has nothing yet: its key is p1's, its lists are empty, creates answer
// READY at once.
void empty_project(Harness& h) {
  h.fake.always("GET", "/auth/info",
                R::response(200, json{{"type", "apiKey"},
                                      {"api_key", {{"name", "ci"}, {"project", {{"id", "p1"}, {"name", "Prod"}}}}}}
                                     .dump()));
  h.fake.always("GET", "/projects/p1/services", R::response(200, "[]"));
  h.fake.always("GET", "/projects/p1/vpcs", R::response(200, "[]"));
  h.fake.set_handler([](const HttpRequest& r) -> HttpResponse {
    if (r.method == "POST" && path_of(r).ends_with("/projects/p1/services")) {
      const std::string name = json::parse(r.body).at("name");
      return R::response(202, service_json("svc-" + name, name, "READY"));
    }
    return R::response(404, R"({"code":"not_found","message":"not scripted"})");
  });
}

// `orders` of p1 declared, in a project that has nothing yet (empty_project).
void orders_in_empty_project(Harness& h) {
  h.service("p1", "orders");
  empty_project(h);
}

PlanSettings from_state_alone() {
  PlanSettings s;
  s.refresh = false;
  return s;
}

ApplyRequest request_of(Harness& h, StateStore& store, const PlanSettings& settings, const EnvLookup& env) {
  return {.manifest = h.manifest,
          .store = store,
          .api = h.api,
          .clock = h.clock,
          .env = env,
          .lock_timeout = Duration(0),
          .settings = settings,
          .saved = nullptr,
          .saved_from = "",
          .plan_again = "",
          .auto_approve = false,
          .engine = h.options};
}

PlanDocument saved_plan(Harness& h, StateStore& store, const PlanSettings& settings) {
  PlanDocument doc;
  doc.plan = plan_operation({.manifest = h.manifest,
                             .store = store,
                             .api = &h.api,
                             .clock = h.clock,
                             .env = env_with(),
                             .settings = settings,
                             .parallelism = 4})
                 .plan;
  return doc;
}

}  // namespace

TEST_CASE("ops: a plan made now is shown, asked for, and applied only when approved") {
  Harness h;
  orders_in_empty_project(h);
  Reporter reporter(h.events);
  ApplyRequest request = request_of(h, h.store, from_state_alone(), env_with());

  SECTION("refused: nothing is sent, nothing is written") {
    ApplyOutcome done = apply_operation(request, reporter, [] { return false; });
    CHECK(done.end == ApplyOutcome::End::Cancelled);
    CHECK(reporter.said == std::vector<std::string>{"no state", "plan ", "cancelled"});
    CHECK(h.fake.count("POST", "/services") == 0);
    CHECK(h.store.writes() == 0);
  }
  SECTION("approved: created and recorded") {
    int asked = 0;
    ApplyOutcome done = apply_operation(request, reporter, [&] { return ++asked > 0; });
    CHECK(asked == 1);
    CHECK(done.end == ApplyOutcome::End::Applied);
    CHECK(done.result.created == 1);
    CHECK(h.fake.count("POST", "/services") == 1);
    REQUIRE(h.store.read());
    CHECK(h.store.read()->find("p1/services/orders")->id == "svc-orders");
  }
  SECTION("auto-approved: never asked") {
    request.auto_approve = true;
    ApplyOutcome done = apply_operation(request, reporter, [] { return false; });
    CHECK(done.end == ApplyOutcome::End::Applied);
    CHECK(done.result.created == 1);
  }
}

TEST_CASE("ops: a saved plan is applied as saved without asking, and refused once the state moved") {
  Harness h;
  orders_in_empty_project(h);
  PlanDocument saved = saved_plan(h, h.store, from_state_alone());
  Reporter reporter(h.events);
  ApplyRequest request = request_of(h, h.store, from_state_alone(), env_with());
  request.saved = &saved;
  request.saved_from = "tfplan";
  request.plan_again = "dbform plan --out tfplan";

  SECTION("as saved") {
    ApplyOutcome done = apply_operation(request, reporter, [] {
      FAIL("a saved plan was reviewed when it was made: nobody is asked");
      return false;
    });
    CHECK(done.end == ApplyOutcome::End::Applied);
    CHECK(std::find(reporter.said.begin(), reporter.said.end(), "plan tfplan") != reporter.said.end());
    CHECK(h.fake.count("POST", "/services") == 1);
  }
  SECTION("stale: another run wrote the state since") {
    State moved = new_state();
    h.store.write(moved);
    const std::string msg = message_of([&] { apply_operation(request, reporter, [] { return true; }); });
    CHECK_THAT(msg, Catch::Contains("the saved plan tfplan is stale") &&
                        Catch::Contains("a state was created after the plan was made") &&
                        Catch::Contains("dbform plan --out tfplan"));
    CHECK(h.fake.count("POST", "/services") == 0);
  }
  SECTION("stale: the manifests changed since") {
    h.service("p1", "billing");
    h.manifest.digest = "another digest";
    const std::string msg = message_of([&] { apply_operation(request, reporter, [] { return true; }); });
    CHECK_THAT(msg, Catch::Contains("the manifests have changed since the plan was made"));
    CHECK(h.fake.count("POST", "/services") == 0);
  }
}

TEST_CASE("ops: --target plans and applies only the named resource and what it needs") {
  Harness h;
  h.vpc("p1", "main");
  h.service("p1", "orders").vpc = "main";
  h.service("p1", "billing");
  empty_project(h);
  PlanSettings settings = from_state_alone();
  settings.targets = {"orders"};
  const Plan plan = plan_operation({.manifest = h.manifest,
                                    .store = h.store,
                                    .api = nullptr,
                                    .clock = h.clock,
                                    .env = env_with(),
                                    .settings = settings,
                                    .parallelism = 4})
                        .plan;
  std::vector<std::string> planned;
  for (const auto& a : plan.actions) planned.push_back(a.address);
  CHECK(planned == std::vector<std::string>{"p1/vpcs/main", "p1/services/orders"});
  CHECK(plan.targets == std::vector<std::string>{"p1/services/orders"});
  CHECK_THAT(message_of([&] {
               settings.targets = {"nothing-of-that-name"};
               plan_operation({.manifest = h.manifest,
                               .store = h.store,
                               .api = nullptr,
                               .clock = h.clock,
                               .env = env_with(),
                               .settings = settings,
                               .parallelism = 4});
             }),
             Catch::Contains("nothing-of-that-name"));
}

TEST_CASE("ops: --max-deletes: more deletes than the limit delete nothing") {
  Harness h;
  h.made("p1", "a", "svc-a", "READY");
  h.made("p1", "b", "svc-b", "READY");
  h.manifest.projects.front().services.clear();  // both orphans
  MemoryStateStore store(h.state);
  empty_project(h);
  PlanSettings settings = from_state_alone();
  settings.prune = true;
  settings.max_deletes = 1;
  Reporter reporter(h.events);
  ApplyRequest request = request_of(h, store, settings, env_with());
  request.auto_approve = true;
  ApplyOutcome done = apply_operation(request, reporter, [] { return true; });
  CHECK(done.end == ApplyOutcome::End::Conflicts);
  CHECK(done.plan.summary.conflict == 2);
  CHECK(done.plan.actions.front().reason.find("more than --max-deletes 1") != std::string::npos);
  CHECK(h.fake.count("DELETE", "/services/svc-a") + h.fake.count("DELETE", "/services/svc-b") == 0);
  CHECK(store.writes() == 0);
  SECTION("and a saved plan edited to delete more than its limit is refused before anything is read") {
    PlanDocument saved;
    saved.plan = done.plan;
    for (auto& a : saved.plan.actions) a.action = Action::Delete;
    CHECK_THAT(message_of([&] { refuse_conflicting_plan(saved, "tfplan", "dbform plan --prune --out tfplan"); }),
               Catch::Contains("tfplan has 2 conflict(s)") && Catch::Contains("dbform plan --prune --out tfplan"));
  }
}

TEST_CASE("ops: a held lock refuses the apply before anything is read or sent") {
  Harness h;
  orders_in_empty_project(h);
  LockedStore store;
  Reporter reporter(h.events);
  ApplyRequest request = request_of(h, store, from_state_alone(), env_with());
  request.auto_approve = true;
  CHECK_THAT(message_of([&] { apply_operation(request, reporter, [] { return true; }); }),
             Catch::Contains("locked by another apply"));
  CHECK(reporter.said.empty());
  CHECK(h.fake.requests().empty());
  SECTION("while a plan reads the state without the lock") {
    CHECK(plan_operation({.manifest = h.manifest,
                          .store = store,
                          .api = nullptr,
                          .clock = h.clock,
                          .env = env_with(),
                          .settings = from_state_alone(),
                          .parallelism = 4})
              .plan.summary.create == 1);
  }
}

TEST_CASE("ops: a state that cannot be saved after a create ends the apply naming the recovery file") {
  Harness h;
  orders_in_empty_project(h);
  h.fake.set_handler([&](const HttpRequest& r) -> HttpResponse {
    if (r.method == "POST") {
      h.store.fail_writes();  // the disk fills while the create is on its way
      return R::response(202, service_json("svc-orders", "orders", "READY"));
    }
    return R::response(404, R"({"code":"not_found","message":"not scripted"})");
  });
  const std::filesystem::path dir = std::filesystem::temp_directory_path() / ("dbform-ops-test-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  Reporter reporter(h.events);
  ApplyRequest request = request_of(h, h.store, from_state_alone(), env_with(dir.string()));
  request.auto_approve = true;
  const std::string msg = message_of([&] { apply_operation(request, reporter, [] { return true; }); });
  CHECK_THAT(msg, Catch::Contains("the state could not be saved to memory") &&
                      Catch::Contains(dir.string() + "/dbform.state.recovery-") &&
                      Catch::Contains("dbform state push"));
  bool holds_the_id = false;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    std::ifstream in(entry.path());
    const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    holds_the_id = holds_the_id || text.find("svc-orders") != std::string::npos;
  }
  CHECK(holds_the_id);
  std::filesystem::remove_all(dir);
}

TEST_CASE("ops: a refreshing plan reads the state again when the lists show a declared name it does not record - an apply's own create is no conflict") {
  Harness h;
  h.service("p1", "orders");
  h.fake.always("GET", "/auth/info",
                R::response(200, json{{"type", "apiKey"},
                                      {"api_key", {{"name", "ci"}, {"project", {{"id", "p1"}, {"name", "Prod"}}}}}}
                                     .dump()));
  h.fake.always("GET", "/projects/p1/vpcs", R::response(200, "[]"));
  bool applied = true;  // whether an apply journaled `orders` before its create (false: another state's)
  int lists = 0;
  h.fake.set_handler([&](const HttpRequest& r) -> HttpResponse {
    if (r.method == "GET" && path_of(r).ends_with("/projects/p1/services")) {
      // Between the plan's read of the state and this list, an apply journaled orders and created it.
      if (++lists == 1 && applied) {
        State journaled = new_state();
        journaled.upsert(ready_orders());
        h.store.write(journaled);
      }
      return R::response(200, "[" + service_json("svc-orders", "orders", "READY") + "]");
    }
    return R::response(404, R"({"code":"not_found","message":"not scripted"})");
  });
  PlanSettings settings;
  settings.refresh = true;
  auto plan = [&] {
    return plan_operation({.manifest = h.manifest, .store = h.store, .api = &h.api, .clock = h.clock,
                           .env = env_with(), .settings = settings, .parallelism = 4});
  };
  SECTION("the apply's create: recorded by the state read after the list") {
    const PlanOutcome out = plan();
    CHECK(!out.state_missing);
    CHECK(out.plan.summary.conflict == 0);
    REQUIRE(out.plan.actions.size() == 1);
    CHECK(out.plan.actions[0].action != Action::Create);
    CHECK(out.plan.actions[0].resource_id == "svc-orders");
    CHECK(h.store.writes() == 1);  // the apply's: the plan wrote nothing
  }
  SECTION("a namesake no state here records: still a conflict after the second read") {
    applied = false;
    const PlanOutcome out = plan();
    CHECK(out.state_missing);
    CHECK(out.plan.summary.conflict == 1);
    CHECK(h.store.writes() == 0);
  }
}

TEST_CASE("ops: the policies are checked by the operation: a mandatory violation stops apply before any call") {
  Harness h;
  h.service("p1", "orders").environment_tag = "PROD";
  empty_project(h);
  Diagnostics diags;
  const PolicySet rules = load_policy_text("base.yaml",
                                           "version: 1\nrules:\n  - id: prod-protected\n    level: mandatory\n"
                                           "    kind: service\n    where: {environment_tag: PROD}\n"
                                           "    require: {deletion_protection: true}\n",
                                           diags);
  REQUIRE(!diags.has_errors());
  Reporter reporter(h.events);

  PlanOutcome planned = plan_operation({.manifest = h.manifest, .store = h.store, .api = nullptr, .clock = h.clock,
                                        .env = env_with(), .settings = from_state_alone(), .policies = &rules});
  REQUIRE(planned.plan.policy.violations.size() == 1);
  CHECK(planned.plan.summary.has_conflicts());

  ApplyRequest request = request_of(h, h.store, from_state_alone(), env_with());
  request.policies = &rules;
  request.auto_approve = true;
  ApplyOutcome done = apply_operation(request, reporter, [] { return true; });
  CHECK(done.end == ApplyOutcome::End::Conflicts);
  CHECK(reporter.said == std::vector<std::string>{"no state", "plan ", "conflicts"});
  CHECK(h.fake.requests().empty());
  CHECK(h.store.writes() == 0);

  // Planned without rules and saved, then applied under some: stale, nothing sent.
  PlanDocument saved = saved_plan(h, h.store, from_state_alone());
  request.saved = &saved;
  request.saved_from = "tfplan";
  request.plan_again = "dbform plan --out tfplan";
  CHECK_THAT(message_of([&] { apply_operation(request, reporter, [] { return true; }); }),
             Catch::Contains("the plan was checked against no policy, and this apply is given base.yaml"));
  CHECK(h.fake.requests().empty());
}

TEST_CASE("ops: an apply whose plan records a password needs the key of a sealed state, and warns on a clear one") {
  Harness h;
  orders_in_empty_project(h);
  Reporter reporter(h.events);
  ApplyRequest request = request_of(h, h.store, from_state_alone(), env_with());
  request.auto_approve = true;
  auto warned = [&] {
    return std::any_of(reporter.said.begin(), reporter.said.end(), [](const std::string& s) {
      return s.find("kept in clear") != std::string::npos &&
             s.find("DBFORM_STATE_PASSPHRASE or DBFORM_STATE_KEY_FILE") != std::string::npos;
    });
  };

  SECTION("its passwords sealed, no key: refused before any call or write") {
    State sealed = new_state();
    sealed.secrets_key_id = "0123456789abcdef";
    h.store.write(sealed);
    const auto writes = h.store.writes();
    const std::string msg = message_of([&] { apply_operation(request, reporter, [] { return true; }); });
    CHECK_THAT(msg, Catch::Contains("this apply needs the state's key (its plan records a new password") &&
                        Catch::Contains("DBFORM_STATE_PASSPHRASE or DBFORM_STATE_KEY_FILE") &&
                        Catch::Contains("key id 0123456789abcdef"));
    CHECK(h.fake.count("POST", "/services") == 0);
    CHECK(h.store.writes() == writes);
    CHECK_FALSE(warned());
  }
  SECTION("in clear, no key: applied, with a warning naming both variables") {
    ApplyOutcome done = apply_operation(request, reporter, [] { return true; });
    CHECK(done.result.created == 1);
    CHECK(warned());
  }
}
