#include "cli/context.h"

#include <filesystem>

#include <sys/ioctl.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <limits>
#include <iostream>


#include "ops/connections.h"
#include "ops/state_read.h"
#include "state/errors.h"
#include "manifest/loader.h"
#include "policy/loader.h"
#include "util/log.h"
#include "util/atomic_file.h"
#include "util/duration.h"
#include "util/env.h"
#include "util/runner_secrets.h"
#include "util/text.h"

namespace dbform::cli {

std::vector<const CLI::App*> visible_commands(const CLI::App& app) {
  return app.get_subcommands([](const CLI::App* s) { return !s->get_group().empty(); });
}

std::string command_path(const CLI::App& command) {
  std::string path;
  for (const CLI::App* a = &command; a && a->get_parent(); a = a->get_parent())
    path = a->get_name() + (path.empty() ? "" : " " + path);
  return path;
}

void add_manifest_options(CLI::App& cmd, ManifestOptions& opts) {
  // One path per -f, as in kubectl and Terraform: `-f a -f b`, and `apply -f dir plan.out` cannot
  // take the plan file for a manifest.
  one_value_per_use(cmd.add_option("-f,--file", opts.files, "manifest file or directory (repeat -f for more; default .)"));
}

CLI::Option* one_value_per_use(CLI::Option* option) {
  return option->expected(1)->allow_extra_args(false)->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
}

void add_state_options(CLI::App& cmd, StateOptions& opts, bool with_lock_timeout) {
  cmd.add_option("--state", opts.state,
                 "state file or postgres:// URL (default $DBFORM_STATE, else dbform.state.json)")
      ->each([](const std::string& where) { note_state_location(where); });  // its password is a secret
  cmd.add_option("--workspace", opts.workspace,
                 "which state of a PostgreSQL database (default $DBFORM_WORKSPACE, else default)");
  if (with_lock_timeout)
    cmd.add_option("--lock-timeout", opts.lock_timeout, "wait this long for another run's lock (default 0s)");
}

void add_manifest_and_state_options(CLI::App& cmd, ManifestOptions& manifests, StateOptions& state,
                                    bool with_lock_timeout) {
  add_manifest_options(cmd, manifests);
  add_state_options(cmd, state, with_lock_timeout);
}

void add_wait_options(CLI::App& cmd, WaitOptions& opts) {
  cmd.add_option("--parallelism", opts.parallelism, "API calls at once (default 10, at most 64)")
      ->check(whole_number(std::numeric_limits<int>::min(), std::numeric_limits<int>::max(),
                           "a whole number from 1 to " + std::to_string(kMaxParallelism)));
  cmd.add_option("--wait-timeout", opts.wait_timeout, "how long each service may take to be READY (default 30m)");
  cmd.add_option("--poll-interval", opts.poll_interval,
                 "pause between status checks (default: 1s for the first minute of a wait, then slowly up to 10s)");
  cmd.add_option("--settle-window", opts.settle_window,
                 "after a create whose outcome is unknown, how long lookups by name go on before it may be sent "
                 "again (default 30s)");
}

ApplyOptions engine_options(const WaitOptions& opts, const std::atomic<bool>* stop) {
  if (opts.parallelism < 1 || opts.parallelism > kMaxParallelism)
    throw UsageError("--parallelism must be from 1 to " + std::to_string(kMaxParallelism) + ", not " +
                     std::to_string(opts.parallelism) + " (each is a thread and a connection; the API limits "
                     "requests per key, so more than a few dozen only meet 429s)");
  ApplyOptions e;
  e.parallelism = opts.parallelism;
  e.wait_timeout = parse_duration_flag("--wait-timeout", opts.wait_timeout);
  if (!opts.poll_interval.empty())
    e.polls.interval = e.polls.max = parse_duration_flag("--poll-interval", opts.poll_interval);
  e.settle_window = parse_duration_flag("--settle-window", opts.settle_window);
  e.stop = stop;
  return e;
}

void add_planning_options(CLI::App& cmd, PlanningOptions& opts) {
  cmd.add_flag("--no-refresh", opts.no_refresh,
               "plan from the state alone, without listing what exists (needs no API key; apply still checks every "
               "name before it creates anything)");
  cmd.add_flag("--refresh", [&opts](std::int64_t) { opts.no_refresh = false; },
               "list what exists first and plan against it (the default)");
  cmd.add_flag("--refresh-only", opts.refresh_only,
               "only read what exists and report what changed outside dbform since the state was written (settings, "
               "statuses, endpoints, resources deleted); nothing the manifests declare is planned. With apply: record "
               "it, and call nothing else");
  cmd.add_flag("--prune",
               opts.prune, "delete what is recorded but no longer declared (never what is protected); without it "
                           "nothing is ever deleted");
  cmd.add_option("--max-deletes", opts.max_deletes,
                 "the most deletes (replacements included) one plan may make; beyond it none is made (default 3)")
      ->check(whole_number(0, std::numeric_limits<int>::max(), "a whole number, 0 or more"));
  one_value_per_use(cmd.add_option("--target", opts.targets,
                                   "only this resource (an address, KIND/NAME or NAME) and what it needs; repeat for more"));
}

void check_refresh_only_flags(const CLI::App& cmd, const PlanningOptions& opts, const std::vector<std::string>& others) {
  if (!opts.refresh_only) return;
  if (opts.no_refresh)
    throw UsageError("--refresh-only reads what exists and --no-refresh reads nothing: use one of them (a plan from "
                     "the state alone says when the state was last refreshed)");
  std::vector<std::string> given;
  for (const std::string flag : {"--prune", "--max-deletes", "--policy"})
    if (cmd.count(flag) > 0) given.push_back(flag);
  for (const auto& flag : others)
    if (cmd.count(flag) > 0) given.push_back(flag);
  if (!given.empty())
    throw UsageError("--refresh-only plans no change of the manifests, so " + join(given, ", ") +
                     (given.size() == 1 ? " has" : " have") +
                     " nothing to act on: drop " + (given.size() == 1 ? "it" : "them") +
                     ", or plan without --refresh-only. `dbform apply --refresh-only` records what the refresh "
                     "read; `dbform policy check` audits what the state records");
}

void add_policy_options(CLI::App& cmd, PolicyOptions& opts) {
  one_value_per_use(cmd.add_option("--policy", opts.files,
                                   "a rule file every plan must keep (repeat for more; default $DBFORM_POLICY, ':'-separated)"));
}

PolicySet load_policies_or_throw(const PolicyOptions& opts) {
  std::vector<std::string> files = opts.files;
  if (files.empty())
    if (auto value = checked_env(process_env(), "DBFORM_POLICY")) files = split_policy_path(*value);
  Diagnostics diags;
  PolicySet set = load_policy_files(files, diags);
  if (!diags.items().empty()) std::cerr << scrub(diags.str());
  if (diags.has_errors())
    throw UsageError(std::to_string(diags.error_count()) + " error(s) in the policy files; nothing was done");
  return set;
}

Manifest load_manifests_or_throw(const ManifestOptions& opts, std::vector<Diagnostic>* warnings) {
  Diagnostics diags;
  Manifest m = load_manifests(opts.files, process_env(), diags);
  if (!diags.items().empty()) std::cerr << scrub(diags.str());
  if (diags.has_errors())
    throw UsageError(std::to_string(diags.error_count()) + " error(s) in the manifests; nothing was done");
  if (warnings)
    for (const auto& d : diags.items())
      if (d.severity == Severity::Warning) warnings->push_back(d);
  return m;
}

Manifest manifests_if_any(const ManifestOptions& opts, bool given) {
  if (given) return load_manifests_or_throw(opts);
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator(".", ec)) {
    // Any manifest-named entry, readable or not: the loader says what is wrong with one it cannot read.
    if (is_manifest_file_name(entry.path().string())) return load_manifests_or_throw(opts);
  }
  return Manifest{};
}

