#include "plan/stale_plan.h"

#include <algorithm>
#include <optional>
#include <set>
#include <unordered_map>

#include "util/json_limits.h"
#include "util/text.h"

namespace dbform {

namespace {

using nlohmann::json;

std::unordered_map<std::string, const PlannedAction*> by_address(const Plan& plan) {
  std::unordered_map<std::string, const PlannedAction*> out;
  for (const auto& a : plan.actions) out.emplace(a.address, &a);
  return out;
}

const PlannedAction* planned_at(const std::unordered_map<std::string, const PlannedAction*>& actions,
                                const std::string& address) {
  auto found = actions.find(address);
  return found == actions.end() ? nullptr : found->second;
}

// As the text plan shows a value: JSON, "(unset)" for none.
std::string value_shown(const json& v) { return v.is_null() ? "(unset)" : dump_json(v); }

// What the plan does to the resource.
std::string plan_does(const PlannedAction& a) {
  if (!a.import_id.empty() && a.action != Action::Conflict) return "imports it";
  switch (a.action) {
    case Action::Create: return "creates it";
    case Action::NoOp: return is_unrecorded_removal(a) ? "has nothing to forget" : "leaves it unchanged";
    case Action::Wait: return "waits for it";
    case Action::Adopt: return "adopts it (else creates it)";
    case Action::Update: return "updates it in place";
    case Action::Delete: return "deletes it";
    case Action::Replace: return "replaces it";
    case Action::Conflict: return "cannot apply it (a conflict)";
    case Action::Orphan: return "keeps it as an orphan";
    case Action::Forget: return "forgets it";
  }
  return "plans it";
}

// What the resource has of `field` as the plan read it: the change's `before`, or, when the field
// does not change, the declared value (what exists matches it). None when nothing is recorded.
std::optional<json> existing_value(const PlannedAction& a, const std::string& field) {
  if (a.before.is_null() || !a.after.is_object() || a.action == Action::Create || a.action == Action::Adopt)
    return std::nullopt;
  for (const auto& c : a.changes)
    if (c.field == field) return c.before;
  return a.after.value(field, json());
}

bool changed_outside(const PlannedAction& a, const std::string& field) {
  return std::any_of(a.changes.begin(), a.changes.end(), [&](const FieldChange& c) { return c.field == field && c.drift; });
}

std::set<std::string> fields_of(const PlannedAction& a) {
  std::set<std::string> out;
  if (a.after.is_object())
    for (auto it = a.after.begin(); it != a.after.end(); ++it) out.insert(it.key());
  for (const auto& c : a.changes) out.insert(c.field);
  return out;
}

std::string calls_shown(const PlannedAction& a) {
  std::vector<std::string> names;
  for (const auto& c : a.calls) names.push_back(c.call);
  return names.empty() ? "none" : join(names, ", ");
}

// The parts of one resource's difference; `declared` is set when a declared value differs.
std::vector<std::string> differences(const PlannedAction& then, const PlannedAction& now, bool& declared) {
  std::vector<std::string> parts;
  std::set<std::string> fields = fields_of(then);
  fields.merge(fields_of(now));
  for (const auto& field : fields) {
    if (then.after.is_object() && now.after.is_object()) {
      const json was = then.after.value(field, json()), is = now.after.value(field, json());
      if (was != is) {
        declared = true;
        parts.push_back("declared " + field + " " + value_shown(was) + " when the plan was made, " + value_shown(is) + " now");
        continue;
      }
    }
    const auto was = existing_value(then, field), is = existing_value(now, field);
    if (was && is && *was != *is)
      parts.push_back(field + " " + value_shown(*was) + " when the plan was made, " + value_shown(*is) + " now" +
                      (changed_outside(now, field) ? " (changed outside dbform)" : ""));
  }
  if (then.status != now.status && !then.status.empty() && !now.status.empty())
    parts.push_back("status " + then.status + " when the plan was made, " + now.status + " now");
  if (then.resource_id != now.resource_id)
    parts.push_back("id " + (then.resource_id.empty() ? std::string("none") : then.resource_id) +
                    " when the plan was made, " + (now.resource_id.empty() ? std::string("none") : now.resource_id) +
                    " now");
  const std::string did = plan_does(then), does = plan_does(now);
  if (did != does) {
    std::string line = "the saved plan " + did + ", a plan now " + does;
    if (!now.reason.empty()) line += ": " + now.reason;
    parts.push_back(line);
  } else if (parts.empty() && calls_shown(then) != calls_shown(now)) {
    parts.push_back("calls " + calls_shown(then) + " in the saved plan, " + calls_shown(now) + " now");
  } else if (parts.empty()) {
    parts.push_back("planned otherwise now" + (now.reason.empty() ? std::string() : ": " + now.reason));
  }
  return parts;
}

}  // namespace

PlanDifferences explain_differences(const Plan& saved, const Plan& now, const std::vector<std::string>& addresses) {
  PlanDifferences out;
  const auto saved_actions = by_address(saved), now_actions = by_address(now);
  for (const auto& address : addresses) {
    const PlannedAction* then = planned_at(saved_actions, address);
    const PlannedAction* is = planned_at(now_actions, address);
    std::vector<std::string> parts;
    if (then && is) parts = differences(*then, *is, out.declared);
    else if (then) parts.push_back("the saved plan " + plan_does(*then) + "; a plan now does not name it");
    else if (is) parts.push_back("not in the saved plan; a plan now " + plan_does(*is) + (is->reason.empty() ? "" : ": " + is->reason));
    if (out.lines.size() < kMaxExplained) out.lines.push_back(address + ": " + join(parts, "; "));
  }
  if (addresses.size() > kMaxExplained)
    out.lines.push_back("and " + std::to_string(addresses.size() - kMaxExplained) + " more (run the plan again to see them)");
  return out;
}

}  // namespace dbform
