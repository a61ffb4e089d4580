#pragma once
// Plans, and with a refresh first asks the API what exists: a declared resource the state does not
// record but whose name exists is planned as a conflict, never as a second create.
#include "manifest/model.h"
#include "plan/model.h"
#include "state/model.h"

namespace dbform::cli {

// One list call per project and kind (for the projects with creates). Throws Error when a key is
// missing or a project cannot be listed.
Plan plan_refreshed(const Manifest& manifest, const State& state, bool refresh, int parallelism = 10);

}  // namespace dbform::cli
