#include "ops/preview.h"

#include <algorithm>

#include "api/project_key.h"
#include "ops/keys.h"
#include "ops/policy.h"
#include "ops/sealed.h"
#include "util/escape.h"

namespace dbform {

namespace {

PreviewRunner runner_of(const PreviewContext& c, PreviewReporter& reporter) {
  return PreviewRunner(c.api(), c.access.store, c.clock, reporter.events(), c.engine);
}

std::vector<const DesiredProject*> preview_projects(const PreviewUpRequest& r) {
  std::vector<const DesiredProject*> projects;
  for (const auto& p : r.manifest.projects)
    if ((r.project.empty() && p.previews) || p.id == r.project) projects.push_back(&p);
  if (projects.empty())
    throw UsageError(r.project.empty() ? "no project of the manifests has a `previews:` block; nothing was changed"
                                       : "project `" + r.project + "` is not in the manifests; nothing was changed");
  return projects;
}

// The forks of each project, through the engine: every live guard of every project before anything
// is deleted or forked. Stops at a stop signal or a save that failed (the helper reports it).
ApplyResult run_forks(const PreviewUpRequest& r, const std::vector<PreviewUpPlan>& plans, State& state,
                      PreviewReporter& reporter, PreviewUpOutcome& out) {
  std::vector<std::string> with_calls;
  for (const auto& up : plans)
    if (up.needs_calls(state)) with_calls.push_back(up.project_id);
  ApplyResult last;
  if (with_calls.empty()) return last;
  const auto keys = resolve_keys(r.manifest, with_calls, r.context.access.env);
  PreviewRunner runner = runner_of(r.context, reporter);
  for (const auto& up : plans)
    if (up.needs_calls(state)) runner.check_live(up, keys, state);
  for (const auto& up : plans) {
    if (!up.needs_calls(state)) continue;
    last = runner.up(up, keys, state);
    if (!last.save_error.empty()) return last;
    for (const auto& failure : last.failures) reporter.failed(failure);
    out.failed = out.failed || !last.failures.empty();
    if ((out.interrupted = last.interrupted)) break;
  }
  return last;
}

// The migrations of each project's preview (no API call: the forks are READY with their own
// passwords) and, when asked, the diff of each fork's schema against its source's.
void migrate(const PreviewUpRequest& r, const std::vector<PreviewUpPlan>& plans,
             const std::map<std::string, std::vector<MigrationFile>>& files, const State& state,
             PreviewReporter& reporter, PreviewUpOutcome& out) {
  for (const auto& up : plans) {
    const auto f = files.find(up.project_id);
    if (f == files.end()) continue;
    SchemaReport& report = out.schema[up.project_id];
    MigrateRequest request{state, up.project_id, up.name, f->second, r.connector, r.context.engine.stop};
    request.clock = &r.context.clock;
    request.connect_wait = r.context.engine.wait_timeout;  // --wait-timeout, as apply --wait-connectable waits
    request.statement_timeout = r.migration_timeout;
    report.migrations = migrate_preview(request, reporter);
    for (const auto& fork : report.migrations->forks)
      if (fork.failure) reporter.failed(shown_text(fork.fork_name) + ": migrations failed: " + shown_text(fork.failure->str()));
    if (report.migrations->interrupted) return;  // a signal: nothing more is run or read
    if (r.diff_schemas) report.diff = diff_preview({state, up.project_id, up.name, r.connector});
  }
}

}  // namespace

PreviewUpOutcome preview_up_operation(const PreviewUpRequest& r, PreviewReporter& reporter) {
  require_preview_name(r.name);
  const std::vector<const DesiredProject*> projects = preview_projects(r);
  PreviewUpOutcome out;
  ApplyResult last;
  out.state = with_locked_state(r.context.access, [&](State& state) {
    // A fork records its own password: a state whose passwords are sealed needs the key first.
    require_state_key(r.context.access.store, state, "preview up");
    out.clear_warning = clear_password_warning(r.context.access.store, state);
    const auto now = r.context.clock.wall_now();
    std::vector<PreviewUpPlan> plans;  // every guard of every project before any call
    for (const DesiredProject* p : projects) plans.push_back(plan_preview_up(*p, r.name, state, now, r.reset));
    // The rules of kind `preview`, before any call: a mandatory one broken refuses (UsageError).
    const PolicyCheck rules =
        check_preview_policies(plans, state, r.policies, std::chrono::time_point_cast<std::chrono::seconds>(now));
    for (const auto& v : rules.violations) reporter.advisory(v);  // the mandatory ones refused above
    // Every migration file parsed before any call: a syntax error touches neither the API nor a fork.
    std::map<std::string, std::vector<MigrationFile>> files;
    for (const DesiredProject* p : projects)
      if (p->previews && p->previews->migrations) files[p->id] = preview_migration_files(*p->previews);
    for (const auto& up : plans) out.projects.push_back(up.project_id);
    const bool called = std::any_of(plans.begin(), plans.end(), [&](const auto& up) { return up.needs_calls(state); });
    last = run_forks(r, plans, state, reporter, out);
    Changes changes;
    changes.engine = &last;
    changes.fold = called;
    // A preview is reported, and migrated, once it is whole.
    if (!out.failed && !out.interrupted)
      changes.then = [&r, &reporter, &out, plans, files](const State& saved) { migrate(r, plans, files, saved, reporter, out); };
    return changes;
  });
  return out;
}

PreviewDownOutcome preview_down_operation(const PreviewDownRequest& r, PreviewReporter& reporter) {
  require_preview_name(r.name);
  PreviewDownOutcome out;
  with_locked_state(r.context.access, [&](State& state) {
    std::vector<std::string> forks, projects;
    for (const auto& p : recorded_previews(state, r.project))
      if (p.name == r.name) {
        for (const ResourceRecord* rec : p.forks) forks.push_back(rec->address);
        projects.push_back(p.project_id);
      }
    Changes changes;
    if (forks.empty()) return changes;  // a pull request closed twice
    out.recorded = true;
    const auto keys = resolve_keys(r.manifest, projects, r.context.access.env);
    out.result = runner_of(r.context, reporter).remove(forks, keys, state);
    changes.engine = &out.result;
    changes.fold = true;  // what it folds is what was saved
    return changes;
  });
  return out;
}

PreviewSweepOutcome preview_sweep_operation(const PreviewSweepRequest& r, PreviewReporter& reporter) {
  for (const auto& name : r.keep) require_preview_name(name);
  PreviewSweepOutcome out;
  out.state = with_locked_state(r.context.access, [&](State& state) {
    out.choice = choose_sweep(state, r.project, r.keep, r.context.clock.wall_now());
    Changes changes;
    if (out.choice.due.empty()) return changes;
    std::map<std::string, ProjectKey> keys;
    std::map<std::string, std::string> key_problems;
    for (const auto& item : out.choice.due) {  // a project without a key is skipped, not the whole sweep
      if (keys.count(item.project_id) || key_problems.count(item.project_id)) continue;
      try {
        keys.merge(resolve_keys(r.manifest, {item.project_id}, r.context.access.env));
      } catch (const Error& e) {
        key_problems[item.project_id] = e.what();
      }
    }
    out.report = runner_of(r.context, reporter).sweep(out.choice, r.max_deletes, keys, key_problems, state);
    changes.engine = &out.report.result;
    changes.fold = true;
    return changes;
  });
  return out;
}

}  // namespace dbform
