#include "ops/address.h"

#include <algorithm>
#include <functional>

#include "manifest/model.h"
#include "util/error.h"
#include "util/text.h"

namespace dbform {

namespace {

// A resource as a user may name it: by address, or by a short form.
struct Named {
  std::string address;
  ResourceKind kind;
  std::string name;
};

// `KIND/NAME` (`services/orders`, `replicas/reporting`).
std::string kind_slash_name(const Named& n) { return std::string(kind_plural(n.kind)) + "/" + n.name; }

// The one of `among` that `text` names: its full address, or `KIND/NAME` or `NAME` when exactly one
// has it. Throws UsageError saying what matched (several) or, through `none`, what is close.
size_t pick(const std::vector<Named>& among, const std::string& text,
            const std::function<std::string(const std::string& close)>& none) {
  std::vector<size_t> found;
  for (size_t i = 0; i < among.size(); ++i) {
    if (among[i].address == text) return i;
    if (among[i].name == text || kind_slash_name(among[i]) == text) found.push_back(i);
  }
  if (found.size() == 1) return found.front();
  if (found.size() > 1) {
    std::vector<std::string> addrs;
    for (size_t i : found) addrs.push_back(among[i].address);
    throw UsageError("`" + text + "` is ambiguous: it matches " + join(addrs, ", ") + ". Use the full address");
  }
  // Suggest in the form the user typed: full address, `kind/name` or bare name.
  std::vector<std::string> all;
  const auto slashes = std::count(text.begin(), text.end(), '/');
  for (const auto& n : among) all.push_back(slashes >= 2 ? n.address : slashes == 1 ? kind_slash_name(n) : n.name);
  throw UsageError(none(closest_match(text, all)));
}

}  // namespace

const ResourceRecord& resolve_address(const State& state, const std::string& text) {
  if (const ResourceRecord* exact = state.find(text)) return *exact;
  std::vector<Named> among;
  for (const auto& r : state.resources) among.push_back({r.address, r.kind, r.name});
  return state.resources[pick(among, text, [&](const std::string& close) {
    return "no resource `" + text + "` in the state" +
           (close.empty() ? std::string(". `dbform state list` shows what is recorded") : ". Did you mean `" + close + "`?");
  })];
}

std::string declared_address(const Manifest& manifest, const std::string& text) {
  std::vector<Named> among;
  for (const auto& p : manifest.projects)
    for_each_declaration(p, [&](const Declaration& d) {
      among.push_back({resource_address(p.id, d.kind, d.name, d.parent), d.kind, d.name});
    });
  return among[pick(among, text, [&](const std::string& close) {
           return "`" + text + "` is not declared in the manifests" +
                  (close.empty() ? std::string() : " (did you mean `" + close + "`?)") +
                  "; nothing was changed. Declare it first, so that dbform manages what it imports (an undeclared "
                  "record would be an orphan, which --prune deletes), then import it";
         })].address;
}

std::vector<std::string> planned_addresses(const Plan& plan, const std::vector<std::string>& texts) {
  std::vector<Named> among;
  for (const auto& a : plan.actions) among.push_back({a.address, a.kind, a.name});
  std::vector<std::string> out;
  for (const auto& text : texts)
    out.push_back(among[pick(among, text, [&](const std::string& close) {
                    return "--target `" + text + "`: no resource of that address is declared or recorded" +
                           (close.empty() ? std::string() : " (did you mean `" + close + "`?)") + "; nothing was changed";
                  })].address);
  return out;
}

}  // namespace dbform
