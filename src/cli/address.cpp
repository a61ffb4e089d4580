#include "cli/address.h"

#include "manifest/model.h"

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

std::string declared_address(const Manifest& manifest, const std::string& text) {
  std::vector<std::string> found, all;
  auto consider = [&](const std::string& project, ResourceKind kind, const std::string& name,
                      const std::string& parent = "") {
    const std::string address = resource_address(project, kind, name, parent);
    all.push_back(address);
    if (text == address) found = {address};
    else if (text == name || text == std::string(kind_plural(kind)) + "/" + name) found.push_back(address);
  };
  for (const auto& p : manifest.projects) {
    for (const auto& v : p.vpcs) {
      consider(p.id, ResourceKind::Vpc, v.name);
      for (const auto& peering : v.peerings) consider(p.id, ResourceKind::Peering, peering.peer_vpc_id, v.name);
    }
    for (const auto& s : p.services) {
      consider(p.id, ResourceKind::Service, s.name);
      for (const auto& set : s.read_replicas) consider(p.id, ResourceKind::ReplicaSet, set.name, s.name);
    }
  }
  if (found.size() == 1) return found.front();
  if (found.size() > 1)
    throw UsageError("`" + text + "` is ambiguous: it matches " + join(found, ", ") + ". Use the full address");
  std::string close = closest_match(text, all);
  throw UsageError("`" + text + "` is not declared in the manifests" +
                   (close.empty() ? std::string() : " (did you mean `" + close + "`?)") +
                   "; nothing was changed. Declare it first, so that dbform manages what it imports (an undeclared "
                   "record would be an orphan, which --prune deletes), then import it");
}

}  // namespace dbform::cli
