// `dbform apply [PLANFILE]`: plan (or check a saved plan), confirm, preflight, create, watch, record.
#include <unistd.h>

#include <atomic>
#include <filesystem>
#include <iostream>

#include "cli/apply_flow.h"
#include "cli/commands.h"
#include "cli/connectable.h"
#include "cli/manual.h"
#include "cli/recovery.h"
#include "cli/refresh.h"
#include "cli/render_apply.h"
#include "cli/signals.h"
#include "cli/suggest.h"
#include "state/codec.h"
#include "engine/apply.h"
#include "plan/differ.h"
#include "plan/plan_file.h"
#include "util/atomic_file.h"
#include "util/env.h"
#include "util/text.h"

namespace dbform::cli {

namespace fs = std::filesystem;

namespace {

// Set by the first SIGINT, SIGTERM or SIGHUP once execute() installed the handlers (cli/signals.h).
std::atomic<bool>& g_stop = stop_flag();

// Known before anything is read or sent: with no terminal to ask on, only --auto-approve or a
// saved plan may apply.
void check_confirmation_possible(const ApplyFlowOptions& opts, const Terminal& term) {
  if (!opts.auto_approve && opts.plan_file.empty() && !term.stdin_tty)
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
ApplyOptions engine_options(const ApplyFlowOptions& opts) {
  if (opts.parallelism < 1 || opts.parallelism > kMaxParallelism)
    throw UsageError("--parallelism must be from 1 to " + std::to_string(kMaxParallelism) + ", not " +
                     std::to_string(opts.parallelism) + " (each is a thread and a connection; the API limits "
                     "requests per key, so more than a few dozen only meet 429s)");
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
  ApplyOptions e;
  e.parallelism = opts.parallelism;
  e.wait_timeout = parse_duration_flag("--wait-timeout", opts.wait_timeout);
  if (!opts.poll_interval.empty())
    e.polls.interval = e.polls.max = parse_duration_flag("--poll-interval", opts.poll_interval);
  e.wait = !opts.no_wait;
  e.settle_window = parse_duration_flag("--settle-window", opts.settle_window);
  e.stop = &g_stop;
  return e;
}

// What the engine needs: the manifests (for the keys), the locked state and the plan to execute.
struct Prepared {
  Manifest manifest;
  std::unique_ptr<StateStore> store;
  std::unique_ptr<StateLock> lock;
  State state;
  bool state_missing = false;  // no state yet: everything is new
  Plan plan;
  std::optional<std::vector<PreflightPass>> preflight;  // made by the refresh
  // What the refresh read: recorded (with the plan's imports) once the apply goes ahead, never for
  // a plan with conflicts or one that is not confirmed.
  std::vector<std::string> refreshed;
  Imports imports;
  std::string saved_from;  // the plan file, or "" for a plan made now
};

Prepared plan_now(const ApplyFlowOptions& opts, ApiSetup& api) {
  Prepared p;
  p.manifest = load_manifests_or_throw(opts.manifests);
  p.store = open_state_store(opts.state);
  p.lock = p.store->lock("apply", lock_timeout(opts.state));
  auto stored = p.store->read();
  p.state_missing = !stored;
  p.state = stored ? std::move(*stored) : new_state();
  RefreshedPlan refreshed =
      plan_refreshed(p.manifest, p.state, planning_settings(opts.planning, parse_duration_flag("--settle-window", opts.settle_window)),
                     *api.client, api.clock, opts.parallelism);
  p.refreshed = std::move(refreshed.changed);
  p.plan = std::move(refreshed.plan);
  p.preflight = std::move(refreshed.preflight);
  p.imports = std::move(refreshed.imports);
  for (const auto& warning : refreshed.warnings) std::cerr << scrub(warning.str()) << "\n";
  return p;
}

// The saved plan, once the manifests it names, the (locked) state and, for a refreshed plan, what
// a refresh reads now are proved to give the same actions; refused otherwise, before anything is
// sent or written. What that refresh read is recorded, as an apply without a plan file records its
// own (the plan that made the file wrote nothing).
Prepared load_saved_plan(const ApplyFlowOptions& opts, ApiSetup& api) {
  const std::string& file = opts.plan_file;
  PlanDocument saved = read_plan_file(file);
  limit_deletes(saved.plan);  // a plan file edited to delete more than its limit has conflicts now
  if (saved.plan.summary.conflict)
    throw UsageError(file + " has " + std::to_string(saved.plan.summary.conflict) +
                     " conflict(s), so nothing in it can be applied. Resolve them and run `" +
                     plan_again_command(saved, file) + "` again");
  Prepared p;
  ManifestOptions manifests;
  manifests.files = saved.manifest_paths;
  p.manifest = load_manifests_or_throw(manifests);
  p.store = open_state_store(opts.state);
  p.lock = p.store->lock("apply", lock_timeout(opts.state));
  auto stored = p.store->read();
  p.state = stored ? std::move(*stored) : new_state();  // `stored` stays engaged, its state moved out
  PlanSettings as_saved;
  as_saved.refresh = saved.plan.refreshed;
  as_saved.prune = saved.plan.prune;
  as_saved.max_deletes = saved.plan.max_deletes;
  as_saved.targets = saved.plan.targets;
  as_saved.settle_window = parse_duration_flag("--settle-window", opts.settle_window);
  const State as_stored = p.state;
  auto problems = saved_plan_problems(saved, p.manifest, stored ? &as_stored : nullptr, nullptr);
  RefreshedPlan now;
  if (problems.empty()) {
    now = plan_refreshed(p.manifest, p.state, as_saved, *api.client, api.clock, opts.parallelism);
    problems = saved_plan_problems(saved, p.manifest, stored ? &as_stored : nullptr, &now.plan);
  }
  if (!problems.empty())
    throw UsageError("the saved plan " + file + " is stale, nothing was changed:\n  " + join(problems, "\n  ") +
                     "\nRun `" + plan_again_command(saved, file) + "` again, review the new plan and apply that one");
  p.refreshed = std::move(now.changed);
  p.preflight = std::move(now.preflight);
  p.imports = std::move(now.imports);
  p.plan = std::move(saved.plan);
  p.saved_from = file;
  return p;
}

int execute(const ApplyFlowOptions& opts, const ApplyOptions& engine_opts, ApplyOutput& output,
            std::ostream& out) {
  install_stop_signals();  // from here on a signal ends every wait, the refresh's included
  auto api = make_api();
  api->client->stop_waits_on(&g_stop);
  Prepared p = opts.plan_file.empty() ? plan_now(opts, *api) : load_saved_plan(opts, *api);
  if (p.state_missing) output.note(no_state_note(*p.store));
  output.plan(p.plan, p.saved_from);
  if (p.plan.summary.conflict) {
    output.conflicts(p.plan);
    return 1;
  }
  if (!p.plan.summary.has_changes()) {
    record_refresh(p.refreshed, p.state, *p.store);
    output.nothing_to_do();
    return 0;
  }
  if (p.saved_from.empty() && !confirmed(opts, out)) {  // a saved plan was reviewed when it was made
    output.cancelled();
    return g_stop ? 130 : 1;  // Ctrl-C at the question ends the run as a signal does anywhere else
  }
  record_refresh(p.refreshed, p.state, *p.store);
  record_imports(p.plan, p.imports, p.state);  // saved with the engine's first write
  auto keys = resolve_keys(p.manifest, projects_with_work(p.plan), process_env());
  EventSink& events = output.start(p.plan);
  ApplyOptions run_opts = engine_opts;
  // The refresh's lists stand for the engine's own check of names only when nothing waited between
  // them: while a person reads the plan, an apply of another state can create the same names.
  run_opts.names_checked = p.preflight.has_value() && (opts.auto_approve || !p.saved_from.empty());
  if (!opts.no_wait) run_opts.connectable = connectable_options(opts.wait_connectable, p.manifest);
  ApplyEngine engine(*api->client, *p.store, api->clock, events, run_opts);
  if (p.preflight) engine.report_preflight(*p.preflight);
  else engine.preflight(p.plan, keys);
  ApplyResult result = engine.apply(p.plan, keys, p.state);
  if (!result.save_error.empty()) throw Error(save_failure_message(result, p.state, *p.store));
  const int exit_code = result.interrupted ? 130 : result.failures.empty() ? 0 : 1;
  output.result(p.plan, p.state, result, exit_code);
  return exit_code;
}

}  // namespace

int run_apply(const ApplyFlowOptions& opts, std::ostream& out) {
  const ApplyOptions engine_opts = engine_options(opts);
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
  auto* cmd = app.add_subcommand("apply", "make what the manifests (or a saved plan) declare: create, change, with --prune delete, and wait until each is done");
  set_manual(*cmd, {.text = R"(Plans as `dbform plan` does (refreshing first unless `--no-refresh`), prints the plan and, on a terminal, asks for `yes`; then makes it so through the API and watches each change until it is done: creates until READY (or `active`), resizes, HA, pooler, VPC attachments, pauses and renames until the service shows them, deletes (`--prune`) until gone. Ids, endpoints and initial passwords are recorded in the state as each answer arrives. Without a terminal it needs `--auto-approve` or a plan file, and refuses before reading anything otherwise.

It never creates a database twice. Each create's intent is journaled before it is sent; a create whose answer is lost (a dropped connection, a gateway's 504, a kill) is looked up by name over `--settle-window` and adopted if found, and sent again only when nothing of that name appeared. Before the first create in a project, its key is checked and its names are listed: a name that exists unrecorded fails that resource, never gets a second database.

Independent operations run in parallel up to `--parallelism`; what needs another waits for it (a service for its VPC, a fork for its source, a read replica set for its service, a delete of a VPC for the deletes of what is in it); a failure fails what depends on it and nothing else, and every failure is listed at the end. The first SIGINT, SIGTERM or SIGHUP starts nothing new, records the calls in flight as their answers arrive and exits 130; run apply again to continue. `--no-wait` records the creates and leaves what needs a READY resource for the next apply.

`dbform apply PLANFILE` applies a plan saved by `dbform plan --out`, exactly as saved and without asking: it is refused when the state's lineage or serial, the manifests, or their `${VAR}` values changed since, and with `-f`, `--target`, `--prune`, `--max-deletes` or `--no-refresh` beside it (the plan carries them).

## Exit status

0 when everything planned is done, 1 on an error, a conflict or a failed resource, 130 when stopped by a signal.)",
                    .environment = kApiEnvironment,
                    .examples = {{"Apply the manifests of a directory, asking first", "dbform apply -f manifests/"},
                                 {"In a pipeline: the plan reviewed in the pull request", "dbform apply --auto-approve --json tfplan > events.jsonl"},
                                 {"Delete what is no longer declared", "dbform apply --prune"},
                                 {"Record the creates and return at once", "dbform apply --auto-approve --no-wait"}}});
  add_manifest_options(*cmd, opts->manifests);
  add_state_options(*cmd, opts->state, true);
  cmd->add_option("planfile", opts->plan_file,
                  "a plan saved by `dbform plan --out`: applied exactly as saved, without asking; refused when the "
                  "state or the manifests changed since");
  cmd->add_flag("--auto-approve", opts->auto_approve, "apply without asking (required without a terminal)");
  cmd->add_flag("--json", opts->json, "one JSON object per line for each event on stdout, and nothing else");
  cmd->add_option("--parallelism", opts->parallelism, "API calls at once (default 10, at most 64)");
  cmd->add_option("--wait-timeout", opts->wait_timeout, "how long each service may take to be READY (default 30m)");
  cmd->add_option("--poll-interval", opts->poll_interval, "pause between status checks (default: 1s for the first minute of a wait, then slowly up to 10s)");
  cmd->add_flag("--no-wait", opts->no_wait, "record the creates and return without waiting for READY");
  cmd->add_flag("--wait-connectable", opts->wait_connectable,
                "after READY, wait until each new, resumed, renamed or password-changed service accepts a connection "
                "as tsdbadmin with the recorded password (within --wait-timeout)");
  add_planning_options(*cmd, opts->planning);
  cmd->add_option("--settle-window", opts->settle_window,
                  "after a create whose outcome is unknown, how long lookups by name go on before it may be sent "
                  "again (default 30s)");
  cmd->callback([opts, cmd, &exit_code] {
    opts->planning_flags_given.clear();
    for (const char* flag : {"--file", "--target", "--prune", "--max-deletes", "--no-refresh"})
      if (cmd->count(flag) > 0) opts->planning_flags_given.push_back(flag == std::string("--file") ? "-f" : flag);
    exit_code = run_apply(*opts, std::cout);
  });
}

}  // namespace dbform::cli
