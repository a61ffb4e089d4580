#include "util/diagnostics.h"

#include "util/escape.h"

#include <algorithm>

namespace dbform {

std::string Location::str() const {
  std::string s = shown_text(file);  // a pull request names its files: a line break in one forges no line
  if (line > 0) {
    s += ":" + std::to_string(line);
    if (column > 0) s += ":" + std::to_string(column);
  }
  return s;
}

std::string Diagnostic::str() const {
  std::string s;
  std::string loc = location.str();
  if (!loc.empty()) s += loc + ": ";
  s += severity == Severity::Error ? "error: " : "warning: ";
  if (!field.empty()) s += field + ": ";
  s += message;
  if (!hint.empty()) s += " (" + hint + ")";
  return s;
}

void Diagnostics::error(Location loc, std::string field, std::string message, std::string hint) {
  items_.push_back({Severity::Error, std::move(loc), std::move(field), std::move(message), std::move(hint)});
}

void Diagnostics::warning(Location loc, std::string field, std::string message, std::string hint) {
  items_.push_back({Severity::Warning, std::move(loc), std::move(field), std::move(message), std::move(hint)});
}

size_t Diagnostics::error_count() const {
  return std::count_if(items_.begin(), items_.end(),
                       [](const Diagnostic& d) { return d.severity == Severity::Error; });
}

bool Diagnostics::has_errors() const { return error_count() > 0; }

std::string Diagnostics::str() const {
  std::string s;
  for (const auto& d : items_) s += d.str() + "\n";
  return s;
}

}  // namespace dbform
