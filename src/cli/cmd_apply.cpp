// `dbform apply`: plan, confirm, preflight, create, watch, record.
#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <iostream>

#include "cli/apply_flow.h"
#include "cli/commands.h"
#include "cli/recovery.h"
#include "cli/render_events.h"
#include "cli/render_plan.h"
#include "engine/apply.h"
#include "plan/differ.h"
#include "util/env.h"

namespace dbform::cli {

namespace {

std::atomic<bool> g_stop{false};

// First SIGINT/SIGTERM: start nothing new, record what is in flight, save, exit 130. Second: exit
// at once; the intent journal keeps even that safe.
void on_signal(int) {
  if (g_stop.exchange(true)) ::_exit(130);
}

void install_signal_handlers() {
  struct sigaction sa {};
  sa.sa_handler = on_signal;
  sigemptyset(&sa.sa_mask);
  sigaction(SIGINT, &sa, nullptr);
  sigaction(SIGTERM, &sa, nullptr);
}

bool confirmed(const ApplyFlowOptions& opts, const Terminal& term, std::ostream& out) {
  if (opts.auto_approve) return true;
  if (!term.stdin_tty)
    throw UsageError("refusing to apply without confirmation: there is no terminal to ask on. "
                     "Review the plan and pass --auto-approve");
  out << "\nDo you want to apply this plan? Only 'yes' will be accepted.\n  Enter a value: " << std::flush;
  std::string answer;
  std::getline(std::cin, answer);
  return answer == "yes";
}

void print_endpoints(const Plan& plan, const State& state, std::ostream& out) {
  bool header = false;
  for (const auto& a : plan.actions) {
    if (a.kind != ResourceKind::Service || a.action == Action::Orphan || a.action == Action::Conflict) continue;
    const ResourceRecord* r = state.find(a.address);
    if (!r || r->endpoint_host.empty()) continue;
    if (!header) out << "\nEndpoints (passwords: dbform output ADDRESS.password):\n";
    header = true;
    out << "  " << a.address << "  " << r->endpoint_host
        << (r->endpoint_port ? ":" + std::to_string(*r->endpoint_port) : "") << "  " << r->status << "\n";
  }
}

}  // namespace

int run_apply(const ApplyFlowOptions& opts, std::ostream& out) {
  if (opts.parallelism < 1) throw UsageError("--parallelism must be at least 1");
  ApplyOptions engine_opts;
  engine_opts.parallelism = opts.parallelism;
  engine_opts.wait_timeout = parse_duration_flag("--wait-timeout", opts.wait_timeout);
  engine_opts.polls.max = parse_duration_flag("--poll-interval", opts.poll_interval);
  engine_opts.polls.initial = std::min(engine_opts.polls.initial, engine_opts.polls.max);
  engine_opts.wait = !opts.no_wait;
  engine_opts.stop = &g_stop;
  const Terminal term = detect_terminal();

  Manifest manifest = load_manifests_or_throw(opts.manifests);
  auto store = open_state_store(opts.state);
  auto lock = store->lock("apply", lock_timeout(opts.state));
  State state = read_state(*store);
  Plan plan = make_plan(manifest, state);
  out << render_plan_text(plan, term);
  if (plan.summary.conflict) return 1;
  if (!plan.summary.has_changes()) return 0;
  if (!confirmed(opts, term, out)) {
    out << "Apply cancelled.\n";
    return 1;
  }
  auto keys = resolve_keys(manifest, projects_with_work(plan), process_env());
  auto api = make_api();
  LineEventRenderer renderer(out, term);
  ApplyEngine engine(*api->client, *store, api->clock, renderer, engine_opts);
  engine.preflight(plan, keys);
  install_signal_handlers();
  out << "\n";
  ApplyResult result = engine.apply(plan, keys, state);
  if (result.unsaved_changes) {
    std::cerr << "Error: " << save_recovery_file(state, *store, result.save_error) << "\n";
    return 1;
  }
  print_endpoints(plan, state, out);
  out << "\nApply " << (result.failures.empty() && !result.interrupted ? "complete" : "finished with problems")
      << ": " << result.created << " created, " << result.adopted << " adopted, " << result.ready << " ready, "
      << result.failures.size() << " failed.\n";
  if (result.interrupted) {
    out << "Stopped by a signal. Not finished (run apply again to continue; nothing is created twice):\n";
    for (const auto& a : result.pending) out << "  " << a << "\n";
  }
  if (!result.failures.empty()) {
    std::cerr << "Error: " << result.failures.size() << " resource(s) failed:\n";
    for (const auto& f : result.failures) std::cerr << "  " << f << "\n";
  }
  if (result.interrupted) return 130;
  return result.failures.empty() ? 0 : 1;
}

void add_apply_command(CLI::App& app, int& exit_code) {
  auto opts = std::make_shared<ApplyFlowOptions>();
  auto* cmd = app.add_subcommand("apply", "create what the manifests declare and wait until it is READY");
  add_manifest_options(*cmd, opts->manifests);
  add_state_options(*cmd, opts->state, true);
  cmd->add_flag("--auto-approve", opts->auto_approve, "apply without asking (required without a terminal)");
  cmd->add_option("--parallelism", opts->parallelism, "API calls at once (default 10)");
  cmd->add_option("--wait-timeout", opts->wait_timeout, "how long each service may take to be READY (default 30m)");
  cmd->add_option("--poll-interval", opts->poll_interval, "longest pause between status checks (default 10s)");
  cmd->add_flag("--no-wait", opts->no_wait, "record the creates and return without waiting for READY");
  cmd->callback([opts, &exit_code] { exit_code = run_apply(*opts, std::cout); });
}

}  // namespace dbform::cli
