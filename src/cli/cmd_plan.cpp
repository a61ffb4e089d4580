// `dbform validate`, `dbform plan` and `dbform show`.
#include <iostream>

#include "cli/commands.h"
#include "cli/context.h"
#include "cli/manual.h"
#include "cli/render_markdown.h"
#include "cli/suggest.h"
#include "cli/render_plan.h"
#include "cli/render_refresh.h"
#include "cli/render_terraform.h"
#include "ops/connections.h"
#include "manifest/loader.h"
#include "ops/keys.h"
#include "ops/operation.h"
#include "ops/refresh_only.h"
#include "plan/plan_file.h"
#include "util/atomic_file.h"
#include "util/env.h"
#include "util/json_limits.h"
#include "util/text.h"

namespace dbform::cli {

namespace {

// A plan's refresh reads (key checks and lists) at once: reads only, each a short call on a kept-alive
// connection, so more of them than apply's default --parallelism of changes.
constexpr int kPlanReads = 32;

// A plan with conflicts is never saved: nothing in it could be applied.
void save_plan(const PlanDocument& doc, const std::string& path, std::ostream& notes) {
  if (doc.plan.summary.has_conflicts()) {
    std::cerr << "The plan was not saved to " << path << ": it has conflicts"
              << (doc.plan.summary.policy ? " (mandatory policy violations)" : "") << ".\n";
    return;
  }
  write_file_atomically(path, dump_json(plan_document_json(doc), 2) + "\n", 0644);
  notes << "\nSaved the plan to " << path << ". To apply exactly this plan: dbform apply " << path << "\n";
}

void print_plan(const PlanDocument& doc, const std::string& format) {
  if (format == "json") std::cout << dump_json(plan_document_json(doc), 2) << "\n";
  else if (format == "markdown") std::cout << with_run_flags(render_plan_markdown(doc));
  else std::cout << with_run_flags(render_plan_text(doc.plan, detect_terminal()));
}

// `plan --refresh-only`: what changed outside dbform, read-only. Exit 0, or with
// --detailed-exitcode 2 when anything did (a scheduled drift check); errors throw (exit 1).
int plan_refresh_only_command(const ManifestOptions& manifests, const StateOptions& state_options,
                              const PlanningOptions& planning, const std::string& format, bool detailed_exitcode) {
  Manifest manifest = load_manifests_or_throw(manifests);  // for the projects' keys (api_key_env)
  auto store = open_state_store(state_options);
  auto api = make_api();
  SystemClock clock;
  RefreshOnlyOutcome made;
  try {
    made = plan_refresh_only({.manifest = manifest,
                              .store = *store,
                              .api = *api->client,
                              .clock = clock,
                              .env = process_env(),
                              .targets = planning.targets,
                              .parallelism = kPlanReads,
                              .catalogs = &libpq_sql()});
  } catch (const MissingKeyError& e) {
    throw MissingKeyError(std::string(e.what()) +
                          "\nA refresh-only plan reads every project the state records, each with its key");
  }
  if (made.end == RefreshOnlyOutcome::End::NoState)  // reported all the same: a document is expected on stdout
    std::cerr << "No state at " << store->describe() << ": nothing is recorded, so nothing was read.\n";
  if (auto holder = store->lock_holder())
    std::cerr << "Note: the state is locked by " << scrub(holder->str())
              << ". This report compares what exists with the state as that run last saved it.\n";
  const std::string now = format_utc(clock.wall_now());
  if (format == "json") std::cout << dump_json(refresh_document_json(made.report, now), 2) << "\n";
  else if (format == "markdown") std::cout << render_refresh_markdown(made.report, now);
  else
    std::cout << render_refresh_text(made.report, detect_terminal())
              << "This plan records nothing: `dbform apply --refresh-only` records what it read.\n";
  return detailed_exitcode && made.report.has_changes() ? 2 : 0;
}

void add_format_option(CLI::App& cmd, std::string& format) {
  cmd.add_option("--format", format, "text (default), json (the plan document) or markdown (a PR comment)")
      ->check(CLI::IsMember({"text", "json", "markdown"}));
}

}  // namespace

void add_validate_command(CLI::App& app, int& exit_code) {
  auto opts = std::make_shared<ManifestOptions>();
  auto* cmd = add_command(app, "validate", "check the manifests without reading state or calling the API",
                          {.text = "Reads the manifests (`-f`, default the working directory) as plan would, and reports "
                                   "every error and warning together, each with `file:line:col`, the field, what was found "
                                   "and what was expected. Reads no state, calls no API and needs no key: the first step of "
                                   "a pull request's pipeline. `${NAME}` reads the variable `DBFORM_VAR_NAME` (and no other), so an "
                                   "unset variable is an error here too. Exit status 0 when valid (warnings allowed), 1 "
                                   "otherwise. The format is dbform-manifest(5).",
                           .examples = {{"Check one directory of manifests", "dbform validate -f manifests/"},
                                        {"Check two files", "dbform validate -f prod.yaml -f staging.yaml"}}});
  add_manifest_options(*cmd, *opts);
  cmd->callback([opts, &exit_code] {
    Manifest m = load_manifests_or_throw(*opts);
    std::map<ResourceKind, size_t> declared;
    for (const auto& p : m.projects) for_each_declaration(p, [&](const Declaration& d) { ++declared[d.kind]; });
    const size_t services = declared[ResourceKind::Service], vpcs = declared[ResourceKind::Vpc],
                 sets = declared[ResourceKind::ReplicaSet], peerings = declared[ResourceKind::Peering];
    std::cout << "The manifests are valid: " << m.files.size() << " file(s), " << m.projects.size()
              << " project(s), " << vpcs << " VPC(s), " << services << " service(s)";
    if (sets + peerings > 0) std::cout << ", " << sets << " read replica set(s), " << peerings << " peering(s)";
    std::cout << ".\n";
    exit_code = 0;
  });
}

void add_plan_command(CLI::App& app, int& exit_code) {
  struct Options {
    ManifestOptions manifests;
    StateOptions state;
    bool detailed_exitcode = false;
    std::string format = "text";
    std::string out;
    PlanningOptions planning;
    PolicyOptions policy;
  };
  auto opts = std::make_shared<Options>();
  auto* cmd = add_command(app, "plan", "show what apply would do",
                          {.text = R"(Compares the manifests with the state and with what exists, and shows what `dbform apply` would do: each resource to create, update in place (with the calls it makes), replace, wait for, adopt or delete, every conflict that stops the apply and why, and a summary line such as `Plan: 2 to create, 1 to update, 1 to wait for, 3 unchanged.`

First it refreshes, as Terraform does: with each declared project's key (checked once with `GET /auth/info`) it lists the project's services and VPCs, and the read replica sets and peerings of the recorded ones, and plans against what it finds. A plan is read-only: it writes nothing (no state, journal, backup or lock file) and takes no lock, so pull requests may plan while an apply runs (the plan then names that run); what the refresh found is recorded by the next apply. A value changed outside dbform is shown as such and planned back; a resource deleted outside dbform is created again; a declared name that exists but is not recorded is a conflict naming its id and the `dbform import` to run. `--no-refresh` plans from the state alone, with no key (a pull request from a fork), and says how long ago the state was last refreshed by a run that recorded it (`apply --refresh-only`, or an apply whose refresh read every project the state records), or that it never was.

`--refresh-only` (Terraform's `-refresh-only`) reads every resource the state records and reports only what changed outside dbform since the state was written: settings (recorded -> as the API shows them), statuses, endpoints, resources deleted outside dbform. Nothing the manifests declare is planned (they give the projects' keys); with `--detailed-exitcode` it exits 2 when anything changed, a scheduled drift check. `--format json` prints a `dbform-refresh` document, `markdown` a comment. `dbform apply --refresh-only` records it. It refuses `--no-refresh`, `--prune`, `--max-deletes`, `--policy` and `--out`; `--target` reads only those records.

Nothing is ever deleted without `--prune`; with it, at most `--max-deletes` deletes and replacements (default 3) are planned, or none is. `--target` plans only the named resources and what they need. `--out FILE` saves the plan for `dbform apply FILE`, which applies exactly that plan or refuses when the state or the manifests changed since; `dbform show FILE` renders it again. The plan never holds a password or a key.

`--policy FILE` (repeatable; default `DBFORM_POLICY`, a `:`-separated list) checks the plan against a platform team's rules (see dbform-policy(1)): each resource as it will be after the plan (declared, else recorded) and the plan's actions, without any API call. The plan lists the rules checked, every violation (rule, level, address, field, the value found and what the rule requires, its message) and the waivers in force. A mandatory violation is a conflict: the plan is not saved and the exit status is 1. An advisory one is a warning.

## Exit status

0 when the plan has no conflict (with `--detailed-exitcode`: and no changes), 1 on an error or a conflict, 2 with `--detailed-exitcode` when there are changes to apply (with `--refresh-only`: when anything changed outside dbform).)",
                           .environment = kApiEnvironment,
                           .examples = {{"What would change", "dbform plan -f manifests/"},
                                        {"Save the plan for review, then apply exactly it", "dbform plan -f manifests/ --out tfplan\ndbform apply tfplan"},
                                        {"A pull request's comment, from the state alone", "dbform plan --no-refresh --format markdown > plan.md"},
                                        {"Delete what is no longer declared, at most 5", "dbform plan --prune --max-deletes 5"},
                                        {"Only one service and what it needs", "dbform plan --target acme/services/orders"},
                                        {"Checked against the base branch's rules", "dbform plan --policy base/policies/baseline.yaml"},
                                        {"A scheduled drift check: exit 2 when anything changed outside dbform", "dbform plan --refresh-only --detailed-exitcode"}}});
  add_manifest_and_state_options(*cmd, opts->manifests, opts->state, false);
  cmd->add_option("--lock-timeout", opts->state.lock_timeout,
                  "accepted as Terraform's plan accepts it, and unused: a plan takes no lock");
  cmd->add_flag("--detailed-exitcode", opts->detailed_exitcode, "exit 0 no changes, 1 error, 2 changes pending");
  add_format_option(*cmd, opts->format);
  cmd->add_option("--out", opts->out, "also save the plan to FILE, for `dbform apply FILE` (whatever --format is)");
  add_planning_options(*cmd, opts->planning);
  add_policy_options(*cmd, opts->policy);
  cmd->callback([opts, cmd, &exit_code] {
    check_refresh_only_flags(*cmd, opts->planning, {"--out"});
    if (opts->planning.refresh_only) {
      exit_code = plan_refresh_only_command(opts->manifests, opts->state, opts->planning, opts->format,
                                            opts->detailed_exitcode);
      return;
    }
    PlanDocument doc;
    const PolicySet policies = load_policies_or_throw(opts->policy);
    Manifest manifest = load_manifests_or_throw(opts->manifests, &doc.diagnostics);
    auto store = open_state_store(opts->state);
    const PlanSettings settings = planning_settings(opts->planning);
    auto api = settings.refresh ? make_api() : nullptr;  // --no-refresh needs no API key
    SystemClock clock;
    PlanOutcome made;
    try {
      made = plan_operation({.manifest = manifest,
                             .store = *store,
                             .api = api ? api->client.get() : nullptr,
                             .clock = clock,
                             .env = process_env(),
                             .settings = settings,
                             .parallelism = kPlanReads,
                             .policies = &policies});
    } catch (const MissingKeyError& e) {
      throw MissingKeyError(std::string(e.what()) +
                            "\nA plan lists what exists first, with each project's key. `dbform plan --no-refresh` "
                            "plans from the state alone, without keys (and without seeing drift)");
    }
    doc.plan = std::move(made.plan);
    for (auto& warning : made.warnings) {
      std::cerr << scrub(warning.str()) << "\n";
      doc.diagnostics.push_back(std::move(warning));
    }
    if (auto holder = store->lock_holder())
      std::cerr << "Note: the state is locked by " << scrub(holder->str())
                << ". This plan is of the state as that run last saved it; if the run changes it, a plan saved now "
                   "will be refused as stale, and planning again shows what it did.\n";
    doc.manifest_paths = opts->manifests.files;
    doc.manifest_files = manifest.files;
    doc.created_at = format_utc(std::chrono::system_clock::now());

    if (opts->format == "text" && made.state_missing) std::cout << no_state_note(*store) << "\n\n";
    print_plan(doc, opts->format);
    // Notes go where they cannot spoil a document on stdout.
    if (!opts->out.empty()) save_plan(doc, opts->out, opts->format == "text" ? std::cout : std::cerr);

    if (doc.plan.summary.has_conflicts()) exit_code = 1;
    else if (opts->detailed_exitcode && doc.plan.summary.has_changes()) exit_code = 2;
    else exit_code = 0;
  });
}

