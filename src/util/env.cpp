#include "util/env.h"

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

}  // namespace dbform
