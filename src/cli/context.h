#pragma once
// What the commands share: loading manifests, opening the state store, building the API client,
// and knowing whether we talk to a terminal.
#include <atomic>
#include <memory>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "manifest/model.h"
#include "ops/connections.h"
#include "ops/planning.h"
#include "plan/model.h"
#include "plan/run.h"
#include "policy/rules.h"
#include "state/store.h"
#include "util/clock.h"

namespace dbform::cli {

struct ManifestOptions {
  std::vector<std::string> files{"."};
};
// The commands `dbform help` lists under `app`: hidden ones (the man page generator) left out.
std::vector<const CLI::App*> visible_commands(const CLI::App& app);
// A command's words after `dbform`: "state push"; "" for dbform itself.
std::string command_path(const CLI::App& command);

void add_manifest_options(CLI::App& cmd, ManifestOptions& opts);
// A repeatable option takes one value per use, as -f does (`--policy a.yaml --policy b.yaml`): the
// word after its value is the next argument, never a second value (`apply --policy p.yaml
// release.plan` applies release.plan). CLI11 lets a vector option go on eating words unless told.
CLI::Option* one_value_per_use(CLI::Option* option);

struct StateOptions {
  std::string state;      // "" -> $DBFORM_STATE -> dbform.state.json; a file or a postgres:// URL
  std::string workspace;  // "" -> $DBFORM_WORKSPACE -> default; one of the states of a database
  std::string lock_timeout = "0s";
};
void add_state_options(CLI::App& cmd, StateOptions& opts, bool with_lock_timeout);
// Both, for the commands that read the manifests and the state: -f, --state, --workspace and,
// `with_lock_timeout` (those that take the lock), --lock-timeout.
void add_manifest_and_state_options(CLI::App& cmd, ManifestOptions& manifests, StateOptions& state,
                                    bool with_lock_timeout);

// How apply and preview run the engine: calls at once, and how they wait.
struct WaitOptions {
  int parallelism = 10;
  std::string wait_timeout = "30m";
  std::string poll_interval;  // "" = the adaptive default of PollSchedule
  std::string settle_window = "30s";
};
void add_wait_options(CLI::App& cmd, WaitOptions& opts);
// The engine's options from them, each checked (UsageError naming the flag); stopped by `stop`.
ApplyOptions engine_options(const WaitOptions& opts, const std::atomic<bool>* stop);

// What plan and apply plan with: the flags they share.
struct PlanningOptions {
  bool no_refresh = false;  // plan from the state alone, with no API key
  bool prune = false;       // unprotected orphans are deletes
  int max_deletes = kDefaultMaxDeletes;
  std::vector<std::string> targets;
  bool refresh_only = false;  // only what changed outside dbform (ops/refresh_only.h)
};
// --no-refresh (and --refresh, the default), --refresh-only, --prune, --max-deletes N, --target ADDRESS...
void add_planning_options(CLI::App& cmd, PlanningOptions& opts);
// With --refresh-only, the flags of `cmd` that plan the manifests' changes are refused (UsageError
// naming them), as Terraform refuses -replace and -destroy beside -refresh-only; `others`: more
// such flags of the command ("--out").
void check_refresh_only_flags(const CLI::App& cmd, const PlanningOptions& opts, const std::vector<std::string>& others);
// The settings of the command line's planning options.
PlanSettings planning_settings(const PlanningOptions& opts, Duration settle_window = std::chrono::seconds(30));

// The rule files every plan is checked against: --policy FILE (repeatable), else DBFORM_POLICY (a
// ':'-separated list). The flag replaces the variable, as -f replaces the working directory.
struct PolicyOptions {
  std::vector<std::string> files;
};
void add_policy_options(CLI::App& cmd, PolicyOptions& opts);
// Loads and validates the rule files; prints every diagnostic to stderr and throws UsageError if
// any is an error. No file: an empty set (nothing is checked).
PolicySet load_policies_or_throw(const PolicyOptions& opts);

// Loads and validates; prints every diagnostic to stderr and throws UsageError if any is an error.
// The warnings are also handed to `warnings` when given (the JSON and markdown plans carry them).
Manifest load_manifests_or_throw(const ManifestOptions& opts, std::vector<Diagnostic>* warnings = nullptr);

// For commands that only need the manifests' key variables (and declarations, when there are any):
// the manifests named by -f when it was given, else those in the working directory, else none.
Manifest manifests_if_any(const ManifestOptions& opts, bool given);

// The store named by --state/--workspace (or their variables), reading and writing with the key of
// DBFORM_STATE_PASSPHRASE or DBFORM_STATE_KEY_FILE when one is set (sealed), else plain.
std::unique_ptr<StateStore> open_state_store(const StateOptions& opts);
// The key a passphrase variable or a key file variable gives (UsageError when both are set, or the
// file is missing or not 32 bytes), or nullopt when neither is set.
std::optional<StateKey> state_key(const std::string& passphrase_variable, const std::string& key_file_variable);
Duration lock_timeout(const StateOptions& opts);
// Said on stderr when a run waits for another's lock (--lock-timeout): who holds it, how long.
LockWaitNotice lock_wait_on_stderr();
// The stored state, or a new empty one when none exists yet.
State read_state(StateStore& store);
// The same for the commands that repair a state two of whose records name one resource (`state
// list | show | rm | pull`, a push over it): it is taken as read, with the problem on stderr.
std::optional<State> read_state_to_repair(StateStore& store);
// For the commands that read what is recorded (state, output): as read_state (or, `to_repair`, as
// read_state_to_repair), and an empty state when there is none, unless the store has others (a
// workspace name mistyped), which is a UsageError naming them.
State read_recorded_state(StateStore& store, bool to_repair);
// What the top of a plan says when there is no state yet: "No state at PATH: everything is new..."
std::string no_state_note(const StateStore& store);

// The API client as configured by DBFORM_API_URL and DBFORM_AUTH_SCHEME (ops/connections.h).
std::unique_ptr<ApiSetup> make_api();

// Parses a duration flag or throws UsageError naming the flag and, for "10 minutes" or "10min", the
// way to write it ("write 10m").
Duration parse_duration_flag(const std::string& flag, const std::string& value);

// The check of a bounded number flag, whose error says the bound in words (`bound`: "0 or more",
// "from 1 to 64") whatever was typed: CLI11's own range check prints an open limit as a 300-digit
// number, and a failed conversion ("abc", a number too large) says only "Could not convert".
// whole_number takes the integers from `lo` to `hi`; a flag whose range is checked later with a
// reason of its own (--parallelism) passes its type's limits and says the bound all the same.
CLI::Validator whole_number(long long lo, long long hi, const std::string& bound);
// A decimal number from `lo` to `hi` (--error-rate: a share).
CLI::Validator number_between(double lo, double hi, const std::string& bound);
// The unit dbform writes for a word a person may use for one ("minutes" -> "m"), or "".
std::string duration_unit_hint(const std::string& word);

struct Terminal {
  bool stdout_tty = false;
  bool stdin_tty = false;
  bool color = false;  // stdout is a terminal, NO_COLOR is unset and --no-color was not given
  bool live = false;   // stdout is a terminal that can redraw lines in place (TERM is not `dumb`)
  int width = 80;      // columns and rows of that terminal (80x24 when it does not say)
  int height = 24;
};
Terminal detect_terminal();

// `--no-color` on `cmd`; on the root app it is the global flag (`dbform --no-color plan`). Every
// registration sets the same switch, read by detect_terminal().
void add_no_color_flag(CLI::App& cmd);

// ANSI colour when enabled, plain text otherwise.
std::string paint(const Terminal& t, const char* code, const std::string& text);

}  // namespace dbform::cli
