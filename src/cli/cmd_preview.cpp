// `dbform preview up NAME | down NAME | list | sweep`: a database per pull request (docs/previews.md).
// Flags are parsed here and the report rendered; the flow (guards, engine, passwords) is
// engine/preview.h's.
#include <algorithm>
#include <iostream>
#include <limits>
#include <set>

#include "cli/commands.h"
#include "cli/context.h"
#include "cli/manual.h"
#include "ops/policy.h"
#include "ops/recovery.h"
#include "cli/render_events.h"
#include "cli/render_policy.h"
#include "cli/render_preview.h"
#include "cli/render_schema.h"
#include "cli/signals.h"
#include "ops/keys.h"
#include "engine/preview.h"
#include "ops/preview_schema.h"
#include "util/env.h"
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
  bool detailed_exitcode = false;
};

// What the engine's run left undone, on stderr; the exit code.
int report_result(const ApplyResult& result, const State& state, const StateStore& store) {
  if (!result.save_error.empty()) throw Error(save_failure_message(result, state, store, process_env()));
  for (const auto& failure : result.failures) std::cerr << "error: " << scrub(failure) << "\n";
  if (result.interrupted) std::cerr << "stopped by a signal: run the same command again to finish\n";
  return result.interrupted ? 130 : result.failures.empty() ? 0 : 1;
}

// What up, down and sweep call with: the API (its waits end on a stop signal), the progress on
// stderr, and the runner.
struct Session {
  Session(StateStore& store, const ApplyOptions& options)
      : api(make_api()), events(std::cerr, Terminal{}), runner(*api->client, store, api->clock, events, options) {
    api->client->stop_waits_on(&stop_flag());
  }
  decltype(make_api()) api;
  LineEventRenderer events;
  PreviewRunner runner;
};

std::map<std::string, ProjectKey> keys_for(const PreviewOptions& opts, bool manifests_given,
                                           const std::vector<std::string>& projects) {
  return resolve_keys(manifests_if_any(opts.manifests, manifests_given), projects, process_env());
}

