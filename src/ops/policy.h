#pragma once
// The policies outside a plan: `dbform policy check` audits what the state records, and `preview
// up` checks the rules of kind `preview` against the forks it would make, before any call.
#include <string>
#include <vector>

#include "plan/preview_plan.h"
#include "manifest/model.h"
#include "plan/model.h"
#include "policy/rules.h"
#include "state/store.h"
#include "util/clock.h"

namespace dbform {

struct PolicyCheckRequest {
  StateStore& store;                  // opened; read once, never written, never locked
  const Manifest* manifest = nullptr;  // -f given: its declarations' waivers count
  const PolicySet& policies;
  Clock& clock;
};

struct PolicyCheckOutcome {
  PolicyCheck check;
  size_t resources = 0;  // records audited
  bool state_missing = false;
};

// Reads the state (no lock, no key, no API call) and checks every record against the rules. A
// record whose create was never answered (an intent) is not audited: nothing is known to exist.
PolicyCheckOutcome policy_check_operation(const PolicyCheckRequest& request);

// The rules of kind `preview` against the forks `preview up` would make (their size the block's,
// else their source's as recorded). Throws UsageError naming each mandatory violation, before any
// call; returns the check (its advisory violations are warnings).
PolicyCheck check_preview_policies(const std::vector<PreviewUpPlan>& plans, const State& state,
                                   const PolicySet& policies, UtcTime now);

}  // namespace dbform
