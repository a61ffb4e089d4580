// plan --refresh-only and apply --refresh-only as operations, and how old a state's refresh is: a
// memory store, the fake transport and a fake clock.
#include <catch2/catch.hpp>

#include "ops/test_support.h"
#include "ops/operation.h"
#include "ops/refresh_only.h"
#include "plan/plan_file.h"

using namespace dbform;
using namespace dbform::test;
using nlohmann::json;
using R = FakeTransport;

namespace {

json drift_spec(int cpu, int memory) {
  return {{"resources", json::array({{{"spec", {{"cpu_millis", cpu}, {"memory_gbs", memory}}}}})}};
}

class RefreshLog : public RefreshReporter {
 public:
  void report(const RefreshReport& r) override { reports.push_back(r); }
  std::vector<RefreshReport> reports;
};

// Two services recorded as declared; the API shows `orders` as `orders_now` and `billing` as
// `billing_now` (null: gone).
struct DriftWorld {
  Harness h;
  std::optional<MemoryStateStore> store;
  json orders_now = json::parse(service_json("svc-orders", "orders", "READY", drift_spec(1000, 4)));
  json billing_now = json::parse(service_json("svc-billing", "billing", "READY", drift_spec(1000, 4)));

  DriftWorld() {
    h.made("p1", "orders", "svc-orders", "READY");
    h.made("p1", "billing", "svc-billing", "READY");
    store.emplace(h.state);
    h.fake.always("GET", "/auth/info",
                  R::response(200, json{{"type", "apiKey"},
                                        {"api_key", {{"name", "ci"}, {"project", {{"id", "p1"}, {"name", "Prod"}}}}}}
                                       .dump()));
    h.fake.set_handler([this](const HttpRequest& r) -> HttpResponse {
      const std::string path = path_of(r);
      if (r.method == "GET" && path.ends_with("/projects/p1/services")) {
        json list = json::array({orders_now});
        if (!billing_now.is_null()) list.push_back(billing_now);
        return R::response(200, list.dump());
      }
      if (r.method == "GET" && path.ends_with("/services/svc-billing") && !billing_now.is_null())
        return R::response(200, billing_now.dump());
      if (r.method == "GET" && path.ends_with("/services/svc-orders")) return R::response(200, orders_now.dump());
      if (r.method == "POST" && path.ends_with("/services/svc-orders/resize")) {  // an apply putting drift back
        orders_now = json::parse(service_json("svc-orders", "orders", "READY", drift_spec(1000, 4)));
        return R::response(202, orders_now.dump());
      }
      return R::response(404, R"({"code":"not_found","message":"no such thing"})");
    });
  }

  RefreshOnlyRequest request(std::vector<std::string> targets = {}) {
    return {.manifest = h.manifest,
            .store = *store,
            .api = h.api,
            .clock = h.clock,
            .env = env_with_key(),
            .targets = std::move(targets),
            .parallelism = 4};
  }

  // Every request the API saw was a read.
  bool reads_only() const {
    for (const auto& r : h.fake.requests())
      if (r.method != "GET") return false;
    return true;
  }
};

}  // namespace

TEST_CASE("ops: plan --refresh-only reports what changed outside dbform and writes nothing") {
  DriftWorld w;
  w.orders_now = json::parse(service_json("svc-orders", "orders", "PAUSED", drift_spec(4000, 16)));
  w.billing_now = nullptr;  // deleted in the console

  RefreshOnlyOutcome out = plan_refresh_only(w.request());
  CHECK(out.end == RefreshOnlyOutcome::End::Reported);
  const RefreshReport& r = out.report;
  CHECK(r.projects == std::vector<std::string>{"p1"});
  CHECK(r.records == 2);
  REQUIRE(r.changes.size() == 2);
  CHECK(r.changes[0].address == "p1/services/billing");
  CHECK(r.changes[0].gone);
  const OutsideChange& orders = r.changes[1];
  CHECK(orders.address == "p1/services/orders");
  CHECK_FALSE(orders.gone);
  REQUIRE(orders.fields.size() == 2);
  CHECK(orders.fields[0].field == "cpu_millis");
  CHECK(orders.fields[0].before == "1000");
  CHECK(orders.fields[0].after == "4000");
  CHECK(orders.status_before == "READY");
  CHECK(orders.status_after == "PAUSED");
  CHECK(r.gone() == 1);
  CHECK(w.store->writes() == 0);  // a plan writes nothing
  CHECK(w.reads_only());
  CHECK(w.h.fake.count("GET", "/projects/p1/services") == 1);  // one list for the project's services
}