// What `up` adds to a preview's report when its block has `migrations:`: the migrations applied,
// and (for the pull request's comment) the diff of each fork's schema against its source's.
struct SchemaReport {
  std::optional<MigrateOutcome> migrations;
  std::optional<DiffOutcome> diff;
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

struct MigrationProgress : MigrationReporter {
  void applying(const std::string&, const std::string& fork, const MigrationFile& file) override {
    std::cerr << fork << ": applying " << scrub(file.path) << "\n";
  }
};

// Applies the migrations of each project's preview (no API call: the forks are READY with their own
// passwords) and, for the markdown comment, diffs the schemas. Failed migrations are on stderr too.
std::map<std::string, SchemaReport> migrate(const PreviewOptions& opts, const std::vector<PreviewUpPlan>& plans,
                                            const std::map<std::string, std::vector<MigrationFile>>& files,
                                            const State& state, Duration connect_wait) {
  std::map<std::string, SchemaReport> reports;
  const auto connector = libpq_connector();
  MigrationProgress progress;
  SystemClock clock;
  for (const auto& up : plans) {
    const auto f = files.find(up.project_id);
    if (f == files.end()) continue;
    SchemaReport& report = reports[up.project_id];
    MigrateRequest request{state, up.project_id, up.name, f->second, *connector, &stop_flag()};
    request.clock = &clock;
    request.connect_wait = connect_wait;  // --wait-timeout, as apply --wait-connectable waits
    report.migrations = migrate_preview(request, progress);
    for (const auto& fork : report.migrations->forks)
      if (fork.failure) std::cerr << "error: " << fork.fork_name << ": migrations failed: " << scrub(fork.failure->str()) << "\n";
    if (opts.format == "markdown") report.diff = diff_preview({state, up.project_id, up.name, *connector});
  }
  return reports;
}

int run_up(const PreviewOptions& opts) {
  require_preview_name(opts.name);
  const ApplyOptions engine_opts = engine_options(opts.wait, &stop_flag());
  const PolicySet policies = load_policies_or_throw(opts.policy);
  const Manifest manifest = load_manifests_or_throw(opts.manifests);
  std::vector<const DesiredProject*> projects;
  for (const auto& p : manifest.projects)
    if ((opts.project.empty() && p.previews) || p.id == opts.project) projects.push_back(&p);
  if (projects.empty())
    throw UsageError(opts.project.empty() ? "no project of the manifests has a `previews:` block; nothing was changed"
                                          : "project `" + opts.project + "` is not in the manifests; nothing was changed");
  install_stop_signals();
  auto store = open_state_store(opts.state);
  auto lock = lock_state(*store, "preview up", opts.state);
  State state = read_state(*store);
  const auto now = std::chrono::system_clock::now();
  std::vector<PreviewUpPlan> plans;  // every guard of every project before any call
  for (const DesiredProject* p : projects) plans.push_back(plan_preview_up(*p, opts.name, state, now, opts.reset));
  // The rules of kind `preview`, before any call: a mandatory one broken refuses (UsageError).
  const PolicyCheck preview_rules =
      check_preview_policies(plans, state, policies, std::chrono::time_point_cast<std::chrono::seconds>(now));
  for (const auto& v : preview_rules.violations)  // the mandatory ones refused above: these are advisory
    std::cerr << "warning: [advisory] " << v.rule << ": " << v.address << " " << violation_text(v)
              << (v.message.empty() ? "" : " (" + v.message + ")") << "\n";
  // Every migration file parsed before any call: a syntax error touches neither the API nor a fork.
  std::map<std::string, std::vector<MigrationFile>> migration_files;
  for (const DesiredProject* p : projects)
    if (p->previews && p->previews->migrations) migration_files[p->id] = preview_migration_files(*p->previews);
  std::vector<std::string> with_calls;
  for (const auto& up : plans)
    if (up.needs_calls(state)) with_calls.push_back(up.project_id);
  int exit_code = 0;
  if (!with_calls.empty()) {
    const auto keys = resolve_keys(manifest, with_calls, process_env());
    Session session(*store, engine_opts);
    for (const auto& up : plans)  // every refusal of every project before anything is deleted or forked
      if (up.needs_calls(state)) session.runner.check_live(up, keys, state);
    for (const auto& up : plans) {
      if (!up.needs_calls(state)) continue;
      exit_code = std::max(exit_code, report_result(session.runner.up(up, keys, state), state, *store));
      if (exit_code == 130) break;
    }
    store->compact(state);
  }
  if (exit_code != 0) return exit_code;  // a preview is reported once it is whole
  const auto schema = migrate(opts, plans, migration_files, state, engine_opts.wait_timeout);
  for (const auto& up : plans)
    for (const auto& p : recorded_previews(state, up.project_id))
      if (p.name == opts.name) {
        const auto report = schema.find(up.project_id);
        print_preview(opts, p, std::chrono::system_clock::now(), report == schema.end() ? SchemaReport{} : report->second);
        if (report != schema.end() && report->second.migrations->interrupted) exit_code = 130;
        else if (report != schema.end() && report->second.migrations->failed()) exit_code = std::max(exit_code, 1);
      }
  return exit_code;  // 1 when a fork's migrations failed: the fork is kept, and reported so
}

int run_diff(const PreviewOptions& opts) {
  require_preview_name(opts.name);
  auto store = open_state_store(opts.state);
  const State state = read_recorded_state(*store, false);
  const auto connector = libpq_connector();
  const DiffOutcome diff = diff_preview({state, opts.project, opts.name, *connector});
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
  const ApplyOptions engine_opts = engine_options(opts.wait, &stop_flag());
  install_stop_signals();
  auto store = open_state_store(opts.state);
  auto lock = lock_state(*store, "preview down", opts.state);
  State state = read_state(*store);
  std::vector<std::string> forks, projects;
  for (const auto& p : recorded_previews(state, opts.project))
    if (p.name == opts.name) {
      for (const ResourceRecord* rec : p.forks) forks.push_back(rec->address);
      projects.push_back(p.project_id);
    }
  if (forks.empty()) {
    std::cout << "No preview `" << opts.name << "` is recorded" << (opts.project.empty() ? "" : " in project " + opts.project)
              << ": nothing to delete.\n";
    return 0;
  }
  const auto keys = keys_for(opts, manifests_given, projects);
  Session session(*store, engine_opts);
  const ApplyResult result = session.runner.remove(forks, keys, state);
  if (result.save_error.empty()) store->compact(state);  // what it folds is what was saved
  const int exit_code = report_result(result, state, *store);
  if (exit_code == 0) std::cout << "Preview " << opts.name << " deleted: " << result.deleted << " service(s).\n";
  return exit_code;
}

int run_sweep(const PreviewOptions& opts, bool manifests_given) {
  for (const auto& name : opts.keep) require_preview_name(name);
  const ApplyOptions engine_opts = engine_options(opts.wait, &stop_flag());
  const Manifest manifest = manifests_if_any(opts.manifests, manifests_given);
  install_stop_signals();
  auto store = open_state_store(opts.state);
  auto lock = lock_state(*store, "preview sweep", opts.state);
  State state = read_state(*store);
  const std::set<std::string> keep(opts.keep.begin(), opts.keep.end());
  const SweepChoice choice = choose_sweep(state, opts.project, keep, std::chrono::system_clock::now());
  SweepReport report;
  int exit_code = 0;
  if (!choice.due.empty()) {
    std::map<std::string, ProjectKey> keys;
    std::map<std::string, std::string> key_problems;
    for (const auto& item : choice.due) {  // a project without a key is skipped, not the whole sweep
      if (keys.count(item.project_id) || key_problems.count(item.project_id)) continue;
      try {
        keys.merge(resolve_keys(manifest, {item.project_id}, process_env()));
      } catch (const Error& e) {
        key_problems[item.project_id] = e.what();
      }
    }
    Session session(*store, engine_opts);
    report = session.runner.sweep(choice, opts.max_deletes, keys, key_problems, state);
    if (report.result.save_error.empty()) store->compact(state);
    // A sweep makes progress; what it could not delete is said, and the next sweep tries again.
    if (!report.result.save_error.empty()) throw Error(save_failure_message(report.result, state, *store, process_env()));
    for (const auto& failure : report.result.failures) std::cerr << "warning: " << scrub(failure) << "\n";
    if (report.result.interrupted) exit_code = 130;
  }
  std::cout << "Swept " << report.tried.size() << " service(s)" << (report.tried.empty() ? "." : ":") << "\n";
  for (const auto& address : report.tried)
    std::cout << "  deleted " << address << (state.find(address) ? " (not done, see above)" : "") << "\n";
  if (!report.left.empty()) std::cout << "Left for the next sweep:\n";
  for (const auto& left : report.left) std::cout << "  " << scrub(left) << "\n";
  if (!choice.kept.empty()) std::cout << "Kept:\n";
  for (const auto& kept : choice.kept) std::cout << "  " << kept << "\n";
  return exit_code;
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
  add_manifest_options(cmd, opts.manifests);
  add_state_options(cmd, opts.state, lock);
  cmd.add_option("--project", opts.project, "only this project's previews");
}

}  // namespace