std::optional<StateKey> state_key(const std::string& passphrase_variable, const std::string& key_file_variable) {
  auto env = process_env();
  auto passphrase = env(passphrase_variable);
  auto key_file = env(key_file_variable);
  if (passphrase && key_file)
    throw UsageError("both " + passphrase_variable + " and " + key_file_variable + " are set: set one of them");
  if (passphrase) return StateKey::passphrase(*passphrase, passphrase_variable);
  if (!key_file) return std::nullopt;
  auto bytes = read_file_if_exists(*key_file, Links::Follow, 4096);  // a key is 32 bytes: anything far larger is wrong
  if (!bytes) throw UsageError(key_file_variable + ": " + *key_file + ": no such file");
  try {
    return StateKey::raw(std::move(*bytes), key_file_variable + " (" + *key_file + ")");
  } catch (const StateError& e) {
    throw UsageError(e.what());
  }
}

namespace {

std::unique_ptr<StateStore> open_plain_state_store(const StateOptions& opts) {
  auto env = process_env();
  const std::string from = opts.state.empty() ? "DBFORM_STATE" : "--state";
  const std::string where = opts.state.empty() ? checked_env(env, from).value_or("dbform.state.json") : opts.state;
  if (has_control_character(where))
    throw UsageError(from + " holds a control character (a line break, a tab or an escape): refusing to use it");
  const std::string workspace = opts.workspace.empty() ? env("DBFORM_WORKSPACE").value_or("default") : opts.workspace;
  const std::string source = opts.workspace.empty() ? "DBFORM_WORKSPACE" : "--workspace";
  return state_store_at(where, from, workspace, source);
}

}  // namespace

std::unique_ptr<StateStore> open_state_store(const StateOptions& opts) {
  auto store = open_plain_state_store(opts);
  if (auto key = state_key("DBFORM_STATE_PASSPHRASE", "DBFORM_STATE_KEY_FILE"))
    store->set_cipher(std::make_shared<StateCipher>(std::move(key)));
  return store;
}

Duration lock_timeout(const StateOptions& opts) { return parse_duration_flag("--lock-timeout", opts.lock_timeout); }

