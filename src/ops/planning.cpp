#include "ops/planning.h"

#include <set>

#include "engine/import.h"
#include "engine/keys.h"
#include "engine/refresh.h"
#include "engine/targets.h"
#include "ops/address.h"
#include "plan/differ.h"
#include "util/text.h"

namespace dbform {

Plan plan_of(const Manifest& manifest, const State& state, const PlanSettings& settings, const Namesakes* namesakes,
             const Imports* imports) {
  Plan plan = make_plan(manifest, state, namesakes, settings.prune, imports);
  limit_to_targets(plan, planned_addresses(plan, settings.targets));
  plan.max_deletes = settings.max_deletes;
  plan.refreshed = settings.refresh;
  limit_deletes(plan);
  return plan;
}

RefreshedPlan plan_refreshed(const Manifest& manifest, State& state, PlanSettings settings, ApiClient& api,
                             Clock& clock, const EnvLookup& env, int parallelism) {
  RefreshedPlan out{plan_of(manifest, state, settings), std::nullopt, {}, {}, {}};
  if (!settings.refresh) return out;
  std::vector<std::string> projects;
  std::set<std::string> seen;
  for (const auto& a : out.plan.actions)
    if ((a.action != Action::Orphan || settings.prune) && seen.insert(a.project_id).second)
      projects.push_back(a.project_id);
  if (projects.empty()) return out;
  auto keys = resolve_keys(manifest, projects, env);
  out.preflight = preflight_keys(api, projects, keys, parallelism);
  RefreshResult refreshed =
      refresh_state(api, clock, state, projects, keys, parallelism, child_scopes(state, out.plan),
                    settings.settle_window);
  std::set<std::string> changed(refreshed.changed.begin(), refreshed.changed.end());
  out.imports = read_imports(api, manifest, state, keys, format_utc(clock.wall_now()));
  const Imports* imports = out.imports.empty() ? nullptr : &out.imports;
  Plan plan = refreshed.changed.empty() && !imports ? std::move(out.plan) : plan_of(manifest, state, settings, nullptr, imports);
  const auto recorded = record_declared_values(state, plan);
  changed.insert(recorded.begin(), recorded.end());
  out.changed.assign(changed.begin(), changed.end());
  // Planned again only where the state changed, or a name is taken: each plan of thousands of
  // resources costs tens of milliseconds.
  if (!recorded.empty()) plan = plan_of(manifest, state, settings, nullptr, imports);
  const Namesakes namesakes = namesakes_in(plan, refreshed.listings);
  out.plan = namesakes.empty() ? std::move(plan) : plan_of(manifest, state, settings, &namesakes, imports);
  const Namesakes twins = unrecorded_twins(out.plan, state, refreshed.listings);
  for (const auto& a : out.plan.actions)
    if (auto ids = twins.find(a.address); ids != twins.end()) {
      const size_t n = ids->second.size();
      out.warnings.push_back({Severity::Warning, a.location, a.address,
                              // Ids are the API's words: scrubbed before any renderer sees them.
                              scrub(std::to_string(n) + " other " + (n == 1 ? kind_noun(a.kind) : kind_plural(a.kind)) +
                                    " named `" + a.name + (n == 1 ? "` exists" : "` exist") + " beside the recorded " +
                                    a.resource_id + ", held by no record here (" + join(ids->second, ", ") +
                                    "): duplicates?"),
                              "if they are, delete them in the console; `dbform import` takes one over under "
                              "another name"});
    }
  return out;
}

void record_refresh(const std::vector<std::string>& changed, State& state, StateStore& store) {
  try {
    // Most records changed (the first refresh after a large apply records what every one looks
    // like): written whole, since replaying such a journal on every later read costs more than
    // the document. Otherwise appended, at the cost of the change.
    if (changed.size() * 2 > state.resources.size()) store.write(state);
    else if (!changed.empty()) store.write_changes(state, changed);
  } catch (const Error& e) {
    throw Error(std::string("what the refresh read could not be saved, so nothing was sent: ") + e.what());
  }
}

void record_imports(const Plan& plan, const Imports& imports, State& state) {
  for (const auto& a : plan.actions) {
    if (a.import_id.empty()) continue;
    auto found = imports.find(a.address);
    if (found != imports.end() && found->second.record) state.upsert(*found->second.record);
  }
}

}  // namespace dbform
