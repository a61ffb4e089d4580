#pragma once
#include "manifest/model.h"
#include "plan/model.h"
#include "state/model.h"

namespace dbform {

// Pure: compares what is declared with what is recorded (and, after a refresh, with the
// unrecorded namesakes found in the API, and what it read of each unrecorded `import_id`). Linear
// in the number of resources. With `prune`, orphans that are not protected are deleted, protected
// ones are conflicts. Addresses under `removed:` are forgotten.
Plan make_plan(const Manifest& manifest, const State& state, const Namesakes* namesakes = nullptr,
               bool prune = false, const Imports* imports = nullptr);

// The blast radius (--max-deletes): when the plan's deletes and replacements outnumber
// `plan.max_deletes`, each of them becomes a conflict naming them all and the flag, so that the
// plan deletes nothing. Recounts the summary.
void limit_deletes(Plan& plan);

// The id of the project's VPC `name` as recorded, or "" while it is not created (yet, or again after
// it was deleted outside dbform). The planner and the engine both attach by it.
std::string recorded_vpc_id(const State& state, const std::string& project_id, const std::string& name);

// Why a declared, unrecorded resource is not created while resources of its name exist.
// When the state records one of `ids` under another address (`state mv` moved it), says so and how to
// declare or move it back, instead of suggesting an import that would fail.
std::string namesake_reason(ResourceKind kind, const std::string& address, const std::vector<std::string>& ids,
                            const State& state);

}  // namespace dbform
