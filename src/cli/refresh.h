#pragma once
// Plans, and with a refresh first asks the API what exists: a declared resource the state does not
// record but whose name exists is planned as a conflict, never as a second create.
#include <optional>
#include <vector>

#include "api/client.h"
#include "engine/apply.h"
#include "manifest/model.h"
#include "plan/model.h"
#include "state/model.h"

namespace dbform::cli {

struct RefreshedPlan {
  Plan plan;
  // The keys' preflight, made before the lists (so that a wrong key is named as such); unset when
  // nothing was refreshed.
  std::optional<std::vector<PreflightPass>> preflight;
};

// Without `refresh`, or with nothing to create, the plan of the state alone. Otherwise the keys of
// the projects with creates are preflighted, each of those projects is listed (one call per kind),
// and the plan is made against what exists. Throws Error when a key or a list fails.
RefreshedPlan plan_refreshed(const Manifest& manifest, const State& state, bool refresh, ApiClient& api,
                             int parallelism = 10);

}  // namespace dbform::cli
