// `dbform apply [PLANFILE]`: plan (or check a saved plan), confirm, preflight, create, watch, record.
#include <unistd.h>

#include <atomic>
#include <filesystem>
#include <iostream>

#include "cli/apply_flow.h"
#include "cli/commands.h"
#include "cli/manual.h"
#include "cli/render_apply.h"
#include "cli/render_refresh.h"
#include "cli/signals.h"
#include "cli/suggest.h"
#include "ops/connections.h"
#include "ops/operation.h"
#include "ops/refresh_only.h"
#include "plan/plan_file.h"
#include "util/env.h"
#include "util/text.h"

namespace dbform::cli {

namespace fs = std::filesystem;

namespace {

// Set by the first SIGINT, SIGTERM or SIGHUP once execute() installed the handlers (cli/signals.h).
std::atomic<bool>& g_stop = stop_flag();

// Known before anything is read or sent: with no terminal to ask on, only --auto-approve or a
// saved plan may apply.
// A refresh-only run has no saved plan to offer (`plan --refresh-only --out` is refused).
void check_confirmation_possible(const ApplyFlowOptions& opts, const Terminal& term) {
  if (opts.auto_approve || !opts.plan_file.empty() || term.stdin_tty) return;
  if (opts.planning.refresh_only)
    throw UsageError("refusing to apply without confirmation: there is no terminal to ask on. "
                     "Review the report of `dbform plan --refresh-only` and pass --auto-approve "
                     "(a refresh-only plan is never saved)");
  throw UsageError("refusing to apply without confirmation: there is no terminal to ask on. "
                   "Review the plan and pass --auto-approve, or apply a saved plan (`dbform plan --out FILE`)");
}

bool confirmed(const ApplyFlowOptions& opts, std::ostream& out) {
  if (opts.auto_approve) return true;
  out << "\nDo you want to apply this plan? Only 'yes' will be accepted.\n  Enter a value: " << std::flush;
  std::string answer;
  std::getline(std::cin, answer);
  return answer == "yes";
}

// Flags are checked before anything is read, so a mistake costs nothing.
ApplyOptions flow_engine_options(const ApplyFlowOptions& opts) {
  if (opts.json && opts.plan_file.empty() && !opts.auto_approve)
    throw UsageError("--json needs --auto-approve or a saved plan: stdout carries JSON, so there is no way to ask");
  // `--wait-timeout 10 minutes` leaves `minutes` where a plan file goes.
  if (!opts.plan_file.empty() && !duration_unit_hint(opts.plan_file).empty() && !fs::exists(opts.plan_file))
    throw UsageError("`" + opts.plan_file + "` is not a plan file: a duration is one word, without a space (write "
                     "e.g. --wait-timeout 10m)");
  if (!opts.plan_file.empty() && !opts.planning_flags_given.empty())
    throw UsageError("a saved plan was made with its own manifests, targets, --prune and --max-deletes: apply " +
                     opts.plan_file + " without " + join(opts.planning_flags_given, ", ") +
                     ", or make a new plan with them");
  if (opts.no_wait && opts.wait_connectable)
    throw UsageError("--wait-connectable waits after READY, and --no-wait does not wait for READY: use one of them");
  ApplyOptions e = engine_options(opts.wait, &g_stop);
  e.wait = !opts.no_wait;
  return e;
}

int execute(const ApplyFlowOptions& opts, const ApplyOptions& engine_opts, ApplyOutput& output,
            std::ostream& out) {
  install_stop_signals();  // from here on a signal ends every wait, the refresh's included
  auto api = make_api();
  api->stop_waits_on(&g_stop);
  const PolicySet policies = load_policies_or_throw(opts.policy);  // a mistake in them costs nothing
  std::optional<PlanDocument> saved;
  std::string plan_again;
  ManifestOptions manifests = opts.manifests;
  if (!opts.plan_file.empty()) {
    saved = read_plan_file(opts.plan_file);
    plan_again = plan_again_command(*saved, opts.plan_file);
    refuse_conflicting_plan(*saved, opts.plan_file, plan_again);
    manifests = ManifestOptions{};
    manifests.files = saved->manifest_paths;
  }
  const Manifest manifest = load_manifests_or_throw(manifests);
  auto store = open_state_store(opts.state);
  ApplyOptions engine = engine_opts;
  if (!opts.no_wait) engine.connectable = connectable_options(opts.wait_connectable, manifest);
  engine.sql = &libpq_sql();
  const ApplyRequest request{.manifest = manifest,
                             .store = *store,
                             .api = *api->client,
                             .clock = api->clock,
                             .env = process_env(),
                             .lock_timeout = lock_timeout(opts.state),
                             .lock_wait = lock_wait_on_stderr(),
                             .settings = planning_settings(opts.planning, engine_opts.settle_window),
                             .saved = saved ? &*saved : nullptr,
                             .saved_from = opts.plan_file,
                             .plan_again = plan_again,
                             .auto_approve = opts.auto_approve,
                             .engine = engine,
                             .policies = &policies};
  const ApplyOutcome done = apply_operation(request, output, [&] { return confirmed(opts, out); });
  switch (done.end) {
    case ApplyOutcome::End::Conflicts: return 1;
    case ApplyOutcome::End::NothingToDo: return 0;
    case ApplyOutcome::End::Cancelled: return g_stop ? 130 : 1;  // Ctrl-C at the question ends the run as a signal does anywhere else
    case ApplyOutcome::End::Applied: break;
  }
  const int exit_code = done.result.interrupted ? 130 : done.result.failures.empty() ? 0 : 1;
  output.result(done.plan, done.state, done.result, exit_code);
  return exit_code;
}

// Prints the report before the question.
class RefreshOutput : public RefreshReporter {
 public:
  RefreshOutput(std::ostream& out, const Terminal& term) : out_(out), term_(term) {}
  void report(const RefreshReport& report) override { out_ << render_refresh_text(report, term_) << std::flush; }

