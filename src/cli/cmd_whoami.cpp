// `dbform whoami`: which key each project would use, where it comes from, and whether it is that
// project's key; resolved exactly as `apply` resolves them.
#include <iostream>

#include "cli/commands.h"
#include "cli/context.h"
#include "cli/manual.h"
#include "ops/connections.h"
#include "util/env.h"
#include "util/text.h"

namespace dbform::cli {

namespace {

std::string describe_key(const AuthInfo& info, const std::string& variable) {
  return "key `" + info.key_name + "` from " + variable + " (public key " + info.public_key + "), issued by " +
         info.user_name + (info.user_email.empty() ? "" : " <" + info.user_email + ">") +
         (info.created.empty() ? "" : " on " + info.created);
}

// One project's verdict; false when its key is missing, refused or another project's.
bool check_project(ApiClient& api, const Manifest& manifest, const std::string& project) {
  std::map<std::string, ProjectKey> keys;
  try {
    keys = resolve_keys(manifest, {project}, process_env());
  } catch (const Error& e) {
    std::cout << "Project " << project << ": NO KEY: " << e.what() << "\n";
    return false;
  }
  const ProjectKey& key = keys.at(project);
  try {
    AuthInfo info = api.auth_info(key.key);
    if (!info.project_id.empty() && info.project_id != project) {
      std::cout << "Project " << project << ": WRONG PROJECT: " << describe_key(info, key.variable)
                << " belongs to project " << info.project_id
                << (info.project_name.empty() ? "" : " (" + info.project_name + ")") << ". Set " << key.variable
                << " to a key of project " << project << "\n";
      return false;
    }
    std::cout << "Project " << project << ": ok, " << describe_key(info, key.variable) << "\n";
    return true;
  } catch (const ApiError& e) {
    // No answer (the network, a refused certificate) says nothing about the key.
    std::cout << "Project " << project << ": "
              << (e.status() == 0 ? "NOT CHECKED: the API gave no answer to the key from "
                                  : "REFUSED: the key from ")
              << key.variable << ": " << e.what() << "\n";
    return false;
  } catch (const Error& e) {
    std::cout << "Project " << project << ": REFUSED: the key from " << key.variable << ": " << e.what() << "\n";
    return false;
  }
}

// `--offline`: whether the project has a key as plan resolves it, without asking the API; false
// when it has none.
bool project_has_key(const Manifest& manifest, const std::string& project) {
  try {
    const auto keys = resolve_keys(manifest, {project}, process_env());
    std::cout << "Project " << project << ": a key from " << keys.at(project).variable << " (not checked: --offline)\n";
    return true;
  } catch (const Error& e) {
    std::cout << "Project " << project << ": NO KEY: " << e.what() << "\n";
    return false;
  }
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
      for (const auto& p : projects) all_keyed = project_has_key(manifest, p) && all_keyed;
      exit_code = all_keyed ? 0 : 1;
      return;
    }
    auto api = make_api();
    std::cout << "API: " << redact_url(api->client->base_url()) << "\n";
    if (projects.empty()) {  // no manifest here: the default key alone
      auto key = checked_env(process_env(), "DBFORM_API_KEY");
      if (!key) throw UsageError("no API key: set DBFORM_API_KEY, or run whoami where the manifests are (-f PATH)");
      AuthInfo info = api->client->auth_info(*key);
      std::cout << "Project " << info.project_id << (info.project_name.empty() ? "" : " (" + info.project_name + ")")
                << ": " << describe_key(info, "DBFORM_API_KEY") << "\n";
      exit_code = 0;
      return;
    }
    bool all_ok = true;
    for (const auto& p : projects) all_ok = check_project(*api->client, manifest, p) && all_ok;
    exit_code = all_ok ? 0 : 1;
  });
}

}  // namespace dbform::cli
