#pragma once
// Plans, and with a refresh first reads what exists: every recorded resource's state is recorded
// as the API shows it, and a declared resource the state does not record but whose name exists is
// planned as a conflict, never as a second create.
#include <optional>
#include <vector>

#include "api/client.h"
#include "engine/apply.h"
#include "manifest/model.h"
#include "plan/model.h"
#include "state/model.h"
#include "state/store.h"

namespace dbform::cli {

struct RefreshedPlan {
  Plan plan;
  // The keys' preflight, made before the lists (so that a wrong key is named as such); unset when
  // nothing was refreshed.
  std::optional<std::vector<PreflightPass>> preflight;
};

// Without `refresh`, the plan of the state alone. Otherwise the keys of the declared projects (and
// with `prune` those of the orphans) are
// preflighted, each project is listed (one call per kind), what it shows is recorded in `state`
// (and written through `store`, whose lock the caller holds), and the plan is made against it.
// Throws Error when a key or a read fails, before anything is written.
struct PlanSettings {
  bool refresh = false;
  bool prune = false;  // unprotected orphans are deletes (their projects are refreshed too)
  Duration settle_window = std::chrono::seconds(30);  // how far lists may lag behind a create
};

RefreshedPlan plan_refreshed(const Manifest& manifest, State& state, StateStore& store, PlanSettings settings,
                             ApiClient& api, Clock& clock, int parallelism = 10);

}  // namespace dbform::cli
