// `dbform preview up NAME | down NAME | list | sweep`: a database per pull request (docs/previews.md).
// Flags are parsed here and the report rendered; the flow (lock, guards, engine, passwords,
// migrations) is ops/preview.h's.
#include <algorithm>
#include <iostream>
#include <limits>
#include <set>

#include "cli/commands.h"
#include "cli/context.h"
#include "cli/manual.h"
#include "ops/preview.h"
#include "ops/sealed.h"
#include "cli/render_events.h"
#include "cli/render_policy.h"
#include "cli/render_preview.h"
#include "cli/render_schema.h"
#include "cli/signals.h"
#include "util/duration.h"
#include "util/env.h"
#include "util/escape.h"
#include "util/json_limits.h"
#include "util/text.h"

namespace dbform::cli {

namespace {

struct PreviewOptions {
  ManifestOptions manifests;
  StateOptions state;
  std::string format = "text";
  std::string project;  // "" = every project (up: every project with a `previews:` block)
  std::string name;
  bool reset = false;
  WaitOptions wait;
  std::vector<std::string> keep;
  int max_deletes = kDefaultMaxDeletes;
  PolicyOptions policy;  // up: the rules of kind `preview` its forks must keep
  std::string migration_timeout = "5m";  // up: the longest one migration statement may run
  bool detailed_exitcode = false;
};

// What a run left undone is said as it comes; a stop once, at the end. The exit code.
int exit_code_of(bool interrupted, bool failed) {
  if (interrupted) std::cerr << "stopped by a signal: run the same command again to finish\n";
  return interrupted ? 130 : failed ? 1 : 0;
}

// The reporter of up, down and sweep: progress and failures on stderr (`failure_word`: "error", or
// "warning" for a sweep, which makes progress rather than refusing).
class PreviewProgress : public PreviewReporter {
 public:
  explicit PreviewProgress(const char* failure_word) : failure_word_(failure_word) {}
  void advisory(const PolicyViolation& v) override {
    std::cerr << "warning: [advisory] " << shown_text(v.rule) << ": " << shown_text(v.address) << " "
              << shown_text(violation_text(v)) << (v.message.empty() ? "" : " (" + shown_text(v.message) + ")") << "\n";
  }
  EventSink& events() override { return events_; }
  void failed(const std::string& what) override { std::cerr << failure_word_ << ": " << scrub(what) << "\n"; }
  void applying(const std::string&, const std::string& fork, const MigrationFile& file) override {
    std::cerr << shown_text(fork) << ": applying " << shown_text(file.path) << "\n";
  }

