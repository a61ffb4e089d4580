#include "ops/planning.h"

#include <algorithm>
#include <atomic>
#include <exception>
#include <future>
#include <set>

#include "api/client.h"
#include "api/project_key.h"
#include "engine/apply.h"
#include "ops/address.h"
#include "ops/keys.h"
#include "plan/differ.h"
#include "plan/targets.h"
#include "read/import.h"
#include "read/namesakes.h"
#include "read/catalogs.h"
#include "read/refresh.h"
#include "util/log.h"
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

struct EarlyReads::Done {
  std::vector<std::string> projects;
  std::map<std::string, ProjectKey> keys;
  std::vector<PreflightPass> passed;
  ProjectListings listings;  // its errors are the plan's (not listed again)
  std::exception_ptr failed;  // a key not set, refused or not checked: nothing after it was read
};

struct EarlyReads::Reads {
  std::atomic<bool> stop{false};
  std::future<Done> done;
};

EarlyReads::EarlyReads(const Manifest& manifest, const State& state, const PlanSettings& settings, ApiClient& api,
                       const EnvLookup& env, int parallelism)
    : api_(api), reads_(std::make_unique<Reads>()) {
  std::set<std::string> targeted;
  for (const auto& t : settings.targets) targeted.insert(t.substr(0, t.find('/')));
  std::vector<std::string> projects;
  for (const auto& p : manifest.projects)
    if (declares_any(p) && (targeted.empty() || targeted.count(p.id)))
      projects.push_back(p.id);
  api_.stop_waits_on(&reads_->stop);
  ListedKinds kinds = kinds_in(manifest, state);
  reads_->done = std::async(std::launch::async, [&manifest, &api, &env, parallelism, projects, kinds] {
    Done done{projects, {}, {}, {}, nullptr};
    try {
      done.keys = resolve_keys(manifest, projects, env);
      done.passed = preflight_keys(api, projects, done.keys, parallelism);
      done.listings = list_projects(api, projects, done.keys, parallelism, {}, {}, kinds);
    } catch (const std::exception&) {
      done.failed = std::current_exception();
    }
    return done;
  });
}

EarlyReads::~EarlyReads() {
  reads_->stop = true;
  if (reads_->done.valid()) reads_->done.wait();
  api_.stop_waits_on(nullptr);
}

std::unique_ptr<EarlyReads::Done> EarlyReads::take() {
  if (!reads_->done.valid()) return nullptr;
  return std::make_unique<Done>(reads_->done.get());
}

namespace {

// The children (read replica sets, peerings) of what `state` records that `listed` has not listed:
// after the state was read again, those of resources it records now.
std::vector<ChildScope> unlisted_children(const State& state, const Plan& plan, const ProjectListings& listed) {
  std::vector<ChildScope> out;
  for (auto& c : child_scopes(state, plan))
    if (auto p = listed.listed.find(c.project_id); p != listed.listed.end() && !p->second.count({c.kind, c.parent}))
      out.push_back(std::move(c));
  return out;
}

}  // namespace

// The state is read again after the lists when they show a declared name it does not record: every
// create is journaled before it is sent, so a state read after a list records whatever an apply
// running meanwhile created, and the plan does not report that apply's own creates as conflicts.
RefreshedPlan plan_refreshed(const Manifest& manifest, State& state, PlanSettings settings, ApiClient& api,
                             Clock& clock, const EnvLookup& env, int parallelism, EarlyReads* early,
                             const StateReader& reread) {
  RefreshedPlan out{plan_of(manifest, state, settings), std::nullopt, {}, {}, {}, {}};
  if (!settings.refresh) return out;
  std::vector<std::string> projects;
  std::set<std::string> seen;
  for (const auto& a : out.plan.actions)
    if ((a.action != Action::Orphan || settings.prune) && seen.insert(a.project_id).second)
      projects.push_back(a.project_id);
  if (projects.empty()) return out;
  // What the early reads covered is taken from them; the rest is read now, as if nothing had been.
  // Their failure is this plan's when they read its projects exactly (a key missing or refused);
  // otherwise it may be another project's, and the plan's own reads tell.
  std::unique_ptr<EarlyReads::Done> done = early ? early->take() : nullptr;
  if (done && done->failed) {
    if (std::set<std::string>(done->projects.begin(), done->projects.end()) == seen)
      std::rethrow_exception(done->failed);
    done.reset();
  }
  std::vector<std::string> unread;
  for (const auto& p : projects)
    if (!done || std::find(done->projects.begin(), done->projects.end(), p) == done->projects.end())
      unread.push_back(p);
  auto keys = resolve_keys(manifest, unread, env);
  std::map<std::string, PreflightPass> passed;
  for (auto& pass : preflight_keys(api, unread, keys, parallelism)) passed.emplace(pass.project, std::move(pass));
  ProjectListings listed;
  if (done) {
    for (auto& [project, key] : done->keys) keys.emplace(project, std::move(key));
    for (auto& pass : done->passed) passed.emplace(pass.project, std::move(pass));
    listed = std::move(done->listings);
  }
  out.preflight.emplace();
  for (const auto& p : projects) out.preflight->push_back(std::move(passed.at(p)));
  listed = list_projects(api, projects, keys, parallelism, child_scopes(state, out.plan), std::move(listed),
                         kinds_in(manifest, state));
  if (reread && (!namesakes_in(out.plan, listed).empty() || !unrecorded_twins(out.plan, state, listed).empty())) {
    state = reread();
    out.plan = plan_of(manifest, state, settings);
    listed = list_projects(api, projects, keys, parallelism, unlisted_children(state, out.plan, listed),
                           std::move(listed), kinds_in(manifest, state));
  }
  RefreshResult refreshed =
      refresh_state(api, clock, state, projects, keys, std::move(listed), parallelism, settings.settle_window);
  std::set<std::string> changed(refreshed.changed.begin(), refreshed.changed.end());
  // The objects inside the databases, from the catalogs of the services as the API shows them now.
  CatalogRefresh catalogs = refresh_catalogs(state, out.plan, projects, settings.catalogs, clock, parallelism);
  for (const auto& address : catalogs.dropped)
    log::warn(address + ": no longer in its service's catalogs: it was dropped outside dbform");
  changed.insert(catalogs.changed.begin(), catalogs.changed.end());
  out.catalogs_read = std::move(catalogs.read_at);
  out.imports = read_imports(api, manifest, state, keys, format_utc(clock.wall_now()));
  const Imports* imports = out.imports.empty() ? nullptr : &out.imports;
  Plan plan = changed.empty() && !imports ? std::move(out.plan) : plan_of(manifest, state, settings, nullptr, imports);
  const auto recorded = record_declared_values(state, plan);
  changed.insert(recorded.begin(), recorded.end());
  out.changed.assign(changed.begin(), changed.end());
  // Planned again only where the state changed, or a name is taken: each plan of thousands of
  // resources costs tens of milliseconds.
  if (!recorded.empty()) plan = plan_of(manifest, state, settings, nullptr, imports);
  const Namesakes namesakes = namesakes_in(plan, refreshed.listings);
  out.plan = namesakes.empty() ? std::move(plan) : plan_of(manifest, state, settings, &namesakes, imports);
  out.plan.catalogs_unread = std::move(catalogs.unread);
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

void record_imports(const Plan& plan, const Imports& imports, State& state) {
  for (const auto& a : plan.actions) {
    if (a.import_id.empty()) continue;
    auto found = imports.find(a.address);
    if (found != imports.end() && found->second.record) state.upsert(*found->second.record);
  }
}

}  // namespace dbform