 private:
  std::ostream& out_;
  const Terminal& term_;
};

// `apply --refresh-only`: lock, read, report, ask when anything changed, record; no call but reads.
int apply_refresh_only_command(const ApplyFlowOptions& opts, std::ostream& out) {
  if (!opts.plan_file.empty())
    throw UsageError("--refresh-only reads what exists now and records it; a plan file holds a plan of the "
                     "manifests. Run `dbform apply --refresh-only` without " + opts.plan_file);
  const Terminal term = detect_terminal();
  check_confirmation_possible(opts, term);
  install_stop_signals();
  auto api = make_api();
  api->stop_waits_on(&g_stop);
  const Manifest manifest = load_manifests_or_throw(opts.manifests);  // for the projects' keys
  auto store = open_state_store(opts.state);
  RefreshOutput reporter(out, term);
  const ApplyOptions engine = engine_options(opts.wait, &g_stop);  // --parallelism, --settle-window, checked
  const RefreshOnlyOutcome done = apply_refresh_only(
      {.manifest = manifest,
       .store = *store,
       .api = *api->client,
       .clock = api->clock,
       .env = process_env(),
       .targets = opts.planning.targets,
       .parallelism = engine.parallelism,
       .settle_window = engine.settle_window,
       .catalogs = &libpq_sql()},
      {.lock_timeout = lock_timeout(opts.state), .lock_wait = lock_wait_on_stderr(), .env = process_env(),
       .auto_approve = opts.auto_approve},
      reporter, [&] {
        out << "\nDo you want to record what changed outside dbform in the state? Nothing else is changed or "
               "called. Only 'yes' will be accepted.\n  Enter a value: " << std::flush;
        std::string answer;
        std::getline(std::cin, answer);
        return answer == "yes";
      });
  switch (done.end) {
    case RefreshOnlyOutcome::End::NoState:
      out << no_state_note(*store) << " Nothing is recorded, so there is nothing to refresh.\n";
      return 0;
    case RefreshOnlyOutcome::End::Cancelled:
      out << "\nApply cancelled: nothing was recorded.\n";
      return g_stop ? 130 : 1;
    case RefreshOnlyOutcome::End::Reported:
    case RefreshOnlyOutcome::End::Recorded:
      break;
  }
  if (!opts.planning.targets.empty() && !done.report.has_changes()) {
    out << "\nNothing to record (a partial refresh does not record its time). No other call was made.\n";
    return 0;
  }
  out << "\nRecorded in " << store->describe() << " (serial " << done.state.serial << ")";
  if (done.state.refreshed && opts.planning.targets.empty())
    out << ": refreshed at " << done.state.refreshed->at << " by " << done.state.refreshed->by;
  out << ". No other call was made.\n";
  return 0;
}

}  // namespace

int run_apply(const ApplyFlowOptions& opts, std::ostream& out) {
  if (opts.planning.refresh_only) return apply_refresh_only_command(opts, out);
  const ApplyOptions engine_opts = flow_engine_options(opts);
  const Terminal term = detect_terminal();
  auto output = make_apply_output(opts.json, term, out);
  try {
    check_confirmation_possible(opts, term);
    return execute(opts, engine_opts, *output, out);
  } catch (const Error& e) {
    output->error(e.what());
    throw;
  }
}

void add_apply_command(CLI::App& app, int& exit_code) {
  auto opts = std::make_shared<ApplyFlowOptions>();
  auto* cmd = add_command(app, "apply", "make what the manifests (or a saved plan) declare: create, change, with --prune delete, and wait until each is done",
                          {.text = R"(Plans as `dbform plan` does (refreshing first unless `--no-refresh`), prints the plan and, on a terminal, asks for `yes`; then makes it so through the API and watches each change until it is done: creates until READY (or `active`), resizes, HA, pooler, VPC attachments, pauses and renames until the service shows them, deletes (`--prune`) until gone. Ids, endpoints and initial passwords are recorded in the state as each answer arrives. Without a terminal it needs `--auto-approve` or a plan file, and refuses before reading anything otherwise.

It never creates a database twice. Each create's intent is journaled before it is sent; a create whose answer is lost (a dropped connection, a gateway's 504, a kill) is looked up by name over `--settle-window` and adopted if found, and sent again only when nothing of that name appeared. Before the first create in a project, its key is checked and its names are listed: a name that exists unrecorded fails that resource, never gets a second database.

Independent operations run in parallel up to `--parallelism`; what needs another waits for it (a service for its VPC, a fork for its source, a read replica set for its service, a delete of a VPC for the deletes of what is in it); a failure fails what depends on it and nothing else, and every failure is listed at the end. The first SIGINT, SIGTERM or SIGHUP starts nothing new, records the calls in flight as their answers arrive and exits 130; run apply again to continue. `--no-wait` records the creates and leaves what needs a READY resource for the next apply.

`dbform apply PLANFILE` applies a plan saved by `dbform plan --out`, exactly as saved and without asking: it is refused when the state's lineage or serial, the manifests, or the values their `${NAME}` read changed since, and with `-f`, `--target`, `--prune`, `--max-deletes` or `--no-refresh` beside it (the plan carries them).

`dbform apply --refresh-only` (Terraform's `-refresh-only`) takes the lock, reads every resource the state records, shows what changed outside dbform since the state was written (as `dbform plan --refresh-only` does), asks `yes` when anything did (unless `--auto-approve`), and records it: the settings, statuses and endpoints the API shows, the resources deleted outside dbform, and the time of the refresh, which a plan from the state alone (`--no-refresh`) shows. It makes no call but those reads, and nothing the manifests declare is applied (the next `dbform plan` shows the drift to put back). A refresh that found nothing records only its time, and a plan saved before it stays good. It refuses a plan file, `--no-refresh`, `--prune`, `--max-deletes`, `--policy`, `--json` and the wait flags; `--target` reads and records only those records (and not the time); so does a state holding creates whose outcome is unknown (records without an id, which a plain `dbform apply` looks up by name).

With `--policy FILE` (or `DBFORM_POLICY`) the plan is checked against those rules as `dbform plan` checks it (see dbform-policy(1)): a mandatory violation stops the apply before anything is sent. A saved plan records the digest of the rules it was checked against, and is refused as stale under other rules, under none when it had some, or under some when it had none; it is checked again (a waiver may have expired since).

## Exit status

0 when everything planned is done, 1 on an error, a conflict (a mandatory policy violation included) or a failed resource, 130 when stopped by a signal.)",
                           .environment = kApiEnvironment,
                           .examples = {{"Apply the manifests of a directory, asking first", "dbform apply -f manifests/"},
                                        {"In a pipeline: the plan reviewed in the pull request", "dbform apply --auto-approve --json tfplan > events.jsonl"},
                                        {"Delete what is no longer declared", "dbform apply --prune"},
                                        {"Record the creates and return at once", "dbform apply --auto-approve --no-wait"},
                                        {"Record what changed outside dbform, and nothing else (a scheduled job)", "dbform apply --refresh-only --auto-approve"}}});
  add_manifest_and_state_options(*cmd, opts->manifests, opts->state, true);
  cmd->add_option("planfile", opts->plan_file,
                  "a plan saved by `dbform plan --out`: applied exactly as saved, without asking; refused when the "
                  "state or the manifests changed since");
  cmd->add_flag("--auto-approve", opts->auto_approve, "apply without asking (required without a terminal)");
  cmd->add_flag("--json", opts->json, "one JSON object per line for each event on stdout, and nothing else");
  add_wait_options(*cmd, opts->wait);
  cmd->add_flag("--no-wait", opts->no_wait, "record the creates and return without waiting for READY");
  cmd->add_flag("--wait-connectable", opts->wait_connectable,
                "after READY, wait until each new, resumed, renamed or password-changed service accepts a connection "
                "as tsdbadmin with the recorded password (within --wait-timeout)");
  add_planning_options(*cmd, opts->planning);
  add_policy_options(*cmd, opts->policy);
  cmd->callback([opts, cmd, &exit_code] {
    opts->planning_flags_given.clear();
    for (const char* flag : {"--file", "--target", "--prune", "--max-deletes", "--no-refresh"})
      if (cmd->count(flag) > 0) opts->planning_flags_given.push_back(flag == std::string("--file") ? "-f" : flag);
    check_refresh_only_flags(*cmd, opts->planning, {"--json", "--no-wait", "--wait-connectable", "--wait-timeout"});
    exit_code = run_apply(*opts, std::cout);
  });
}

}  // namespace dbform::cli