LockWaitNotice lock_wait_on_stderr() {
  return [](const std::string& holder, Duration timeout) {
    std::cerr << "Waiting up to " << format_duration(timeout) << " for the state's lock, held by " << scrub(holder) << "\n";
  };
}

State read_state(StateStore& store) {
  auto state = store.read();
  return state ? std::move(*state) : new_state();
}

std::optional<State> read_state_to_repair(StateStore& store) {
  return read_to_repair(store, [](const std::string& why) { std::cerr << "warning: " << scrub(why) << "\n"; });
}

State read_recorded_state(StateStore& store, bool to_repair) {
  if (auto state = to_repair ? read_state_to_repair(store) : store.read()) return std::move(*state);
  if (const auto others = store.workspaces(); !others.empty())
    throw UsageError("there is no state in " + store.describe() + "; the workspaces with a state are " +
                     join(others, ", ") + ". Check --workspace and DBFORM_WORKSPACE");
  return new_state();
}

PlanSettings planning_settings(const PlanningOptions& opts, Duration settle_window) {
  return {!opts.no_refresh, opts.prune, settle_window, opts.max_deletes, opts.targets, &libpq_sql()};
}

std::string no_state_note(const StateStore& store) {
  return "No state at " + store.describe() +
         ": everything below is new. If the resources exist already, point --state (or DBFORM_STATE) at their "
         "state instead.";
}

std::unique_ptr<ApiSetup> make_api() { return api_setup(process_env()); }

std::string duration_unit_hint(const std::string& word) {
  static const std::vector<std::pair<std::vector<std::string>, std::string>> units = {
      {{"ms", "msec", "msecs", "millisecond", "milliseconds"}, "ms"},
      {{"s", "sec", "secs", "second", "seconds"}, "s"},
      {{"m", "min", "mins", "minute", "minutes"}, "m"},
      {{"h", "hr", "hrs", "hour", "hours"}, "h"}};
  std::string lower;
  for (unsigned char c : word) lower += static_cast<char>(std::tolower(c));
  for (const auto& [names, unit] : units)
    if (std::find(names.begin(), names.end(), lower) != names.end()) return unit;
  return "";
}

CLI::Validator whole_number(long long lo, long long hi, const std::string& bound) {
  return CLI::Validator(
      [lo, hi, bound](std::string& text) -> std::string {
        long long n = 0;
        const char* end = text.data() + text.size();
        const auto [at, error] = std::from_chars(text.data(), end, n);
        if (error == std::errc() && at == end && n >= lo && n <= hi) return "";
        return "expected " + bound + ", not `" + one_line_excerpt(text, 40) + "`";
      },
      "");
}

CLI::Validator number_between(double lo, double hi, const std::string& bound) {
  return CLI::Validator(
      [lo, hi, bound](std::string& text) -> std::string {
        double n = 0;
        const char* end = text.data() + text.size();
        const auto [at, error] = std::from_chars(text.data(), end, n);
        if (error == std::errc() && at == end && n >= lo && n <= hi) return "";  // NaN fails both
        return "expected " + bound + ", not `" + one_line_excerpt(text, 40) + "`";
      },
      "");
}

Duration parse_duration_flag(const std::string& flag, const std::string& value) {
  auto d = parse_duration(value);
  if (d && *d > kMaxDuration)
    throw UsageError(flag + ": `" + value + "` is longer than a duration may be (" + format_duration(kMaxDuration) + ")");
  if (d) return *d;
  // "10 minutes", "10min", "1.5h": say how to write it.
  std::string number, rest;
  size_t i = 0;
  while (i < value.size() && std::isdigit(static_cast<unsigned char>(value[i]))) number += value[i++];
  while (i < value.size() && value[i] == ' ') ++i;
  rest = value.substr(i);
  const std::string unit = duration_unit_hint(rest);
  std::string hint = !number.empty() && !unit.empty() ? "; write " + number + unit
                                                        : " (write a number and a unit: 30s, 10m, 1h30m, 500ms)";
  throw UsageError(flag + ": `" + value + "` is not a duration" + hint);
}

namespace {
bool g_no_color = false;  // set while parsing the command line, before any command runs
}  // namespace

void add_no_color_flag(CLI::App& cmd) {
  if (!cmd.get_option_no_throw("--no-color"))
    cmd.add_flag("--no-color", g_no_color, "no colour even on a terminal (also: NO_COLOR set to anything)");
}

Terminal detect_terminal() {
  Terminal t;
  t.stdout_tty = ::isatty(STDOUT_FILENO);
  t.stdin_tty = ::isatty(STDIN_FILENO);
  t.color = t.stdout_tty && !process_env()("NO_COLOR") && !g_no_color;
  t.live = t.stdout_tty && process_env()("TERM").value_or("") != "dumb";
  struct winsize ws {};
  if (t.stdout_tty && ::ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_col > 0 && ws.ws_row > 0) {
    t.width = ws.ws_col;
    t.height = ws.ws_row;
  }
  return t;
}

std::string paint(const Terminal& t, const char* code, const std::string& text) {
  if (!t.color) return text;
  return std::string("\033[") + code + "m" + text + "\033[0m";
}

}  // namespace dbform::cli