 private:
  const char* failure_word_;
  LineEventRenderer events_{std::cerr, Terminal{}};
};

// The store, its lock, the API (made on first use; its waits end on a stop signal) and the engine's
// options that up, down and sweep share.
struct PreviewSession {
  PreviewSession(const PreviewOptions& opts, const char* operation)
      : engine(engine_options(opts.wait, &stop_flag())) {
    install_stop_signals();
    store = open_state_store(opts.state);
    context.emplace(PreviewContext{
        StateAccess{*store, operation, lock_timeout(opts.state), lock_wait_on_stderr(), process_env()},
        [this]() -> ApiClient& {
          if (!api) {
            api = make_api();
            api->stop_waits_on(&stop_flag());
          }
          return *api->client;
        },
        clock, engine});
  }
  ApplyOptions engine;
  std::unique_ptr<StateStore> store;
  std::unique_ptr<ApiSetup> api;
  SystemClock clock;
  std::optional<PreviewContext> context;
};

void print_preview(const PreviewOptions& opts, const RecordedPreview& p, WallTime now, const SchemaReport& schema) {
  if (opts.format == "json") {
    nlohmann::json j = preview_json(p, now);
    if (schema.migrations) j["migrations"] = migrations_json(*schema.migrations);
    std::cout << dump_json(j, 2) << "\n";
  } else if (opts.format == "markdown") {
    std::cout << render_preview_markdown(p, now);
    if (schema.migrations) std::cout << render_migrations_markdown(*schema.migrations);
    if (schema.diff) std::cout << render_diff_markdown(*schema.diff);
  } else if (opts.format == "env") {
    std::cout << render_preview_env(p);
  } else {
    std::cout << render_preview_text(p, now);
    if (schema.migrations) std::cout << render_migrations_text(*schema.migrations);
  }
}

// --migration-timeout: more than 0, and within what PostgreSQL's statement_timeout holds.
Duration migration_timeout(const std::string& value) {
  const Duration d = parse_duration_flag("--migration-timeout", value);
  if (d.count() <= 0)
    throw UsageError("--migration-timeout: `" + value + "` ends every statement at once: give a duration like 5m");
  if (d.count() > std::numeric_limits<int>::max())
    throw UsageError("--migration-timeout: `" + value + "` is longer than PostgreSQL's statement_timeout holds (" +
                     format_duration(Duration(std::numeric_limits<int>::max())) + ")");
  return d;
}

// What a stop signal cancelled in the migrations, said once on stderr.
void say_stopped_migrations(const PreviewUpOutcome& out, const std::string& name) {
  for (const auto& [project, report] : out.schema)
    if (report.migrations)
      for (const auto& fork : report.migrations->forks)
        if (!fork.stopped_in.empty())
          std::cerr << "stopped by a signal: the statement of " << scrub(fork.stopped_in) << " running on "
                    << fork.fork_name << " was cancelled on the server and its transaction rolled back; the state's "
                    << "lock is released. `dbform preview up " << name << "` applies it again\n";
}

int run_up(const PreviewOptions& opts) {
  require_preview_name(opts.name);
  (void)engine_options(opts.wait, &stop_flag());  // its flags refused before any file is read
  const Duration statement_limit = migration_timeout(opts.migration_timeout);
  const PolicySet policies = load_policies_or_throw(opts.policy);
  const Manifest manifest = load_manifests_or_throw(opts.manifests);
  PreviewSession session(opts, "preview up");
  const auto connector = libpq_connector();
  PreviewProgress progress("error");
  const PreviewUpOutcome out = preview_up_operation(
      {*session.context, manifest, opts.project, opts.name, opts.reset, policies, *connector, opts.format == "markdown",
       statement_limit},
      progress);
  say_stopped_migrations(out, opts.name);
  if (!out.clear_warning.empty() && !out.state.resources.empty()) std::cerr << "warning: " << out.clear_warning << "\n";
  // A preview is reported once it is whole.
  if (out.interrupted || out.failed) return exit_code_of(out.interrupted, out.failed);
  int exit_code = 0;
  for (const auto& project : out.projects)
    for (const auto& p : recorded_previews(out.state, project))
      if (p.name == opts.name) {
        const auto report = out.schema.find(project);
        print_preview(opts, p, std::chrono::system_clock::now(), report == out.schema.end() ? SchemaReport{} : report->second);
        if (report != out.schema.end() && report->second.migrations->interrupted) exit_code = 130;
        else if (report != out.schema.end() && report->second.migrations->failed()) exit_code = std::max(exit_code, 1);
      }
  return exit_code;  // 1 when a fork's migrations failed: the fork is kept, and reported so
}

int run_diff(const PreviewOptions& opts, bool manifests_given) {
  require_preview_name(opts.name);
  // `-f` as up, down and sweep take it: the manifests are read and must be valid, and without
  // --project only their projects' previews are compared.
  std::vector<std::string> among;
  if (manifests_given)
    for (const auto& p : load_manifests_or_throw(opts.manifests).projects) among.push_back(p.id);
  auto store = open_state_store(opts.state);
  const State state = read_recorded_state(*store, false);
  require_state_key(*store, state, "preview diff");  // it connects to each fork with its password
  const auto connector = libpq_connector();
  DiffRequest request{state, opts.project, opts.name, *connector};
  request.among = std::move(among);
  const DiffOutcome diff = diff_preview(request);
  const std::string heading = "Preview " + opts.name + (opts.project.empty() ? "" : " of project " + opts.project);
  if (opts.format == "json") std::cout << dump_json(diff_json(diff, opts.name), 2) << "\n";
  else if (opts.format == "markdown") std::cout << "### " << heading << "\n" << render_diff_markdown(diff);
  else std::cout << render_diff_text(diff, heading);
  for (const auto& fork : diff.forks)
    if (!fork.error.empty()) std::cerr << "error: " << fork.fork_name << ": " << scrub(fork.error) << "\n";
  if (diff.failed()) return 1;
  return opts.detailed_exitcode && diff.differs() ? 2 : 0;
}

int run_down(const PreviewOptions& opts, bool manifests_given) {
  require_preview_name(opts.name);
  PreviewSession session(opts, "preview down");
  const Manifest manifest = manifests_if_any(opts.manifests, manifests_given);
  PreviewProgress progress("error");
  const PreviewDownOutcome out = preview_down_operation({*session.context, manifest, opts.project, opts.name}, progress);
  if (!out.recorded) {
    std::cout << "No preview `" << opts.name << "` is recorded" << (opts.project.empty() ? "" : " in project " + opts.project)
              << ": nothing to delete.\n";
    return 0;
  }
  for (const auto& failure : out.result.failures) progress.failed(failure);
  const int exit_code = exit_code_of(out.result.interrupted, !out.result.failures.empty());
  if (exit_code == 0) std::cout << "Preview " << opts.name << " deleted: " << out.result.deleted << " service(s).\n";
  return exit_code;
}

int run_sweep(const PreviewOptions& opts, bool manifests_given) {
  for (const auto& name : opts.keep) require_preview_name(name);
  (void)engine_options(opts.wait, &stop_flag());  // its flags refused before any file is read
  const Manifest manifest = manifests_if_any(opts.manifests, manifests_given);
  PreviewSession session(opts, "preview sweep");
  PreviewProgress progress("warning");
  const PreviewSweepOutcome out = preview_sweep_operation(
      {*session.context, manifest, opts.project, std::set<std::string>(opts.keep.begin(), opts.keep.end()),
       opts.max_deletes},
      progress);
  const SweepReport& report = out.report;
  // A sweep makes progress; what it could not delete is said, and the next sweep tries again.
  for (const auto& failure : report.result.failures) progress.failed(failure);
  std::cout << "Swept " << report.tried.size() << " service(s)" << (report.tried.empty() ? "." : ":") << "\n";
  for (const auto& address : report.tried)
    std::cout << "  deleted " << address << (out.state.find(address) ? " (not done, see above)" : "") << "\n";
  if (!report.left.empty()) std::cout << "Left for the next sweep:\n";
  for (const auto& left : report.left) std::cout << "  " << scrub(left) << "\n";
  if (!out.choice.kept.empty()) std::cout << "Kept:\n";
  for (const auto& kept : out.choice.kept) std::cout << "  " << kept << "\n";
  return report.result.interrupted ? 130 : 0;
}

int run_list(const PreviewOptions& opts, bool manifests_given) {
  // `-f` as every command that may read manifests takes it: read and checked, a bad one refused;
  // the list itself is the state's.
  if (manifests_given) load_manifests_or_throw(opts.manifests);
  auto store = open_state_store(opts.state);
  const State state = read_recorded_state(*store, false);
  const auto previews = recorded_previews(state, opts.project);
  const auto now = std::chrono::system_clock::now();
  if (opts.format == "json") {
    nlohmann::json all = nlohmann::json::array();
    for (const auto& p : previews) all.push_back(preview_json(p, now));
    std::cout << dump_json(all, 2) << "\n";
  } else {
    std::cout << render_preview_list(previews, now);
  }
  return 0;
}

void add_common(CLI::App& cmd, PreviewOptions& opts, bool lock) {
  add_manifest_and_state_options(cmd, opts.manifests, opts.state, lock);
  cmd.add_option("--project", opts.project, "only this project's previews");
}

}  // namespace

void add_preview_command(CLI::App& app, int& exit_code) {
  auto opts = std::make_shared<PreviewOptions>();
  auto* cmd = add_command(app, "preview", "a database per pull request: fork the `previews:` services, report, delete",
                          {.text = R"(A project's `previews:` block (see `dbform help manifest`) names the services each pull request gets a copy of. `preview up pr-123` forks each of them into `SERVICE-pr-123`, tagged DEV, with the block's strategy and size (never its source's deletion protection, PROD tag, HA replicas or pooler), records each under `PROJECT/previews/pr-123/services/SERVICE` with its creation time and expiry (creation + `ttl`), waits until each is READY and gives each a password of its own (a snapshot carries its source's). `preview down pr-123` deletes them, `preview sweep` deletes what expired and, with `--keep`, every preview not kept, and `preview list` shows them all.

Forks go through the engine apply uses: each create's intent is journaled before it is sent, a create whose answer is lost (or a run killed after sending it) is looked up by name before anything is sent again, so a preview is never forked twice. Previews are not declarations: a plan never shows them as orphans, `apply --prune` never deletes them, and removing the `previews:` block leaves them to `preview down` and `sweep`. `dbform output` and `dbform connect` take their addresses as any other.

`up`, `down` and `sweep` take the state's lock; `list` does not.)",
                           .environment = kApiEnvironment,
                           .examples = {{"A pull request's databases, as a comment", "dbform preview up pr-123 --format markdown > comment.md"},
                                        {"Their connection strings for the tests", "dbform preview up pr-123 --format env > preview.env"},
                                        {"The pull request closed", "dbform preview down pr-123"},
                                        {"Nightly: expired previews and closed pull requests", "dbform preview sweep --keep pr-123 --keep pr-124"}}});
  cmd->require_subcommand(1);

  auto* up = add_command(*cmd, "up", "fork the `previews:` services for NAME (or report the preview that exists)",
                         {.text = R"(Makes preview NAME (1-32 lowercase letters, digits and '-') in every project of the manifests that has a `previews:` block (or in `--project`), or reports it when it exists: a second `up` makes no call that changes anything. Refused before any call: a new preview beyond the block's `max` (the message names the previews there and their ages), a listed service that is not recorded or not READY, a fork name that the project declares or records already, a fork being deleted (`preview down` finishes it), a fork that breaks a mandatory rule of kind `preview` of the `--policy` files (or `DBFORM_POLICY`; see dbform-policy(1)), and with `--reset` a protected fork; and before any change in any project, a fork name that a live service of the project has, or a source not READY now. `--reset` deletes the preview's forks and forks them again (fresh data), once every check has passed. Every fork that became READY gets its own password, even when another failed; until then `dbform output` and `dbform connect` refuse its password.

With `migrations: DIR` in the block, every `*.sql` file of DIR is parsed by PostgreSQL's parser before anything is sent (a syntax error is reported at its file:line:col, touching nothing), and once every fork is READY with its own password each fork gets, over TLS, the files its ledger `dbform_migrations` does not hold, in name order, each in one transaction with its ledger row. A file changed (or removed) after it was applied is an error naming it, and nothing is applied anywhere. A failing file stops that fork's migrations: reported as `migrations failed` with the file, the line of the statement, PostgreSQL's position and message, exit 1, the fork kept for inspection. Run again for a newer commit, `up` makes no API call for a preview that stands and applies the new files. Each statement of a migration may run for `--migration-timeout` (default 5m; PostgreSQL's `statement_timeout`, and dbform's own cancel of a statement that sets another): past it, it is cancelled and its file rolled back, reported as failed naming the file and the timeout. A stop signal (SIGINT, SIGTERM) cancels the running statement on the server, rolls its file back, releases the state's lock and exits 130.

The report: `text`; `json`; `markdown`, a pull request's comment (services, hosts, expiry, the `dbform output` and `dbform connect` commands, the migrations applied and `preview diff`'s changes with their destructive marks; never a password); `env`, `DATABASE_URL_SERVICE='postgres://...'` lines, shell-quoted, for the next step of a pipeline (the one form with the password in it). Progress goes to stderr. Exit 0 once every fork is READY with its own password (and its migrations applied), 1 on an error, a failed fork (`up` again finishes it) or failed migrations, 130 when stopped by a signal.)",
                          .environment = kApiEnvironment,
                          .examples = {{"Make or report pr-7", "dbform preview up pr-7"},
                                       {"Fresh data for pr-7", "dbform preview up pr-7 --reset"},
                                       {"A new commit: apply its new migration files", "dbform preview up pr-7 --format markdown"}}});
  add_common(*up, *opts, true);
  up->add_option("name", opts->name, "the preview's name, like pr-123")->required();
  up->add_option("--format", opts->format, "text (default), json, markdown (no password) or env (connection strings)")
      ->check(CLI::IsMember({"text", "json", "markdown", "env"}));
  up->add_flag("--reset", opts->reset, "delete the preview's forks and fork them again");
  add_policy_options(*up, opts->policy);
  up->add_option("--migration-timeout", opts->migration_timeout,
                 "the longest one statement of a migration may run before it is cancelled (default 5m)");
  add_wait_options(*up, opts->wait);
  up->callback([opts, &exit_code] { exit_code = run_up(*opts); });

  auto* down = add_command(*cmd, "down", "delete preview NAME's forks and forget them",
                           {.text = R"(Deletes every fork of preview NAME (in every project, or in `--project`), waits until each is gone and forgets it; nothing else is touched. It needs no `previews:` block: a removed block leaves its previews to `down` and `sweep`. A preview that is not recorded is no error (a pull request closed twice). A fork whose create's outcome is unknown is looked up by name across the settle window first: deleted when found and provably the fork (forked from its recorded source, created after the intent, where the API shows them), forgotten when no lookup finds it, refused when a service of that name is not provably it. Exit 0 when all are gone, 1 otherwise.)",
                            .environment = kApiEnvironment,
                            .examples = {{"The pull request closed", "dbform preview down pr-7"}}});
  add_common(*down, *opts, true);
  down->add_option("name", opts->name, "the preview's name")->required();
  add_wait_options(*down, opts->wait);
  down->callback([opts, down, &exit_code] { exit_code = run_down(*opts, down->count("--file") > 0); });

  auto* sweep = add_command(*cmd, "sweep", "delete expired previews and, with --keep, every preview not kept",
                            {.text = R"(Deletes each preview whose expiry (recorded at its creation: a later `ttl` applies to new previews only) has passed and, when `--keep` is given (the open pull requests), each preview not kept; `--keep` does not extend an expiry. At most `--max-deletes` services (default 3) per run, oldest preview first across every project; a delete that fails costs that limit nothing, so the next previews are tried. It lists what it deleted, what it leaves for the next sweep (a project whose key is missing or rejected is skipped, saying why) and what it kept, and exits 0 (a sweep makes progress, it does not refuse as a whole; a delete that failed is a warning). Exit 130 when stopped by a signal.)",
                             .environment = kApiEnvironment,
                             .examples = {{"Nightly, keeping the open pull requests", "dbform preview sweep --keep pr-7 --keep pr-9"},
                                          {"Only what expired, ten services at most", "dbform preview sweep --max-deletes 10"}}});
  add_common(*sweep, *opts, true);
  one_value_per_use(sweep->add_option("--keep", opts->keep, "a preview to keep (an open pull request); repeat for more"));
  sweep->add_option("--max-deletes", opts->max_deletes, "the most services one sweep deletes (default 3)")
      ->check(whole_number(0, std::numeric_limits<int>::max(), "a whole number, 0 or more"));
  add_wait_options(*sweep, opts->wait);
  sweep->callback([opts, sweep, &exit_code] { exit_code = run_sweep(*opts, sweep->count("--file") > 0); });

  auto* diff = add_command(*cmd, "diff", "each fork's schema against its source's: + - ~ lines, destructive changes marked",
                           {.text = R"(Compares the schema of each fork of preview NAME (in every project, in `--project`, or with `-f` in the projects of the manifests named, which are read and must be valid) with its source's, read from both servers' catalogs: schemas, extensions, tables, columns (type, nullability, default), indexes, constraints and views (not the ledger `dbform_migrations`). Each side is read in one transaction of a session that is read-only from its login on, with a statement timeout of 30s: the source is only ever read. Changes print as `+` (in the fork only), `-` (in the source only) and `~` (changed) lines; a new or dropped table is one line with its columns. Those that lose data when they reach the source are marked destructive: a dropped table or column, and a column whose type narrows (any change of type not known to widen it, like integer to bigint or varchar(20) to text).

It makes no API call and takes no lock: it connects with the endpoints and passwords the state records (TLS, as `dbform output` writes connection strings). Formats: `text`, `json`, `markdown` (a pull request's comment; no password, no connection string). Exit 0, or with `--detailed-exitcode` 2 when a schema differs; 1 when a fork or its source could not be read.)",
                            .examples = {{"What pr-7 changes", "dbform preview diff pr-7"},
                                         {"Fail a pipeline step on any change", "dbform preview diff pr-7 --detailed-exitcode"}}});
  add_manifest_and_state_options(*diff, opts->manifests, opts->state, false);
  diff->add_option("name", opts->name, "the preview's name")->required();
  diff->add_option("--project", opts->project, "only this project's preview");
  diff->add_option("--format", opts->format, "text (default), json or markdown")
      ->check(CLI::IsMember({"text", "json", "markdown"}));
  diff->add_flag("--detailed-exitcode", opts->detailed_exitcode, "exit 2 when a fork's schema differs from its source's");
  diff->callback([opts, diff, &exit_code] { exit_code = run_diff(*opts, diff->count("--file") > 0); });

  auto* list = add_command(*cmd, "list", "every preview: services, status, age, expiry",
                           {.text = R"(Prints every recorded preview with its services and their status, its age and its expiry, from the state alone: no API call, no lock. `-f` is taken as by the other subcommands: the manifests named are read and must be valid, and the list is the same.)",
                            .examples = {{"Every preview", "dbform preview list"}, {"As JSON", "dbform preview list --format json"}}});
  add_common(*list, *opts, false);
  list->add_option("--format", opts->format, "text (default) or json")->check(CLI::IsMember({"text", "json"}));
  list->callback([opts, list, &exit_code] { exit_code = run_list(*opts, list->count("--file") > 0); });
}

}  // namespace dbform::cli
