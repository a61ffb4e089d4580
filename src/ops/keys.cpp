#include "ops/keys.h"

#include "api/project_key.h"
#include "util/env.h"
#include "util/error.h"
#include "util/text.h"

namespace dbform {

std::map<std::string, ProjectKey> resolve_keys(const Manifest& manifest, const std::vector<std::string>& project_ids,
                                               const EnvLookup& env) {
  std::map<std::string, ProjectKey> keys;
  std::vector<std::string> missing;
  for (const auto& id : project_ids) {
    std::vector<std::string> candidates;
    for (const auto& p : manifest.projects)
      if (p.id == id && p.api_key_env) candidates.push_back(*p.api_key_env);
    candidates.push_back(project_key_variable(id));
    candidates.push_back("DBFORM_API_KEY");
    bool found = false;
    for (const auto& var : candidates) {
      if (auto v = checked_env(env, var)) {
        keys[id] = {*v, var};
        found = true;
        break;
      }
    }
    if (!found) missing.push_back("project `" + id + "`: none of " + join(candidates, ", ") + " is set");
  }
  if (!missing.empty())
    throw MissingKeyError("no API key for " + std::to_string(missing.size()) + " project(s):\n  " +
                          join(missing, "\n  "));
  return keys;
}

}  // namespace dbform
