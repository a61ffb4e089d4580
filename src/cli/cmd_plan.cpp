// `dbform validate`, `dbform plan` and `dbform show`.
#include <iostream>

#include "cli/commands.h"
#include "cli/context.h"
#include "cli/render_markdown.h"
#include "cli/refresh.h"
#include "cli/suggest.h"
#include "cli/render_plan.h"
#include "engine/keys.h"
#include "manifest/loader.h"
#include "plan/differ.h"
#include "plan/plan_file.h"
#include "util/atomic_file.h"
#include "util/env.h"
#include "util/json_limits.h"

namespace dbform::cli {

namespace {

// A plan with conflicts is never saved: nothing in it could be applied.
void save_plan(const PlanDocument& doc, const std::string& path, std::ostream& notes) {
  if (doc.plan.summary.conflict) {
    std::cerr << "The plan was not saved to " << path << ": it has conflicts.\n";
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

void add_format_option(CLI::App& cmd, std::string& format) {
  cmd.add_option("--format", format, "text (default), json (the plan document) or markdown (a PR comment)")
      ->check(CLI::IsMember({"text", "json", "markdown"}));
}

}  // namespace

void add_validate_command(CLI::App& app, int& exit_code) {
  auto opts = std::make_shared<ManifestOptions>();
  auto* cmd = app.add_subcommand("validate", "check the manifests without reading state or calling the API");
  add_manifest_options(*cmd, *opts);
  cmd->callback([opts, &exit_code] {
    Manifest m = load_manifests_or_throw(*opts);
    size_t services = 0, vpcs = 0, sets = 0, peerings = 0;
    for (const auto& p : m.projects) {
      services += p.services.size();
      vpcs += p.vpcs.size();
      for (const auto& v : p.vpcs) peerings += v.peerings.size();
      for (const auto& s : p.services) sets += s.read_replicas.size();
    }
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
  };
  auto opts = std::make_shared<Options>();
  auto* cmd = app.add_subcommand("plan", "show what apply would do");
  add_manifest_options(*cmd, opts->manifests);
  add_state_options(*cmd, opts->state, true);  // --lock-timeout: plan --refresh takes the lock
  cmd->add_flag("--detailed-exitcode", opts->detailed_exitcode, "exit 0 no changes, 1 error, 2 changes pending");
  add_format_option(*cmd, opts->format);
  cmd->add_option("--out", opts->out, "also save the plan to FILE, for `dbform apply FILE` (whatever --format is)");
  add_planning_options(*cmd, opts->planning);
  add_no_color_flag(*cmd);
  cmd->callback([opts, &exit_code] {
    PlanDocument doc;
    Manifest manifest = load_manifests_or_throw(opts->manifests, &doc.diagnostics);
    auto store = open_state_store(opts->state);
    const PlanSettings settings = planning_settings(opts->planning);
    // A refresh records what it reads, under the lock, like an apply.
    auto lock = settings.refresh ? store->lock("plan", lock_timeout(opts->state)) : nullptr;
    auto stored = store->read();
    State state = stored ? std::move(*stored) : new_state();
    if (settings.refresh) {
      auto api = make_api();
      try {
        doc.plan = plan_refreshed(manifest, state, *store, settings, *api->client, api->clock).plan;
      } catch (const MissingKeyError& e) {
        throw MissingKeyError(std::string(e.what()) +
                              "\nA plan lists what exists first, with each project's key. `dbform plan --no-refresh` "
                              "plans from the state alone, without keys (and without seeing drift)");
      }
    } else {
      doc.plan = plan_of(manifest, state, settings);  // needs no API key
    }
    if (!stored) doc.plan.state_lineage.clear();  // "no state yet", which apply checks again
    doc.manifest_paths = opts->manifests.files;
    doc.manifest_files = manifest.files;
    doc.created_at = format_utc(std::chrono::system_clock::now());

    if (opts->format == "text" && !stored) std::cout << no_state_note(*store) << "\n\n";
    print_plan(doc, opts->format);
    // Notes go where they cannot spoil a document on stdout.
    if (!opts->out.empty()) save_plan(doc, opts->out, opts->format == "text" ? std::cout : std::cerr);

    if (doc.plan.summary.conflict) exit_code = 1;
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
  auto* cmd = app.add_subcommand("show", "render a plan saved by `dbform plan --out`, without a state or an API key");
  cmd->add_option("planfile", opts->file, "the saved plan")->required();
  add_format_option(*cmd, opts->format);
  add_no_color_flag(*cmd);
  cmd->callback([opts, &exit_code] {
    print_plan(read_plan_file(opts->file), opts->format);
    exit_code = 0;
  });
}

}  // namespace dbform::cli
