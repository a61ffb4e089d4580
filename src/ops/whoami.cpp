#include "ops/whoami.h"

#include <map>

#include "api/client.h"
#include "api/models.h"
#include "api/project_key.h"
#include "ops/keys.h"
#include "util/error.h"

namespace dbform {

namespace {

std::string describe_key(const AuthInfo& info, const std::string& variable) {
  return "key `" + info.key_name + "` from " + variable + " (public key " + info.public_key + "), issued by " +
         info.user_name + (info.user_email.empty() ? "" : " <" + info.user_email + ">") +
         (info.created.empty() ? "" : " on " + info.created);
}

}  // namespace

KeyVerdict resolve_project_key(const Manifest& manifest, const std::string& project, const EnvLookup& env) {
  KeyVerdict verdict{.project = project};
  try {
    verdict.variable = resolve_keys(manifest, {project}, env).at(project).variable;
  } catch (const Error& e) {
    verdict.is = KeyVerdict::Is::NoKey;
    verdict.why = e.what();
  }
  return verdict;
}

KeyVerdict check_project_key(ApiClient& api, const Manifest& manifest, const std::string& project,
                             const EnvLookup& env) {
  KeyVerdict verdict{.project = project};
  std::map<std::string, ProjectKey> keys;
  try {
    keys = resolve_keys(manifest, {project}, env);
  } catch (const Error& e) {
    verdict.is = KeyVerdict::Is::NoKey;
    verdict.why = e.what();
    return verdict;
  }
  const ProjectKey& key = keys.at(project);
  verdict.variable = key.variable;
  try {
    const AuthInfo info = api.auth_info(key.key);
    verdict.key = describe_key(info, key.variable);
    verdict.owner_id = info.project_id;
    verdict.owner_name = info.project_name;
    verdict.is = !info.project_id.empty() && info.project_id != project ? KeyVerdict::Is::WrongProject
                                                                        : KeyVerdict::Is::Ok;
  } catch (const ApiError& e) {
    // No answer (the network, a refused certificate) says nothing about the key.
    verdict.is = e.status() == 0 ? KeyVerdict::Is::NotChecked : KeyVerdict::Is::Refused;
    verdict.why = e.what();
  } catch (const Error& e) {
    verdict.is = KeyVerdict::Is::Refused;
    verdict.why = e.what();
  }
  return verdict;
}

KeyVerdict check_default_key(ApiClient& api, const EnvLookup& env) {
  auto key = checked_env(env, "DBFORM_API_KEY");
  if (!key) throw UsageError("no API key: set DBFORM_API_KEY, or run whoami where the manifests are (-f PATH)");
  const AuthInfo info = api.auth_info(*key);
  return KeyVerdict{.is = KeyVerdict::Is::Ok,
                    .variable = "DBFORM_API_KEY",
                    .key = describe_key(info, "DBFORM_API_KEY"),
                    .owner_id = info.project_id,
                    .owner_name = info.project_name};
}

}  // namespace dbform
