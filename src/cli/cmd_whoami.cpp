// `dbform whoami`: which key each project would use, where it comes from, and whether it is that
// project's key; resolved exactly as `apply` resolves them.
#include <iostream>

#include "cli/commands.h"
#include "cli/context.h"
#include "cli/manual.h"
#include "ops/connections.h"
#include "ops/whoami.h"
#include "util/env.h"
#include "util/text.h"

namespace dbform::cli {

namespace {

// One verdict's line, as `dbform whoami` prints it; false when the key is missing, refused, not
// checked or another project's.
bool print_verdict(const KeyVerdict& v) {
  const std::string head = "Project " + v.project + ": ";
  switch (v.is) {
    case KeyVerdict::Is::Found:
      std::cout << head << "a key from " << v.variable << " (not checked: --offline)\n";
      return true;
    case KeyVerdict::Is::Ok:
      std::cout << head << "ok, " << v.key << "\n";
      return true;
    case KeyVerdict::Is::NoKey:
      std::cout << head << "NO KEY: " << v.why << "\n";
      return false;
    case KeyVerdict::Is::WrongProject:
      std::cout << head << "WRONG PROJECT: " << v.key << " belongs to project " << v.owner_id
                << (v.owner_name.empty() ? "" : " (" + v.owner_name + ")") << ". Set " << v.variable
                << " to a key of project " << v.project << "\n";
      return false;
    case KeyVerdict::Is::NotChecked:
      std::cout << head << "NOT CHECKED: the API gave no answer to the key from " << v.variable << ": " << v.why
                << "\n";
      return false;
    case KeyVerdict::Is::Refused:
      std::cout << head << "REFUSED: the key from " << v.variable << ": " << v.why << "\n";
      return false;
  }
  return false;
}

}  // namespace

void add_whoami_command(CLI::App& app, int& exit_code) {
  auto project = std::make_shared<std::string>();
  auto manifests = std::make_shared<ManifestOptions>();
  auto offline = std::make_shared<bool>(false);
  auto* cmd = add_command(app, "whoami", "check the API key of each project the manifests declare (as apply would "
                                         "resolve it), or of DBFORM_API_KEY",
                          {.text = "For each project the manifests declare (`-f`, else those in the working directory), "
                                   "resolves its key exactly as plan and apply do (the variable its `api_key_env` names, "
                                   "else `DBFORM_API_KEY_<PROJECT>`, else `DBFORM_API_KEY`), asks the API whom it belongs "
                                   "to (`GET /auth/info`) and prints the variable, the key's name and its project, never the "
                                   "key. Exit status 1 when a key is missing, refused, or belongs to another project. "
                                   "Without manifests it checks `DBFORM_API_KEY` (or `--project ID`'s key). With "
                                   "`--offline` it asks nothing: it says which variable would give each project its key, "
                                   "and exits 0 when every project has one, 1 when one has none (what a pipeline asks "
                                   "before it decides between `plan` and `plan --no-refresh`: keys may come from "
                                   "`DBFORM_API_KEY`, `DBFORM_API_KEY_<PROJECT>` or the variable an `api_key_env` names).",
                           .environment = kApiEnvironment,
                           .examples = {{"Check every key a pipeline will use, before it plans", "dbform whoami -f manifests/"},
                                        {"Check one project's key", "dbform whoami --project acme"},
                                        {"Whether every project has a key, asking nothing (a pipeline's choice of refresh)",
                                         "dbform whoami --offline -f manifests/ && dbform plan -f manifests/"}}});
  add_manifest_options(*cmd, *manifests);
  cmd->add_option("--project", *project, "check this project's key (also when no manifest declares it)");
  cmd->add_flag("--offline", *offline,
                "ask the API nothing: say which variable gives each project its key; exit 1 when a project has none");
  cmd->callback([project, manifests, offline, cmd, &exit_code] {
    const Manifest manifest = manifests_if_any(*manifests, cmd->count("--file") > 0);
    std::vector<std::string> projects;
    for (const auto& p : manifest.projects)
      if (project->empty() || p.id == *project) projects.push_back(p.id);
    if (!project->empty() && projects.empty()) projects.push_back(*project);
    if (*offline) {
      bool all_keyed = true;
      if (projects.empty()) {
        all_keyed = checked_env(process_env(), "DBFORM_API_KEY").has_value();
        std::cout << (all_keyed ? "A key from DBFORM_API_KEY (not checked: --offline)\n"
                                : "NO KEY: DBFORM_API_KEY is not set, and no manifest declares a project\n");
      }
      for (const auto& p : projects)
        all_keyed = print_verdict(resolve_project_key(manifest, p, process_env())) && all_keyed;
      exit_code = all_keyed ? 0 : 1;
      return;
    }
    auto api = make_api();
    std::cout << "API: " << redact_url(api->base_url()) << "\n";
    if (projects.empty()) {  // no manifest here: the default key alone
      const KeyVerdict v = check_default_key(*api->client, process_env());
      std::cout << "Project " << v.owner_id << (v.owner_name.empty() ? "" : " (" + v.owner_name + ")") << ": "
                << v.key << "\n";
      exit_code = 0;
      return;
    }
    bool all_ok = true;
    for (const auto& p : projects)
      all_ok = print_verdict(check_project_key(*api->client, manifest, p, process_env())) && all_ok;
    exit_code = all_ok ? 0 : 1;
  });
}

}  // namespace dbform::cli
