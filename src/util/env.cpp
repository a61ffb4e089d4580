#include "util/env.h"

#include <unistd.h>

#include <algorithm>
#include <cstdlib>

#include "util/error.h"

namespace dbform {

EnvLookup process_env() {
  return [](const std::string& name) -> std::optional<std::string> {
    const char* v = std::getenv(name.c_str());
    if (!v || !*v) return std::nullopt;
    return std::string(v);
  };
}

std::vector<std::string> process_env_names() {
  std::vector<std::string> names;
  for (char** e = environ; e && *e; ++e) {
    const std::string_view entry(*e);
    names.emplace_back(entry.substr(0, entry.find('=')));
  }
  return names;
}

bool has_control_character(std::string_view text) {
  return std::any_of(text.begin(), text.end(), [](unsigned char c) { return c < 0x20 || c == 0x7f; });
}

std::optional<std::string> checked_env(const EnvLookup& env, const std::string& name) {
  auto value = env(name);
  if (value && has_control_character(*value))
    throw UsageError(name + " holds a control character (a line break, a tab or an escape; a trailing newline "
                            "from a file read with $(cat ...) or a secret store?): refusing to use it. Set it "
                            "without that character");
  return value;
}

std::optional<std::string> find_on_path(const std::string& program) {
  const char* path = std::getenv("PATH");
  const std::string dirs = path ? path : "/usr/bin:/bin";
  for (size_t start = 0; start <= dirs.size();) {
    size_t colon = dirs.find(':', start);
    if (colon == std::string::npos) colon = dirs.size();
    const std::string dir = dirs.substr(start, colon - start);
    start = colon + 1;
    if (dir.empty()) continue;
    const std::string candidate = dir + "/" + program;
    if (::access(candidate.c_str(), X_OK) == 0) return candidate;
  }
  return std::nullopt;
}

}  // namespace dbform
