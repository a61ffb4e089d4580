// What `preview sweep` chooses and what `preview up` plans (plan/preview_plan.h), from the state alone:
// the order of a sweep across projects, what it keeps, and each guard of `up` before any call.
#include <catch2/catch.hpp>

#include "plan/preview_plan.h"
#include "plan/kinds.h"
#include "state/test_support.h"
#include "util/error.h"

using namespace dbform;

namespace {

WallTime at(const std::string& utc) { return WallTime(parse_utc(utc).value().time_since_epoch()); }

ResourceRecord recorded_service(const std::string& project, const std::string& name, const std::string& status = "READY") {
  return test::recorded_service(project, name, "id-" + project + "-" + name, status);
}

ResourceRecord fork_of(const std::string& project, const std::string& preview, const std::string& source,
                       const std::string& created, const std::string& expires) {
  return test::preview_fork(project, preview, source, created, expires);
}

std::vector<std::string> due_of(const SweepChoice& choice) {
  std::vector<std::string> out;
  for (const auto& item : choice.due) out.push_back(item.where);
  return out;
}

DesiredProject project_with_previews(const std::vector<std::string>& services, long long max = 3) {
  DesiredProject p;
  p.id = "acme";
  for (const auto& name : {"orders", "billing"}) {
    DesiredService s;
    s.name = name;
    p.services.push_back(s);
  }
  DesiredPreviews block;
  block.services = services;
  block.strategy = "NOW";
  block.ttl = "72h";
  block.ttl_ms = 72LL * 3600 * 1000;
  block.max = max;
  p.previews = block;
  return p;
}

State sources_ready() {
  State s = new_state();
  s.upsert(recorded_service("acme", "orders"));
  s.upsert(recorded_service("acme", "billing"));
  return s;
}

}  // namespace

TEST_CASE("plan: choose_sweep orders every project's previews oldest first - not the state's project order") {
  State s = new_state();
  // acme comes first in the state, but dev's preview is the oldest.
  s.upsert(fork_of("acme", "young", "orders", "2026-01-03T00:00:00Z", "2026-01-04T00:00:00Z"));
  s.upsert(fork_of("acme", "mid", "orders", "2026-01-02T00:00:00Z", "2026-01-04T00:00:00Z"));
  s.upsert(fork_of("dev", "old", "web", "2026-01-01T00:00:00Z", "2026-01-04T00:00:00Z"));
  const SweepChoice all = choose_sweep(s, "", {}, at("2026-02-01T00:00:00Z"));
  CHECK(due_of(all) == std::vector<std::string>{"dev/previews/old", "acme/previews/mid", "acme/previews/young"});
  CHECK(all.kept.empty());
  CHECK(all.due[0].why == "expired 2026-01-04T00:00:00Z");
  CHECK(all.due[0].forks == std::vector<std::string>{"dev/previews/old/services/web"});
  // One project: only its previews, still oldest first.
  CHECK(due_of(choose_sweep(s, "acme", {}, at("2026-02-01T00:00:00Z"))) ==
        std::vector<std::string>{"acme/previews/mid", "acme/previews/young"});
}

TEST_CASE("plan: choose_sweep deletes what expired and, with --keep, what is not kept - keeping never extends an expiry") {
  State s = new_state();
  s.upsert(fork_of("acme", "done", "orders", "2026-01-01T00:00:00Z", "2026-01-02T00:00:00Z"));
  s.upsert(fork_of("acme", "open", "orders", "2026-01-01T00:00:01Z", "9999-12-31T23:59:59Z"));
  s.upsert(fork_of("acme", "closed", "orders", "2026-01-01T00:00:02Z", "2300-01-01T00:00:00Z"));
  const WallTime now = at("2026-01-03T00:00:00Z");
  const SweepChoice expired_only = choose_sweep(s, "", {}, now);
  CHECK(due_of(expired_only) == std::vector<std::string>{"acme/previews/done"});
  CHECK(expired_only.kept == std::vector<std::string>{"acme/previews/open: not expired, expires 9999-12-31T23:59:59Z",
                                                      "acme/previews/closed: not expired, expires 2300-01-01T00:00:00Z"});
  const SweepChoice kept = choose_sweep(s, "", {"open", "done"}, now);
  CHECK(due_of(kept) == std::vector<std::string>{"acme/previews/done", "acme/previews/closed"});
  CHECK(kept.due[1].why == "not kept");
  CHECK(kept.kept == std::vector<std::string>{"acme/previews/open: kept, expires 9999-12-31T23:59:59Z"});
  // The expiry is the moment itself: due at it, not a second later.
  CHECK(due_of(choose_sweep(s, "", {}, at("2026-01-02T00:00:00Z"))) == std::vector<std::string>{"acme/previews/done"});
  CHECK(due_of(choose_sweep(s, "", {}, at("2026-01-01T23:59:59Z"))).empty());
}

