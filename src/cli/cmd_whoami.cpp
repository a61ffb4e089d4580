// `dbform whoami`: which key is in use and which project it belongs to.
#include <iostream>

#include "cli/commands.h"
#include "cli/context.h"
#include "util/env.h"
#include "util/text.h"

namespace dbform::cli {

void add_whoami_command(CLI::App& app, int& exit_code) {
  auto project = std::make_shared<std::string>();
  auto* cmd = app.add_subcommand("whoami", "show the API key's name, project and issuing user");
  cmd->add_option("--project", *project, "use the key dbform would use for this project (DBFORM_API_KEY_<ID>)");
  cmd->callback([project, &exit_code] {
    auto env = process_env();
    std::vector<std::string> vars;
    if (!project->empty()) vars.push_back(project_key_variable(*project));
    vars.push_back("DBFORM_API_KEY");
    std::string var, key;
    for (const auto& v : vars)
      if (auto k = env(v)) {
        var = v;
        key = *k;
        break;
      }
    if (key.empty()) throw UsageError("no API key: set " + join(vars, " or "));
    auto api = make_api();
    AuthInfo info = api->client->auth_info(key);
    std::cout << "Key:     " << info.key_name << " (from " << var << ", public key " << info.public_key << ")\n"
              << "Project: " << info.project_id << (info.project_name.empty() ? "" : " (" + info.project_name + ")")
              << (info.plan_type.empty() ? "" : ", plan " + info.plan_type) << "\n"
              << "Issued by: " << info.user_name << (info.user_email.empty() ? "" : " <" + info.user_email + ">")
              << (info.created.empty() ? "" : " on " + info.created) << "\n"
              << "API:     " << api->client->base_url() << "\n";
    exit_code = 0;
  });
}

}  // namespace dbform::cli
