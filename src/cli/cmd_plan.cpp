// `dbform validate` and `dbform plan`.
#include <iostream>

#include "cli/commands.h"
#include "cli/context.h"
#include "cli/render_plan.h"
#include "plan/differ.h"

namespace dbform::cli {

void add_validate_command(CLI::App& app, int& exit_code) {
  auto opts = std::make_shared<ManifestOptions>();
  auto* cmd = app.add_subcommand("validate", "check the manifests without reading state or calling the API");
  add_manifest_options(*cmd, *opts);
  cmd->callback([opts, &exit_code] {
    Manifest m = load_manifests_or_throw(*opts);
    size_t services = 0, vpcs = 0;
    for (const auto& p : m.projects) {
      services += p.services.size();
      vpcs += p.vpcs.size();
    }
    std::cout << "The manifests are valid: " << m.files.size() << " file(s), " << m.projects.size()
              << " project(s), " << vpcs << " VPC(s), " << services << " service(s).\n";
    exit_code = 0;
  });
}

void add_plan_command(CLI::App& app, int& exit_code) {
  struct Options {
    ManifestOptions manifests;
    StateOptions state;
    bool detailed_exitcode = false;
  };
  auto opts = std::make_shared<Options>();
  auto* cmd = app.add_subcommand("plan", "show what apply would do");
  add_manifest_options(*cmd, opts->manifests);
  add_state_options(*cmd, opts->state, false);
  cmd->add_flag("--detailed-exitcode", opts->detailed_exitcode, "exit 0 no changes, 1 error, 2 changes pending");
  cmd->callback([opts, &exit_code] {
    Manifest manifest = load_manifests_or_throw(opts->manifests);
    auto store = open_state_store(opts->state);
    State state = read_state(*store);
    Plan plan = make_plan(manifest, state);
    std::cout << render_plan_text(plan, detect_terminal());
    if (plan.summary.conflict) exit_code = 1;
    else if (opts->detailed_exitcode && plan.summary.has_changes()) exit_code = 2;
    else exit_code = 0;
  });
}

}  // namespace dbform::cli
