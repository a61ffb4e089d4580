#pragma once
// `plan` and `apply` as operations of the core, as Terraform's
// backend/local runs them for its commands: the command line parses flags, opens the store, calls
// one of these and renders what it returns. Every safety decision of the flow is here: the lock,
// the read, the refresh, the saved plan's checks, the blast radius, the keys, whether the refresh
// stands for the name guard, the preflight, and the recovery file when the state cannot be saved.
#include <functional>
#include <string>
#include <vector>

#include "manifest/model.h"
#include "ops/planning.h"
#include "plan/events.h"
#include "plan/model.h"
#include "plan/plan_file.h"
#include "plan/run.h"
#include "policy/rules.h"
#include "state/store.h"
#include "util/diagnostics.h"
#include "util/env.h"

namespace dbform {

class ApiClient;  // api/client.h: the requests hold it, the .cpp calls it

// What a plan is made from. `api` may be null when `settings.refresh` is false (no key needed).
struct PlanRequest {
  const Manifest& manifest;
  StateStore& store;  // opened; read once, never written, never locked
  ApiClient* api = nullptr;
  Clock& clock;
  EnvLookup env;
  PlanSettings settings;
  int parallelism = 10;  // reads at once
  const PolicySet* policies = nullptr;  // the rules the plan is checked against (--policy); null: none
};

struct PlanOutcome {
  Plan plan;  // with no lineage when there is no state yet (what apply checks again)
  bool state_missing = false;
  std::vector<Diagnostic> warnings;  // duplicates the refresh found, at their declarations
};

// Read-only and lock-free: one consistent snapshot, and nothing written, so that
// pull requests plan as often as they like while main applies. Throws Error (MissingKeyError for
// a key the refresh needs) before anything is planned.
PlanOutcome plan_operation(const PlanRequest& request);

// What apply tells as it goes: the command line's renderers (text or JSON) implement it.
class ApplyReporter {
 public:
  virtual ~ApplyReporter() = default;
  // A warning of the refresh (a duplicate), before the plan.
  virtual void warning(const Diagnostic& warning) = 0;
  // There is no state yet in `store`: everything is new. Said above the plan.
  virtual void no_state(const StateStore& store) = 0;
  // `saved_from`: the plan file it came from, "" for a plan made now.
  virtual void plan(const Plan& plan, const std::string& saved_from) = 0;
  virtual void conflicts(const Plan& plan) = 0;  // the run stops: nothing can be applied
  virtual void nothing_to_do() = 0;
  virtual void cancelled() = 0;
  // Before the first call: where the engine's events go from here on.
  virtual EventSink& start(const Plan& plan) = 0;
};

// Asked before a plan made now is applied (unless auto-approved); true: go ahead.
using Approver = std::function<bool()>;

// What an apply is made from: a plan made now from `manifest` with `settings`, or `saved` (a plan
// file, already refused by refuse_conflicting_plan when it has conflicts) checked against the
// manifests it names (`manifest`) and what exists now.
struct ApplyRequest {
  const Manifest& manifest;
  StateStore& store;  // opened; locked for the whole apply
  ApiClient& api;
  Clock& clock;
  EnvLookup env;
  Duration lock_timeout{0};
  LockWaitNotice lock_wait;           // told when the lock is held and waited for
  PlanSettings settings;              // a plan made now; a saved plan carries its own
  const PlanDocument* saved = nullptr;
  std::string saved_from;             // the saved plan's file
  std::string plan_again;             // the command that makes the saved plan anew (said when it is stale)
  bool auto_approve = false;
  ApplyOptions engine;                // names_checked is decided here
  // The rules the plan is checked against; a saved plan must have been checked against the same
  // (their digest), and is checked again (a waiver may have expired since). Null: none.
  const PolicySet* policies = nullptr;
};

struct ApplyOutcome {
  enum class End { Conflicts, NothingToDo, Cancelled, Applied };
  End end = End::Applied;
  Plan plan;
  State state;         // as recorded at the end
  ApplyResult result;  // when applied
};

// In with_locked_state (one lock, one read): plans (or checks the saved plan), asks `approve`,
// preflights the keys and runs the engine, which saves what the refresh read with its first write
// (with nothing to run, the helper saves it). Throws Error for anything that stopped it before the
// first call, and when the state could not be saved (naming the recovery file).
ApplyOutcome apply_operation(const ApplyRequest& request, ApplyReporter& reporter, const Approver& approve);

// A saved plan with conflicts is refused before anything is read (its deletes beyond its limit are
// conflicts, as when it was made). `plan_again`: the command that makes it anew.
void refuse_conflicting_plan(PlanDocument& saved, const std::string& file, const std::string& plan_again);

}  // namespace dbform
