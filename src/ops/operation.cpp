#include "ops/operation.h"

#include <algorithm>
#include <optional>
#include <set>

#include "api/client.h"
#include "api/project_key.h"
#include "engine/apply.h"
#include "ops/keys.h"
#include "ops/locked_state.h"
#include "ops/refresh_only.h"
#include "ops/sealed.h"
#include "plan/differ.h"
#include "policy/evaluate.h"
#include "util/text.h"

namespace dbform {

namespace {

const PolicySet kNoPolicies;

// The policies' check of a plan made now (or saved and found to hold): what each resource will be,
// against the rules, at the wall clock's time (waivers expire).
void check_policies(Plan& plan, const State& state, const Manifest& manifest, const PolicySet* policies, Clock& clock) {
  check_plan_policies(plan, state, manifest, policies ? *policies : kNoPolicies,
                      std::chrono::time_point_cast<std::chrono::seconds>(clock.wall_now()));
}

// Why a saved plan's rules are not this apply's, or "".
std::string policy_change(const PolicyCheck& saved, const PolicySet* now) {
  const std::string digest = now ? now->digest : "";
  if (saved.digest == digest) return "";
  auto named = [](const std::vector<std::string>& files, const std::string& d) {
    return join(files, ", ") + " (digest " + d.substr(0, 12) + ")";
  };
  if (saved.digest.empty())
    return "the plan was checked against no policy, and this apply is given " + named(now->files, digest) +
           ": plan again with the same --policy files (or DBFORM_POLICY)";
  if (digest.empty())
    return "the plan was checked against the policies " + named(saved.files, saved.digest) +
           ", and this apply is given none: give it the same --policy files (or DBFORM_POLICY)";
  return "the plan was checked against the policies " + named(saved.files, saved.digest) + ", and this apply's " +
         named(now->files, digest) + " hold other rules";
}

}  // namespace

PlanOutcome plan_operation(const PlanRequest& request) {
  PlanOutcome out;
  auto stored = request.store.read();
  out.state_missing = !stored;
  State state = stored ? std::move(*stored) : new_state();
  if (request.settings.refresh) {
    if (!request.api) throw Error("a refreshing plan needs the API");
    // The refresh's first reads, begun once the inputs are known to be good (a state that cannot
    // be read sends nothing), beside the first plan.
    EarlyReads early(request.manifest, state, request.settings, *request.api, request.env, request.parallelism);
    // A plan holds no lock: an apply may journal creates after the read above and before the lists.
    auto reread = [&] {
      auto again = request.store.read();
      out.state_missing = !again;
      return again ? std::move(*again) : new_state();
    };
    RefreshedPlan refreshed = plan_refreshed(request.manifest, state, request.settings, *request.api, request.clock,
                                             request.env, request.parallelism, &early, reread);
    out.plan = std::move(refreshed.plan);
    out.warnings = std::move(refreshed.warnings);
  } else {
    out.plan = plan_of(request.manifest, state, request.settings);  // needs no API key
    // What a reviewer of a plan from the state alone needs to know: how long ago it was read.
    if (!out.state_missing) out.plan.freshness = freshness_of(state, request.clock);
  }
  if (out.state_missing) out.plan.state_lineage.clear();  // "no state yet", which apply checks again
  check_policies(out.plan, state, request.manifest, request.policies, request.clock);
  return out;
}

void refuse_conflicting_plan(PlanDocument& saved, const std::string& file, const std::string& plan_again) {
  limit_deletes(saved.plan);  // a plan file edited to delete more than its limit has conflicts now
  if (saved.plan.summary.has_conflicts())
    throw UsageError(file + " has " + std::to_string(saved.plan.summary.conflict + saved.plan.summary.policy) +
                     " conflict(s), so nothing in it can be applied. Resolve them and run `" + plan_again +
                     "` again");
}

namespace {

// The refresh read every record the state holds with an id (every project it records was listed):
// the state is as current as this run, which its next write records.
bool refreshed_whole(const State& state, const std::optional<std::vector<PreflightPass>>& preflight) {
  if (!preflight) return false;
  std::set<std::string> read;
  for (const auto& pass : *preflight) read.insert(pass.project);
  return std::all_of(state.resources.begin(), state.resources.end(),
                     [&](const ResourceRecord& r) { return r.id.empty() || read.count(r.project_id); });
}

// What the engine needs besides the locked state: the plan to execute.
struct Prepared {
  Plan plan;
  std::optional<std::vector<PreflightPass>> preflight;  // made by the refresh
  // What the refresh read: saved (with the plan's imports) once the apply goes ahead, by the run's
  // first write, or by the helper when there is nothing to run; never for a plan with conflicts or
  // one that is not confirmed.
  std::vector<std::string> refreshed;
  std::map<std::string, std::string> catalogs_read;  // service -> when the refresh read its catalogs
  Imports imports;
};

Prepared plan_now(const ApplyRequest& r, State& state, ApplyReporter& reporter) {
  Prepared p;
  RefreshedPlan refreshed = plan_refreshed(r.manifest, state, r.settings, r.api, r.clock, r.env, r.engine.parallelism);
  p.refreshed = std::move(refreshed.changed);
  p.catalogs_read = std::move(refreshed.catalogs_read);
  p.plan = std::move(refreshed.plan);
  p.preflight = std::move(refreshed.preflight);
  p.imports = std::move(refreshed.imports);
  check_policies(p.plan, state, r.manifest, r.policies, r.clock);
  for (const auto& warning : refreshed.warnings) reporter.warning(warning);
  return p;
}

// The saved plan, once the manifests it names, the (locked) state and, for a refreshed plan, what
// a refresh reads now are proved to give the same actions; refused otherwise, before anything is
// sent or written. What that refresh read is recorded, as an apply without a plan file records its
// own (the plan that made the file wrote nothing). `stored`: there was a state to read.
Prepared load_saved_plan(const ApplyRequest& r, State& state, bool stored) {
  const PlanDocument& saved = *r.saved;
  Prepared p;
  PlanSettings as_saved;
  as_saved.refresh = saved.plan.refreshed;
  as_saved.prune = saved.plan.prune;
  as_saved.max_deletes = saved.plan.max_deletes;
  as_saved.targets = saved.plan.targets;
  as_saved.settle_window = r.settings.settle_window;
  as_saved.catalogs = r.settings.catalogs;
  const State as_stored = state;
  auto problems = saved_plan_problems(saved, r.manifest, stored ? &as_stored : nullptr, nullptr);
  if (std::string changed = policy_change(saved.plan.policy, r.policies); !changed.empty()) problems.push_back(changed);
  RefreshedPlan now;
  if (problems.empty()) {
    now = plan_refreshed(r.manifest, state, as_saved, r.api, r.clock, r.env, r.engine.parallelism);
    problems = saved_plan_problems(saved, r.manifest, stored ? &as_stored : nullptr, &now.plan);
  }
  if (!problems.empty())
    throw UsageError("the saved plan " + r.saved_from + " is stale, nothing was changed:\n  " +
                     join(problems, "\n  ") + "\nRun `" + r.plan_again +
                     "` again, review the new plan and apply that one");
  p.refreshed = std::move(now.changed);
  p.catalogs_read = std::move(now.catalogs_read);
  p.preflight = std::move(now.preflight);
  p.imports = std::move(now.imports);
  p.plan = saved.plan;
  check_policies(p.plan, state, r.manifest, r.policies, r.clock);  // a waiver may have expired since
  return p;
}

// A plan that records a password (a create, fork, adoption or pending rotation), or one whose
// services are checked with their passwords (--wait-connectable), needs the key of a state whose
// passwords are sealed: refused before the question, any write and any call that changes anything
// (only the refresh's reads were made, and they made the plan). Without a key on a state in clear,
// it warns, once approved, that the passwords are kept in clear. Returns that warning ("" for none).
std::string check_sealed_passwords(const ApplyRequest& r, const Prepared& p, const State& state) {
  if (r.engine.connectable.check) require_state_key(r.store, state, "apply --wait-connectable");
  if (!plan_records_password(p.plan, state)) return "";
  require_state_key(r.store, state, "this apply",
                    "its plan records a new password: a create, fork, adoption or rotation");
  return clear_password_warning(r.store, state);
}

}  // namespace

// The apply runs in the one helper that holds the lock around an operation, and the engine's run is
// the one writer of the state: what the refresh read is handed to the run (`settled`), which saves
// it with its first write, before any call that changes anything is sent (a stop before that write
// saves it at the run's end, having sent nothing). With nothing to run, the helper saves it.
ApplyOutcome apply_operation(const ApplyRequest& r, ApplyReporter& reporter, const Approver& approve) {
  ApplyOutcome out;
  bool state_missing = false;
  const LockedRead read = stored_or_new_noting(state_missing);
  bool saving_refresh = false;  // the helper is saving what the refresh read (nothing to run)
  auto body = [&](State& state) -> Changes {
    Prepared p = r.saved ? load_saved_plan(r, state, !state_missing) : plan_now(r, state, reporter);
    if (state_missing && !r.saved) reporter.no_state(r.store);
    reporter.plan(p.plan, r.saved ? r.saved_from : "");
    auto ended = [&](ApplyOutcome::End end) {
      out.end = end;
      out.plan = std::move(p.plan);
    };
    if (p.plan.summary.has_conflicts()) {
      reporter.conflicts(p.plan);
      ended(ApplyOutcome::End::Conflicts);
      return {};
    }
    // The time of a refresh is recorded with what it read, by a write the run makes anyway: an
    // apply with nothing to do and nothing new read writes nothing (a saved plan stays valid).
    const bool stamp = refreshed_whole(state, p.preflight);
    if (!p.plan.summary.has_changes()) {
      ended(ApplyOutcome::End::NothingToDo);
      if (p.refreshed.empty()) {
        reporter.nothing_to_do();
        return {};
      }
      if (stamp) stamp_refresh(state, "apply", r.clock, true, p.catalogs_read);
      Changes save = refresh_changes(p.refreshed, state);
      saving_refresh = true;
      save.then = [&](const State&) {
        saving_refresh = false;
        reporter.nothing_to_do();
      };
      return save;
    }
    const std::string in_clear = check_sealed_passwords(r, p, state);
    // A saved plan was reviewed when it was made.
    if (!r.saved && !r.auto_approve && !approve()) {
      reporter.cancelled();
      ended(ApplyOutcome::End::Cancelled);
      return {};
    }
    if (!in_clear.empty()) reporter.warning(Diagnostic{Severity::Warning, {}, "", in_clear, ""});
    if (stamp) stamp_refresh(state, "apply", r.clock, true, p.catalogs_read);  // saved by the run's first write
    record_imports(p.plan, p.imports, state);                 // saved by the run's first write
    auto keys = resolve_keys(r.manifest, projects_with_work(p.plan), r.env);
    EventSink& events = reporter.start(p.plan);
    ApplyOptions run_opts = r.engine;
    // The refresh's lists stand for the engine's own check of names only when nothing waited between
    // them: while a person reads the plan, an apply of another state can create the same names.
    run_opts.names_checked = p.preflight.has_value() && (r.auto_approve || r.saved);
    ApplyEngine engine(r.api, r.store, r.clock, events, run_opts);
    if (p.preflight) engine.report_preflight(*p.preflight);
    else engine.preflight(p.plan, keys);
    out.result = engine.apply(p.plan, keys, state, p.refreshed);
    ended(ApplyOutcome::End::Applied);
    Changes ran;
    ran.engine = &out.result;  // its save error stops the apply with the recovery file's message
    return ran;
  };
  try {
    out.state = with_locked_state(StateAccess{r.store, "apply", r.lock_timeout, r.lock_wait, r.env}, body, read);
  } catch (const Error& e) {
    if (!saving_refresh) throw;
    throw Error(std::string("what the refresh read could not be saved, so nothing was sent: ") + e.what());
  }
  return out;
}

}  // namespace dbform