TEST_CASE("ops: apply --refresh-only records what the refresh read, with its time, and calls nothing else") {
  DriftWorld w;
  w.orders_now = json::parse(service_json("svc-orders", "orders", "READY", drift_spec(2000, 8)));
  RefreshLog reporter;
  int asked = 0;
  const RefreshApplySettings settings{.lock_timeout = Duration(0), .lock_wait = {}, .env = env_with_key()};

  SECTION("not confirmed: nothing is written") {
    auto out = apply_refresh_only(w.request(), settings, reporter, [&] { return ++asked, false; });
    CHECK(out.end == RefreshOnlyOutcome::End::Cancelled);
    CHECK(asked == 1);
    CHECK(w.store->writes() == 0);
  }
  SECTION("confirmed: the observed settings and the stamp are recorded in one write") {
    w.h.clock.advance(std::chrono::hours(5));
    auto out = apply_refresh_only(w.request(), settings, reporter, [&] { return ++asked, true; });
    CHECK(out.end == RefreshOnlyOutcome::End::Recorded);
    CHECK(asked == 1);
    REQUIRE(reporter.reports.size() == 1);
    CHECK(reporter.reports[0].changes.size() == 1);
    REQUIRE(w.store->writes() == 1);
    const State saved = *w.store->read();
    CHECK(saved.find("p1/services/orders")->observed.value("cpu_millis", json()) == "2000");
    CHECK(saved.find("p1/services/orders")->settings.value("cpu_millis", json()) == "1000");  // what dbform set stays
    REQUIRE(saved.refreshed);
    CHECK(saved.refreshed->by == "apply --refresh-only");
    CHECK(saved.refreshed->at == "2026-01-01T06:00:00Z");  // the fake clock's epoch, plus 1h, plus 5h
    CHECK(saved.refreshed->serial == saved.serial);
    CHECK_FALSE(saved.refreshed->unchanged_since);  // records changed
    CHECK(w.reads_only());
  }
  SECTION("auto-approved: recorded without asking") {
    RefreshApplySettings approved = settings;
    approved.auto_approve = true;
    auto out = apply_refresh_only(w.request(), approved, reporter, [&] { return ++asked, false; });
    CHECK(out.end == RefreshOnlyOutcome::End::Recorded);
    CHECK(asked == 0);
    CHECK(w.store->writes() == 1);
  }
}

TEST_CASE("ops: apply --refresh-only that finds nothing records only its time, and a saved plan still holds") {
  DriftWorld w;
  RefreshLog reporter;
  const RefreshApplySettings settings{.lock_timeout = Duration(0), .lock_wait = {}, .env = env_with_key()};
  // The first refresh records what the API shows of records never read (serial 1).
  apply_refresh_only(w.request(), settings, reporter, [] { return true; });
  REQUIRE(w.store->read()->serial == 1);
  CHECK_FALSE(w.store->read()->refreshed->unchanged_since);
  // A plan saved against the state as it is now.
  PlanDocument saved;
  saved.plan = plan_operation({.manifest = w.h.manifest, .store = *w.store, .clock = w.h.clock,
                               .env = env_with_key(), .settings = PlanSettings{}})
                   .plan;
  saved.plan.manifest_digest = w.h.manifest.digest;
  int asked = 0;
  for (int run = 0; run < 2; ++run) {
    auto out = apply_refresh_only(w.request(), settings, reporter, [&] { return ++asked, true; });
    CHECK(out.end == RefreshOnlyOutcome::End::Recorded);
  }
  CHECK(asked == 0);  // nothing changed: nothing to confirm
  CHECK(w.store->writes() == 3);
  const State now = *w.store->read();
  REQUIRE(now.refreshed);
  CHECK(now.refreshed->unchanged_since == 1);  // both writes speak of serial 1's records
  CHECK(now.serial == 3);
  CHECK(saved_plan_problems(saved, w.h.manifest, &now, nullptr).empty());

  // Any other write since (a rename, an apply) makes it stale, as before.
  State edited = now;
  w.store->write(edited);
  const State later = *w.store->read();
  CHECK_FALSE(saved_plan_problems(saved, w.h.manifest, &later, nullptr).empty());
}

