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
    auto value = env(name);
    if (!value) {
      out.problems.push_back({"environment variable `" + name + "` is not set (or is empty)",
                              "set " + name + " before running dbform, or " + kEscapeHint});
      continue;
    }
    out.text += *value;
    out.substituted = true;
  }
  return out;
}

}  // namespace dbform