void add_preview_command(CLI::App& app, int& exit_code) {
  auto opts = std::make_shared<PreviewOptions>();
  auto* cmd = app.add_subcommand("preview", "a database per pull request: fork the `previews:` services, report, delete");
  cmd->require_subcommand(1);
  set_manual(*cmd, {.text = R"(A project's `previews:` block (see `dbform help manifest`) names the services each pull request gets a copy of. `preview up pr-123` forks each of them into `SERVICE-pr-123`, tagged DEV, with the block's strategy and size (never its source's deletion protection, PROD tag, HA replicas or pooler), records each under `PROJECT/previews/pr-123/services/SERVICE` with its creation time and expiry (creation + `ttl`), waits until each is READY and gives each a password of its own (a snapshot carries its source's). `preview down pr-123` deletes them, `preview sweep` deletes what expired and, with `--keep`, every preview not kept, and `preview list` shows them all.

Forks go through the engine apply uses: each create's intent is journaled before it is sent, a create whose answer is lost (or a run killed after sending it) is looked up by name before anything is sent again, so a preview is never forked twice. Previews are not declarations: a plan never shows them as orphans, `apply --prune` never deletes them, and removing the `previews:` block leaves them to `preview down` and `sweep`. `dbform output` and `dbform connect` take their addresses as any other.

`up`, `down` and `sweep` take the state's lock; `list` does not.)",
                    .environment = kApiEnvironment,
                    .examples = {{"A pull request's databases, as a comment", "dbform preview up pr-123 --format markdown > comment.md"},
                                 {"Their connection strings for the tests", "dbform preview up pr-123 --format env > preview.env"},
                                 {"The pull request closed", "dbform preview down pr-123"},
                                 {"Nightly: expired previews and closed pull requests", "dbform preview sweep --keep pr-123 --keep pr-124"}}});

  auto* up = cmd->add_subcommand("up", "fork the `previews:` services for NAME (or report the preview that exists)");
  set_manual(*up, {.text = R"(Makes preview NAME (1-32 lowercase letters, digits and '-') in every project of the manifests that has a `previews:` block (or in `--project`), or reports it when it exists: a second `up` makes no call that changes anything. Refused before any call: a new preview beyond the block's `max` (the message names the previews there and their ages), a listed service that is not recorded or not READY, a fork name that the project declares or records already, a fork being deleted (`preview down` finishes it), a fork that breaks a mandatory rule of kind `preview` of the `--policy` files (or `DBFORM_POLICY`; see dbform-policy(1)), and with `--reset` a protected fork; and before any change in any project, a fork name that a live service of the project has, or a source not READY now. `--reset` deletes the preview's forks and forks them again (fresh data), once every check has passed. Every fork that became READY gets its own password, even when another failed; until then `dbform output` and `dbform connect` refuse its password.

With `migrations: DIR` in the block, every `*.sql` file of DIR is parsed by PostgreSQL's parser before anything is sent (a syntax error is reported at its file:line:col, touching nothing), and once every fork is READY with its own password each fork gets, over TLS, the files its ledger `dbform_migrations` does not hold, in name order, each in one transaction with its ledger row. A file changed (or removed) after it was applied is an error naming it, and nothing is applied anywhere. A failing file stops that fork's migrations: reported as `migrations failed` with the file, the line of the statement, PostgreSQL's position and message, exit 1, the fork kept for inspection. Run again for a newer commit, `up` makes no API call for a preview that stands and applies the new files.

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
  add_wait_options(*up, opts->wait);
  up->callback([opts, &exit_code] { exit_code = run_up(*opts); });

  auto* down = cmd->add_subcommand("down", "delete preview NAME's forks and forget them");
  set_manual(*down, {.text = R"(Deletes every fork of preview NAME (in every project, or in `--project`), waits until each is gone and forgets it; nothing else is touched. It needs no `previews:` block: a removed block leaves its previews to `down` and `sweep`. A preview that is not recorded is no error (a pull request closed twice). A fork whose create's outcome is unknown is looked up by name across the settle window first: deleted when found and provably the fork (forked from its recorded source, created after the intent, where the API shows them), forgotten when no lookup finds it, refused when a service of that name is not provably it. Exit 0 when all are gone, 1 otherwise.)",
                     .environment = kApiEnvironment,
                     .examples = {{"The pull request closed", "dbform preview down pr-7"}}});
  add_common(*down, *opts, true);
  down->add_option("name", opts->name, "the preview's name")->required();
  add_wait_options(*down, opts->wait);
  down->callback([opts, down, &exit_code] { exit_code = run_down(*opts, down->count("--file") > 0); });

  auto* sweep = cmd->add_subcommand("sweep", "delete expired previews and, with --keep, every preview not kept");
  set_manual(*sweep, {.text = R"(Deletes each preview whose expiry (recorded at its creation: a later `ttl` applies to new previews only) has passed and, when `--keep` is given (the open pull requests), each preview not kept; `--keep` does not extend an expiry. At most `--max-deletes` services (default 3) per run, oldest preview first across every project; a delete that fails costs that limit nothing, so the next previews are tried. It lists what it deleted, what it leaves for the next sweep (a project whose key is missing or rejected is skipped, saying why) and what it kept, and exits 0 (a sweep makes progress, it does not refuse as a whole; a delete that failed is a warning). Exit 130 when stopped by a signal.)",
                      .environment = kApiEnvironment,
                      .examples = {{"Nightly, keeping the open pull requests", "dbform preview sweep --keep pr-7 --keep pr-9"},
                                   {"Only what expired, ten services at most", "dbform preview sweep --max-deletes 10"}}});
  add_common(*sweep, *opts, true);
  sweep->add_option("--keep", opts->keep, "a preview to keep (an open pull request); repeat for more")
      ->expected(1)
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
  sweep->add_option("--max-deletes", opts->max_deletes, "the most services one sweep deletes (default 3)")
      ->check(whole_number(0, std::numeric_limits<int>::max(), "a whole number, 0 or more"));
  add_wait_options(*sweep, opts->wait);
  sweep->callback([opts, sweep, &exit_code] { exit_code = run_sweep(*opts, sweep->count("--file") > 0); });

  auto* diff = cmd->add_subcommand("diff", "each fork's schema against its source's: + - ~ lines, destructive changes marked");
  set_manual(*diff, {.text = R"(Compares the schema of each fork of preview NAME (in every project, or in `--project`) with its source's, read from both servers' catalogs: schemas, extensions, tables, columns (type, nullability, default), indexes, constraints and views (not the ledger `dbform_migrations`). Each side is read in one transaction of a session that is read-only from its login on, with a statement timeout of 30s: the source is only ever read. Changes print as `+` (in the fork only), `-` (in the source only) and `~` (changed) lines; a new or dropped table is one line with its columns. Those that lose data when they reach the source are marked destructive: a dropped table or column, and a column whose type narrows (any change of type not known to widen it, like integer to bigint or varchar(20) to text).

It makes no API call and takes no lock: it connects with the endpoints and passwords the state records (TLS, as `dbform output` writes connection strings). Formats: `text`, `json`, `markdown` (a pull request's comment; no password, no connection string). Exit 0, or with `--detailed-exitcode` 2 when a schema differs; 1 when a fork or its source could not be read.)",
                     .environment = {},
                     .examples = {{"What pr-7 changes", "dbform preview diff pr-7"},
                                  {"Fail a pipeline step on any change", "dbform preview diff pr-7 --detailed-exitcode"}}});
  add_state_options(*diff, opts->state, false);
  diff->add_option("name", opts->name, "the preview's name")->required();
  diff->add_option("--project", opts->project, "only this project's preview");
  diff->add_option("--format", opts->format, "text (default), json or markdown")
      ->check(CLI::IsMember({"text", "json", "markdown"}));
  diff->add_flag("--detailed-exitcode", opts->detailed_exitcode, "exit 2 when a fork's schema differs from its source's");
  diff->callback([opts, &exit_code] { exit_code = run_diff(*opts); });

  auto* list = cmd->add_subcommand("list", "every preview: services, status, age, expiry");
  set_manual(*list, {.text = R"(Prints every recorded preview with its services and their status, its age and its expiry, from the state alone: no API call, no lock. `-f` is taken as by the other subcommands: the manifests named are read and must be valid, and the list is the same.)",
                     .environment = {},
                     .examples = {{"Every preview", "dbform preview list"}, {"As JSON", "dbform preview list --format json"}}});
  add_common(*list, *opts, false);
  list->add_option("--format", opts->format, "text (default) or json")->check(CLI::IsMember({"text", "json"}));
  list->callback([opts, list, &exit_code] { exit_code = run_list(*opts, list->count("--file") > 0); });
}

}  // namespace dbform::cli
