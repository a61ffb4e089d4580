#include "manifest/interpolate.h"

namespace dbform {

namespace {

bool is_name_start(char c) { return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || c == '_'; }
bool is_name_char(char c) { return is_name_start(c) || (c >= '0' && c <= '9'); }

bool is_variable_name(std::string_view s) {
  if (s.empty() || !is_name_start(s[0])) return false;
  for (char c : s)
    if (!is_name_char(c)) return false;
  return true;
}

const char* kEscapeHint = "write $${ for a literal ${";

// `${DBFORM_...}`: dbform's own variables (API keys, the state, its passphrase) are never a
// manifest's input, and DBFORM_VAR_DBFORM_... is surely not what was meant.
InterpolationProblem own_variable(const std::string& name) {
  const std::string prefix(kManifestVariablePrefix);
  if (name.rfind(prefix, 0) == 0 && name.size() > prefix.size())
    return {"`${" + name + "}` would read " + prefix + name + ": `${NAME}` reads " + prefix + "NAME",
            "write ${" + name.substr(prefix.size()) + "}: it reads " + name};
  return {"`${" + name + "}` names dbform's own variable `" + name +
              "`, which a manifest never reads: `${NAME}` reads only " + prefix + "NAME",
          "a project's API key is named by `api_key_env`, never interpolated; for a value of your own, set " +
              prefix + "X and write ${X}"};
}

InterpolationProblem unset(const std::string& name, const std::string& variable, bool bare_is_set) {
  if (bare_is_set)
    return {"`${" + name + "}` reads `" + variable + "`, which is not set (or is empty); `" + name +
                "` is set, but a manifest reads only " + std::string(kManifestVariablePrefix) + " variables",
            "set " + variable + " to the value the manifest should read (never a copy of a token or key), or " +
                kEscapeHint};
  return {"environment variable `" + variable + "` (read by `${" + name + "}`) is not set (or is empty)",
          "set " + variable + " before running dbform, or " + kEscapeHint};
}

}  // namespace

Interpolated interpolate(std::string_view raw, const EnvLookup& env) {
  Interpolated out;
  out.text.reserve(raw.size());
  size_t i = 0;
  while (i < raw.size()) {
    if (raw.compare(i, 3, "$${") == 0) {
      out.text += "${";
      i += 3;
      continue;
    }
    if (raw.compare(i, 2, "${") != 0) {
      out.text += raw[i++];
      continue;
    }
    size_t close = raw.find('}', i + 2);
    if (close == std::string_view::npos) {
      out.problems.push_back({"unterminated `${` (no closing `}`)", kEscapeHint});
      out.text += raw.substr(i);
      break;
    }
    std::string_view reference = raw.substr(i, close + 1 - i);
    std::string name(raw.substr(i + 2, close - i - 2));
    i = close + 1;
    if (!is_variable_name(name)) {
      out.problems.push_back({"`" + std::string(reference) +
                                  "` is not a variable reference: expected ${NAME}, NAME made of letters, "
                                  "digits and _ (defaults like ${X:-y} are not supported)",
                              kEscapeHint});
      continue;
    }
    if (name.rfind("DBFORM_", 0) == 0) {
      out.problems.push_back(own_variable(name));
      continue;
    }
    const std::string variable = std::string(kManifestVariablePrefix) + name;
    auto value = env(variable);
    if (!value) {
      out.problems.push_back(unset(name, variable, env(name).has_value()));
      continue;
    }
    out.text += *value;
    out.substituted = true;
  }
  return out;
}

}  // namespace dbform