TEST_CASE("ops: apply --refresh-only --target reads and records only that record, and no time") {
  DriftWorld w;
  w.orders_now = json::parse(service_json("svc-orders", "orders", "READY", drift_spec(2000, 8)));
  w.billing_now = nullptr;
  RefreshLog reporter;
  RefreshApplySettings settings{.lock_timeout = Duration(0), .lock_wait = {}, .env = env_with_key()};
  settings.auto_approve = true;
  auto out = apply_refresh_only(w.request({"orders"}), settings, reporter, [] { return true; });
  REQUIRE(out.report.changes.size() == 1);
  CHECK(out.report.changes[0].address == "p1/services/orders");
  const State saved = *w.store->read();
  CHECK_FALSE(saved.find("p1/services/billing")->deleted_outside);  // not targeted: as recorded
  CHECK_FALSE(saved.refreshed);

  CHECK_THROWS_WITH(plan_refresh_only(w.request({"ordres"})),
                    Catch::Contains("--target `ordres`") && Catch::Contains("did you mean", Catch::CaseSensitive::No));
}

TEST_CASE("ops: apply --refresh-only of a state holding a create whose outcome is unknown records what it read, "
          "and no time") {
  DriftWorld w;
  ResourceRecord pending;  // an apply killed after its intent: no id, not read by a refresh
  pending.project_id = "p1";
  pending.name = "search";
  pending.address = resource_address("p1", ResourceKind::Service, "search");
  pending.create_pending = true;
  w.h.state.upsert(pending);
  w.store.emplace(w.h.state);
  w.orders_now = json::parse(service_json("svc-orders", "orders", "READY", drift_spec(2000, 8)));
  RefreshLog reporter;
  RefreshApplySettings settings{.lock_timeout = Duration(0), .lock_wait = {}, .env = env_with_key()};
  settings.auto_approve = true;
  auto out = apply_refresh_only(w.request(), settings, reporter, [] { return true; });
  CHECK(out.end == RefreshOnlyOutcome::End::Recorded);
  const State saved = *w.store->read();
  CHECK(saved.find("p1/services/orders")->observed.dump().find("2000") != std::string::npos);
  CHECK_FALSE(saved.refreshed);
  CHECK(w.reads_only());
}

TEST_CASE("ops: a plan from the state alone says how long ago the state was refreshed, by what") {
  DriftWorld w;
  const PlanRequest from_state{.manifest = w.h.manifest, .store = *w.store, .clock = w.h.clock,
                               .env = [](const std::string&) { return std::optional<std::string>(); },
                               .settings = PlanSettings{}};
  PlanOutcome never = plan_operation(from_state);
  REQUIRE(never.plan.freshness);
  CHECK_FALSE(never.plan.freshness->refreshed);

  RefreshLog reporter;
  apply_refresh_only(w.request(), {.lock_timeout = Duration(0), .lock_wait = {}, .env = env_with_key()}, reporter,
                     [] { return true; });
  w.h.clock.advance(std::chrono::hours(3) + std::chrono::minutes(12));
  PlanOutcome later = plan_operation(from_state);
  REQUIRE(later.plan.freshness);
  REQUIRE(later.plan.freshness->refreshed);
  CHECK(later.plan.freshness->refreshed->by == "apply --refresh-only");
  CHECK(later.plan.freshness->age_seconds == 3 * 3600 + 12 * 60);
  CHECK(w.h.fake.count("GET", "/auth/info") == 1);  // the plans called nothing
}

TEST_CASE("ops: an apply whose refresh read every project the state records stamps the state") {
  DriftWorld w;
  w.orders_now = json::parse(service_json("svc-orders", "orders", "READY", drift_spec(2000, 8)));  // drift to put back
  PlanSettings refresh;
  refresh.refresh = true;
  ApplyRequest request{.manifest = w.h.manifest, .store = *w.store, .api = w.h.api, .clock = w.h.clock,
                       .env = env_with_key(), .lock_timeout = Duration(0), .lock_wait = {}, .settings = refresh,
                       .saved = nullptr, .saved_from = "", .plan_again = "", .auto_approve = true,
                       .engine = w.h.options};
  class QuietApply : public ApplyReporter {
   public:
    explicit QuietApply(EventSink& e) : e_(e) {}
    void warning(const Diagnostic&) override {}
    void no_state(const StateStore&) override {}
    void plan(const Plan&, const std::string&) override {}
    void conflicts(const Plan&) override {}
    void nothing_to_do() override {}
    void cancelled() override {}
    EventSink& start(const Plan&) override { return e_; }

   private:
    EventSink& e_;
  } quiet(w.h.events);
  apply_operation(request, quiet, [] { return true; });
  const State saved = *w.store->read();
  REQUIRE(saved.refreshed);
  CHECK(saved.refreshed->by == "apply");
}