TEST_CASE("plan: plan_preview_up forks each block service as DEV with the block's expiry - and nothing for a preview that stands") {
  State s = sources_ready();
  const WallTime now = at("2026-01-01T00:00:00Z");
  const PreviewUpPlan up = plan_preview_up(project_with_previews({"orders", "billing"}), "pr-1", s, now, false);
  CHECK(up.addresses == std::vector<std::string>{"acme/previews/pr-1/services/orders", "acme/previews/pr-1/services/billing"});
  REQUIRE(up.forks.actions.size() == 2);
  CHECK(up.reset.actions.empty());
  const PlannedAction& a = up.forks.actions[0];
  CHECK(a.action == Action::Create);
  CHECK(a.name == "orders-pr-1");
  CHECK(a.after["fork"] == nlohmann::json{{"from", "orders"}, {"strategy", "NOW"}});
  CHECK(a.after["environment_tag"] == "DEV");
  CHECK(a.after[kPreviewKey]["expires_at"] == "2026-01-04T00:00:00Z");
  CHECK(up.forks.summary.create == 2);
  // Recorded and READY: nothing to fork again.
  for (const auto& action : up.forks.actions) {
    ResourceRecord made = fork_of("acme", "pr-1", action.after["fork"]["from"].get<std::string>(), "2026-01-01T00:00:00Z",
                                  "2026-01-04T00:00:00Z");
    made.settings[kPreviewKey]["password_rotated"] = true;
    s.upsert(made);
  }
  const PreviewUpPlan again = plan_preview_up(project_with_previews({"orders", "billing"}), "pr-1", s, now, false);
  CHECK(again.forks.actions.empty());
  CHECK(!again.needs_calls(s));
}

TEST_CASE("plan: plan_preview_up refuses before any call - a source not recorded or not READY, a full block, a taken name") {
  const WallTime now = at("2026-01-01T00:00:00Z");
  auto refusal = [&](const DesiredProject& p, const State& s) {
    try {
      plan_preview_up(p, "pr-1", s, now, false);
    } catch (const UsageError& e) {
      return std::string(e.what());
    }
    return std::string("(planned)");
  };
  State missing = new_state();
  missing.upsert(recorded_service("acme", "orders"));
  CHECK_THAT(refusal(project_with_previews({"orders", "billing"}), missing),
             Catch::Contains("its service `billing` is not recorded (apply the manifests first)"));
  State configuring = sources_ready();
  configuring.upsert(recorded_service("acme", "billing", "CONFIGURING"));
  CHECK_THAT(refusal(project_with_previews({"orders", "billing"}), configuring),
             Catch::Contains("its service `billing` is not READY (status CONFIGURING)"));
  State full = sources_ready();
  full.upsert(fork_of("acme", "pr-9", "orders", "2025-12-29T00:00:00Z", "2026-01-04T00:00:00Z"));
  CHECK_THAT(refusal(project_with_previews({"orders"}, 1), full),
             Catch::Contains("has 1 previews, the most its `previews:` block allows (max: 1): pr-9 (3d00h old)"));
  DesiredProject taken = project_with_previews({"orders"});
  DesiredService twin;
  twin.name = "orders-pr-1";
  taken.services.push_back(twin);
  CHECK_THAT(refusal(taken, sources_ready()), Catch::Contains("the fork's name `orders-pr-1` is declared as a service"));
  CHECK_THAT(refusal(project_with_previews({"orders"}), [] {
               State s = sources_ready();
               ResourceRecord gone = fork_of("acme", "pr-1", "orders", "2026-01-01T00:00:00Z", "2026-01-04T00:00:00Z");
               gone.deleted_outside = true;
               s.upsert(gone);
               return s;
             }()),
             Catch::Contains("was deleted outside dbform: `dbform preview up pr-1 --reset`"));
}

TEST_CASE("plan: plan_preview_up adopts a fork whose create's outcome is unknown - and --reset deletes the recorded forks first") {
  const WallTime now = at("2026-01-01T00:00:00Z");
  State s = sources_ready();
  ResourceRecord unknown = fork_of("acme", "pr-1", "orders", "2026-01-01T00:00:00Z", "2026-01-04T00:00:00Z");
  unknown.id.clear();
  unknown.create_pending = true;
  s.upsert(unknown);
  const PreviewUpPlan up = plan_preview_up(project_with_previews({"orders"}), "pr-1", s, now, false);
  REQUIRE(up.forks.actions.size() == 1);
  CHECK(up.forks.actions[0].action == Action::Adopt);
  CHECK_THROWS_WITH(plan_preview_up(project_with_previews({"orders"}), "pr-1", s, now, true),
                    Catch::Contains("has an unknown outcome: run `dbform preview up pr-1` without --reset first"));
  State made = sources_ready();
  made.upsert(fork_of("acme", "pr-1", "orders", "2026-01-01T00:00:00Z", "2026-01-04T00:00:00Z"));
  const PreviewUpPlan reset = plan_preview_up(project_with_previews({"orders"}), "pr-1", made, now, true);
  REQUIRE(reset.reset.actions.size() == 1);
  CHECK(reset.reset.actions[0].action == Action::Delete);
  REQUIRE(reset.forks.actions.size() == 1);
  CHECK(reset.forks.actions[0].action == Action::Create);
}
