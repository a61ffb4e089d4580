#include "policy/evaluate.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <optional>

#include "state/previews.h"
#include "util/text.h"

namespace dbform {

namespace {

using Op = PolicyComparison::Op;
using nlohmann::json;

// A value as a number: a JSON number, or text that is one ("1000", "0.5": sizes are stored as
// the API's digit strings); nullopt otherwise ("shared" included).
std::optional<double> number(const json& v) {
  if (v.is_number()) return v.get<double>();
  if (!v.is_string()) return std::nullopt;
  const std::string& s = v.get_ref<const std::string&>();
  if (s.empty() || s.find_first_not_of("0123456789.-") != std::string::npos) return std::nullopt;
  char* end = nullptr;
  const double x = std::strtod(s.c_str(), &end);
  if (end != s.c_str() + s.size() || !std::isfinite(x)) return std::nullopt;
  return x;
}

bool equal(const json& found, const json& wanted) {
  if (found.is_null()) return false;
  auto a = number(found), b = number(wanted);
  if (a && b) return *a == *b;
  if (found.is_array() && wanted.is_array()) {
    json sorted = found;
    std::sort(sorted.begin(), sorted.end());
    return sorted == wanted;
  }
  if (found.is_string() && wanted.is_string()) return found == wanted;
  if (found.is_boolean() && wanted.is_boolean()) return found == wanted;
  return false;
}

// Whether one comparison holds for `found` (null: the field is not set). A field not set equals
// nothing, differs from everything, and is neither more nor less than a number; an ordering
// comparison holds only between numbers ("shared" is not one).
bool holds(const PolicyComparison& c, const json& found) {
  switch (c.op) {
    case Op::Present: return found.is_null() != c.value.get<bool>();
    case Op::Eq: return equal(found, c.value);
    case Op::Ne: return !equal(found, c.value);
    case Op::In: return std::any_of(c.value.begin(), c.value.end(), [&](const json& v) { return equal(found, v); });
    default: break;
  }
  auto a = number(found), b = number(c.value);
  if (!a || !b) return false;
  switch (c.op) {
    case Op::Ge: return *a >= *b;
    case Op::Le: return *a <= *b;
    case Op::Gt: return *a > *b;
    case Op::Lt: return *a < *b;
    default: return false;
  }
}

const json& field_of(const PolicySubject& s, const std::string& field) {
  static const json none;
  if (auto it = s.fields.find(field); it != s.fields.end()) return *it;
  for (auto layer = s.layers.rbegin(); layer != s.layers.rend(); ++layer)
    if ((*layer)->is_object())
      if (auto it = (*layer)->find(field); it != (*layer)->end()) return *it;
  return none;
}

bool condition_holds(const PolicyCondition& c, const PolicySubject& s) {
  const json& found = field_of(s, c.field);
  return std::all_of(c.all.begin(), c.all.end(), [&](const PolicyComparison& cmp) { return holds(cmp, found); });
}

std::string text_of(const json& v) {
  if (v.is_string()) return v.get<std::string>();
  if (v.is_array()) {
    std::vector<std::string> items;
    for (const auto& i : v) items.push_back(text_of(i));
    return "[" + join(items, ", ") + "]";
  }
  return v.dump();
}

const char* kind_of(ResourceKind k) { return kind_name(k); }  // the plan's kinds are the policies' own names

void add_action(PolicySubject& s, const std::string& action) {
  if (std::find(s.actions.begin(), s.actions.end(), action) == s.actions.end()) s.actions.push_back(action);
}

// The field naming the resource a read replica set or a peering lives in: its kind's name.
const char* parent_field(ResourceKind k) { return kind_name(*parent_kind(k)); }

std::string waiver_field(const PolicyWaiver& w) {
  const size_t at = w.path.rfind("policy_waivers");
  return at == std::string::npos ? "policy_waivers" : w.path.substr(at);
}

// What a waiver found wrong, as a violation; nullopt for a waiver in force.
std::optional<PolicyViolation> waiver_problem(const PolicySet& set, const PolicyWaiver& w, const std::string& address,
                                              UtcTime now) {
  const std::string field = waiver_field(w);
  const PolicyRule* rule = set.find(w.rule);
  if (!rule) {
    std::vector<std::string> ids;
    for (const auto& r : set.rules) ids.push_back(r.id);
    const std::string guess = closest_match(w.rule, ids);
    return PolicyViolation{w.rule, true, address, field + ".rule", w.rule, "the id of a rule of the policy files",
                           "the waiver names rule `" + w.rule + "`, which no policy file defines" +
                               (guess.empty() ? "" : " (did you mean `" + guess + "`?)") +
                               "; correct it or remove the waiver (" + w.location.str() + ")"};
  }
  if (!rule->waivable)
    return PolicyViolation{w.rule, rule->mandatory, address, field + ".rule", w.rule, "a rule marked waivable",
                           "rule `" + w.rule + "` may not be waived: remove the waiver at " + w.location.str() +
                               " and bring the resource into line"};
  if (w.expires_at <= now)
    return PolicyViolation{w.rule, rule->mandatory, address, field + ".expires", w.expires, "an expiry after now (UTC)",
                           "the waiver of `" + w.rule + "` expired (" + w.expires + "): renew it with a reason and a new "
                               "expiry at " + w.location.str() + ", or bring the resource into line"};
  return std::nullopt;
}

void check_subject(const PolicySet& set, const PolicySubject& s, UtcTime now, PolicyCheck& out) {
  const bool leaving = std::any_of(s.actions.begin(), s.actions.end(),
                                   [](const std::string& a) { return a == "delete" || a == "forget"; });
  for (const auto& rule : set.rules) {
    if (rule.kind != s.kind) continue;
    if (!std::all_of(rule.where.begin(), rule.where.end(), [&](const PolicyCondition& c) { return condition_holds(c, s); }))
      continue;
    if (s.waivers && rule.waivable &&
        std::any_of(s.waivers->begin(), s.waivers->end(),
                    [&](const PolicyWaiver& w) { return w.rule == rule.id && w.expires_at > now; }))
      continue;  // in force: listed with the waivers
    const auto violation = [&](std::string field, json found, std::string required) {
      out.violations.push_back({rule.id, rule.mandatory, s.address, std::move(field), std::move(found),
                                std::move(required), rule.message});
    };
    if (!leaving)
      for (const auto& c : rule.require)
        if (!condition_holds(c, s)) violation(c.field, field_of(s, c.field), describe_condition(c));
    for (const auto& action : s.actions)
      if (std::find(rule.forbid_actions.begin(), rule.forbid_actions.end(), action) != rule.forbid_actions.end())
        violation("action", action, "not " + action);
  }
  if (!s.waivers) return;
  for (const auto& w : *s.waivers) {
    if (auto problem = waiver_problem(set, w, s.address, now)) out.violations.push_back(std::move(*problem));
    else out.waivers.push_back({w.rule, s.address, w.reason, w.expires});
  }
}

}  // namespace

DeclaredWaivers::DeclaredWaivers(const Manifest* manifest) {
  if (!manifest) return;
  for (const auto& p : manifest->projects)
    for_each_declaration(p, [&](const Declaration& d) {
      if (!d.policy_waivers.empty()) by_address_[resource_address(p.id, d.kind, d.name, d.parent)] = &d.policy_waivers;
    });
}

const std::vector<PolicyWaiver>* DeclaredWaivers::of(const std::string& address) const {
  if (by_address_.empty()) return nullptr;
  auto it = by_address_.find(address);
  return it == by_address_.end() ? nullptr : it->second;
}

std::vector<PolicySubject> plan_subjects(const Plan& plan, const State& state, const DeclaredWaivers& waivers) {
  std::vector<PolicySubject> out;
  out.reserve(plan.actions.size());
  for (const auto& a : plan.actions) {
    PolicySubject s;
    s.kind = kind_of(a.kind);
    s.address = a.address;
    const ResourceRecord* rec = state.find(a.address);
    if (!rec && !a.renamed_from.empty()) rec = state.find(a.renamed_from);
    if (rec) s.layers = {&rec->settings, &rec->observed, &a.after};
    else s.layers = {&a.before, &a.after};
    s.fields["project_id"] = a.project_id;
    s.fields["name"] = a.name;
    if (!a.parent.empty()) s.fields[parent_field(a.kind)] = a.parent;
    s.fields["deletion_protection"] = a.deletion_protection;
    switch (a.action) {
      case Action::Create:
      case Action::Adopt: add_action(s, "create"); break;
      case Action::Update: add_action(s, "update"); break;
      case Action::Delete: add_action(s, "delete"); break;
      case Action::Replace: add_action(s, "replace"); break;
      case Action::Forget: add_action(s, "forget"); break;
      default: break;
    }
    if (a.action != Action::Conflict) {
      if (!a.renamed_from.empty()) add_action(s, "rename");
      if (!a.import_id.empty()) add_action(s, "import");
      if (std::any_of(a.calls.begin(), a.calls.end(), [](const PlannedCall& c) { return c.call == "stop"; }))
        add_action(s, "pause");
    }
    s.waivers = waivers.of(a.address);
    out.push_back(std::move(s));
  }
  return out;
}

std::vector<PolicySubject> state_subjects(const State& state, const DeclaredWaivers& waivers) {
  std::vector<PolicySubject> out;
  for (const auto& rec : state.resources) {
    if (rec.id.empty()) continue;  // only an intent: nothing exists yet to audit
    PolicySubject s;
    s.address = rec.address;
    s.layers = {&rec.settings, &rec.observed};
    s.fields["project_id"] = rec.project_id;
    s.fields["name"] = rec.name;
    if (auto mark = preview_mark(rec)) {
      s.kind = "preview";
      s.fields["preview"] = mark->name;
      s.fields["service"] = mark->service;
      if (rec.settings.contains("fork") && rec.settings["fork"].is_object())
        s.fields["strategy"] = rec.settings["fork"].value("strategy", json());
    } else {
      s.kind = kind_of(rec.kind);
      if (!rec.parent.empty()) s.fields[parent_field(rec.kind)] = rec.parent;
      s.fields["deletion_protection"] = rec.deletion_protection;
      s.waivers = waivers.of(rec.address);
    }
    out.push_back(std::move(s));
  }
  return out;
}

PolicyCheck evaluate_policies(const PolicySet& set, const std::vector<PolicySubject>& subjects, UtcTime now) {
  PolicyCheck out;
  out.files = set.files;
  out.digest = set.digest;
  for (const auto& r : set.rules) out.rules.push_back({r.id, r.mandatory, r.kind, r.waivable});
  if (set.rules.empty() && !set.given()) return out;
  for (const auto& s : subjects) check_subject(set, s, now, out);
  return out;
}

void check_plan_policies(Plan& plan, const State& state, const Manifest& manifest, const PolicySet& set,
                         UtcTime now) {
  if (!set.given()) {
    plan.policy = PolicyCheck{};
    plan.summary.policy = 0;
    return;
  }
  const DeclaredWaivers waivers(&manifest);
  plan.policy = evaluate_policies(set, plan_subjects(plan, state, waivers), now);
  plan.summary.policy = plan.policy.mandatory();
}

std::string describe_condition(const PolicyCondition& c) {
  std::vector<std::string> parts;
  for (const auto& cmp : c.all) {
    if (cmp.op == Op::Present) parts.push_back(cmp.value.get<bool>() ? "set" : "not set");
    else if (cmp.op == Op::Eq) parts.push_back(text_of(cmp.value));
    else parts.push_back(std::string(comparison_name(cmp.op)) + " " + text_of(cmp.value));
  }
  return join(parts, " and ");
}

}  // namespace dbform
