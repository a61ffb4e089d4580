#include "manifest/interpolated_secrets.h"

#include <algorithm>
#include <unordered_map>
#include <unordered_set>

#include "manifest/interpolate.h"
#include "util/runner_secrets.h"
#include "util/text.h"

namespace dbform {

namespace {

// As scrub(): a shorter value would mask ordinary words.
constexpr size_t kShortestHiddenSecret = 6;

// Whether the variable `name` holds a secret whatever the manifest names (a pull request may drop the
// project whose api_key_env named a key, then interpolate it): libpq's PGPASSWORD, and every DBFORM_
// variable but the manifests' own whose name says key, passphrase, password, secret or token.
bool secret_by_name(const std::string& name) {
  if (name == "PGPASSWORD") return true;
  if (name.rfind("DBFORM_", 0) != 0 || name.rfind(kManifestVariablePrefix, 0) == 0 || name.ends_with("_FILE"))
    return false;  // a _FILE names where a secret is (DBFORM_STATE_KEY_FILE), not the secret
  for (const char* word : {"KEY", "PASSPHRASE", "PASSWORD", "SECRET", "TOKEN"})
    if (name.find(word) != std::string::npos) return true;
  return false;
}

// The values of the variables dbform treats as secret (value, variable): the projects' API keys,
// the passphrases, those secret_by_name, and the runner's secrets (the state database's password,
// libpq's). Each is remembered: any text shown later masks it.
std::vector<std::pair<std::string, std::string>> secret_values(const Manifest& manifest, const EnvLookup& env,
                                                               std::vector<std::string>& key_variables) {
  key_variables = {"DBFORM_API_KEY", "DBFORM_STATE_PASSPHRASE", "DBFORM_STATE_NEW_PASSPHRASE"};
  for (const auto& p : manifest.projects) {
    if (p.api_key_env) key_variables.push_back(*p.api_key_env);
    key_variables.push_back(project_key_variable(p.id));
  }
  for (const auto& name : process_env_names())
    if (secret_by_name(name) && std::find(key_variables.begin(), key_variables.end(), name) == key_variables.end())
      key_variables.push_back(name);
  std::vector<std::pair<std::string, std::string>> values;
  for (const auto& var : key_variables) {
    if (auto v = env(var); v && v->size() >= kShortestHiddenSecret) {
      values.emplace_back(*v, var);
      remember_secret(*v);
    }
  }
  for (auto& [value, from] : runner_secrets(env)) {
    if (value.size() < kShortestHiddenSecret) continue;
    remember_secret(value);
    values.emplace_back(std::move(value), std::move(from));
  }
  return values;
}

// A manifest value is printed in plans and pull-request comments: interpolating a variable that
// holds an API key (a DBFORM_VAR_ variable an api_key_env names, or one holding the same value as
// a key variable) is an error.
void check_no_key_interpolated(const std::vector<std::string>& key_variables,
                               const std::vector<std::pair<std::string, std::string>>& key_values,
                               const std::vector<EnvUse>& uses, Diagnostics& diags) {
  std::unordered_set<std::string> reported;  // once per file and variable, however often it is used
  for (const auto& use : uses) {
    if (!reported.insert(use.file + '\n' + use.name).second) continue;
    const bool named = std::find(key_variables.begin(), key_variables.end(), use.name) != key_variables.end();
    std::string holds;
    for (const auto& [value, var] : key_values)
      if (use.value && *use.value == value) holds = var;
    if (!named && holds.empty()) continue;
    diags.error({use.file}, "", use.name + " (read by ${" + use.name.substr(kManifestVariablePrefix.size()) + "}) " +
                                    (named ? "is a secret variable" : "holds the same value as " + holds) +
                                    ": interpolating it would print a secret in plans and pull-request comments",
                "dbform reads keys from the environment itself (api_key_env); remove the ${" +
                    use.name.substr(kManifestVariablePrefix.size()) + "}");
  }
}

// The places of the values interpolated with a secret in them, and which secret's variable.
std::unordered_map<std::string, std::string> places_of_secrets(
    const std::vector<std::pair<std::string, std::string>>& secrets, const std::vector<InterpolatedValue>& interpolated) {
  std::unordered_map<std::string, std::string> places;
  for (const auto& value : interpolated)
    for (const auto& [secret, var] : secrets)
      if (value.text.find(secret) != std::string::npos) places.emplace(value.where.str(), var);
  return places;
}

// `d` fit to show: a diagnostic about a value interpolated with a secret in it is replaced whole
// (its hints may hold a changed copy of the value: a region's lower-cased suggestion), and any
// other text holding a secret (a name or id quoted by a check across files) has it as "***".
Diagnostic hide_secrets(Diagnostic d, const std::vector<std::pair<std::string, std::string>>& secrets,
                        const std::unordered_map<std::string, std::string>& places) {
  if (auto it = places.find(d.location.str()); it != places.end()) {
    d.message = "the value interpolated here holds the value of " + it->second +
                ", a secret: it is not shown, nor what is wrong with it";
    d.hint = "interpolate a DBFORM_VAR_ variable that holds no key or passphrase";
    return d;
  }
  for (const auto& [secret, var] : secrets) {
    for (std::string* text : {&d.message, &d.hint, &d.field})
      for (size_t at = text->find(secret); at != std::string::npos; at = text->find(secret, at + 3))
        text->replace(at, secret.size(), "***");
  }
  return d;
}

}  // namespace

EnvLookup recording_uses(const EnvLookup& env, std::vector<EnvUse>& uses, const std::string& file) {
  return [&env, &uses, file](const std::string& name) {
    auto value = env(name);
    if (name.rfind(kManifestVariablePrefix, 0) == 0) uses.push_back({file, name, value});
    return value;
  };
}

void add_hiding_secrets(const Manifest& manifest, const EnvLookup& env, const std::vector<EnvUse>& uses,
                        const std::vector<InterpolatedValue>& interpolated, Diagnostics& found, Diagnostics& diags) {
  std::vector<std::string> key_variables;
  const auto secrets = secret_values(manifest, env, key_variables);
  check_no_key_interpolated(key_variables, secrets, uses, found);
  const auto places = places_of_secrets(secrets, interpolated);
  for (const auto& d : found.items()) diags.add(secrets.empty() ? d : hide_secrets(d, secrets, places));
}

}  // namespace dbform