void add_show_command(CLI::App& app, int& exit_code) {
  struct Options {
    std::string file;
    std::string format = "text";
  };
  auto opts = std::make_shared<Options>();
  auto* cmd = add_command(app, "show", "render a plan saved by `dbform plan --out`, without a state or an API key",
                          {.text = "Prints a plan file as `dbform plan` printed it: text, the JSON plan document, or the "
                                   "markdown of a pull-request comment; or, with `--format terraform-json`, in the shape of "
                                   "`terraform show -json` (format_version 1.2: `resource_changes` of type dbform_service, "
                                   "dbform_vpc, dbform_replica_set and dbform_peering in a module per project, with "
                                   "`change.actions`, `before`, `after`, `after_unknown`, `importing`; a service's password "
                                   "marked sensitive and, for a create, unknown, as Terraform marks them), for the tools a "
                                   "Terraform team runs on plans. It reads only the file: no manifest, no state, no "
                                   "key; a file that is not a plan, is damaged or has a newer format version is an error. "
                                   "Whether the plan can still be applied is checked by `dbform apply PLANFILE`.",
                           .examples = {{"Review a saved plan", "dbform show tfplan"},
                                        {"Its JSON document, for a script", "dbform show tfplan --format json | jq .summary"},
                                        {"For conftest, as Terraform's plan JSON", "dbform show tfplan --format terraform-json > plan.json\nconftest test plan.json"}}});
  cmd->add_option("planfile", opts->file, "the saved plan")->required();
  cmd->add_option("--format", opts->format, "text (default), json (the plan document), markdown (a PR comment) or "
                                            "terraform-json (the shape of `terraform show -json`, for conftest/OPA "
                                            "and tf-summarize)")
      ->check(CLI::IsMember({"text", "json", "markdown", "terraform-json"}));
  cmd->callback([opts, &exit_code] {
    if (opts->format == "terraform-json") {
      std::cout << dump_json(terraform_plan_json(read_plan_file(opts->file)), 2) << "\n";
      exit_code = 0;
      return;
    }
    print_plan(read_plan_file(opts->file), opts->format);
    exit_code = 0;
  });
}

}  // namespace dbform::cli
