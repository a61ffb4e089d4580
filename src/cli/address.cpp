#include "cli/address.h"

#include <algorithm>

#include "util/error.h"
#include "util/text.h"

namespace dbform::cli {

namespace {

bool matches(const ResourceRecord& r, const std::string& text) {
  if (r.address == text || r.name == text) return true;
  return text == std::string(kind_plural(r.kind)) + "/" + r.name;
}

}  // namespace

const ResourceRecord& resolve_address(const State& state, const std::string& text) {
  if (const ResourceRecord* exact = state.find(text)) return *exact;
  std::vector<const ResourceRecord*> found;
  for (const auto& r : state.resources)
    if (matches(r, text)) found.push_back(&r);
  if (found.size() == 1) return *found.front();
  if (found.size() > 1) {
    std::vector<std::string> addrs;
    for (auto* r : found) addrs.push_back(r->address);
    throw UsageError("`" + text + "` is ambiguous: it matches " + join(addrs, ", ") + ". Use the full address");
  }
  // Suggest in the form the user typed: full address, `kind/name` or bare name.
  std::vector<std::string> all;
  const auto slashes = std::count(text.begin(), text.end(), '/');
  for (const auto& r : state.resources)
    all.push_back(slashes >= 2 ? r.address : slashes == 1 ? std::string(kind_plural(r.kind)) + "/" + r.name : r.name);
  std::string close = closest_match(text, all);
  throw UsageError("no resource `" + text + "` in the state" +
                   (close.empty() ? std::string(". `dbform state list` shows what is recorded")
                                  : ". Did you mean `" + close + "`?"));
}

}  // namespace dbform::cli
