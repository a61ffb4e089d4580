#include "plan/plan_file.h"

#include "util/atomic_file.h"

#include <algorithm>
#include <map>
#include <set>

#include "plan/kinds.h"
#include "plan/stale_plan.h"
#include "state/codec.h"
#include "util/error.h"
#include "util/json_limits.h"
#include "util/text.h"

namespace dbform {

using nlohmann::json;
using nlohmann::ordered_json;

namespace {

constexpr Action kActions[] = {Action::Create, Action::NoOp,   Action::Wait,     Action::Adopt, Action::Update,
                               Action::Delete, Action::Replace, Action::Conflict, Action::Orphan, Action::Forget};
ordered_json location_json(const Location& l) {
  if (l.file.empty()) return nullptr;
  return {{"file", l.file}, {"line", l.line}, {"column", l.column}};
}

// Optional fields are left out rather than written empty, so the document says only what is known.
ordered_json action_json(const PlannedAction& a) {
  ordered_json j = {{"address", a.address}, {"kind", kind_name(a.kind)}, {"project_id", a.project_id}};
  if (!a.parent.empty()) j["parent"] = a.parent;
  j["name"] = a.name;
  j["action"] = action_name(a.action);
  if (!a.resource_id.empty()) j["resource_id"] = a.resource_id;
  if (!a.renamed_from.empty()) j["renamed_from"] = a.renamed_from;
  if (!a.import_id.empty()) j["import_id"] = a.import_id;
  if (!a.status.empty()) j["status"] = a.status;
  j["before"] = a.before;
  j["after"] = a.after;
  ordered_json changes = ordered_json::array();
  for (const auto& c : a.changes)
    changes.push_back({{"field", c.field}, {"before", c.before}, {"after", c.after}, {"drift", c.drift}});
  j["changes"] = std::move(changes);
  ordered_json calls = ordered_json::array();
  for (const auto& c : a.calls) {
    ordered_json call = {{"call", c.call}, {"body", c.body}, {"async", is_async_call(c.call)}};
    if (!c.vpc.empty()) call["vpc"] = c.vpc;
    call["sets"] = c.sets;
    calls.push_back(std::move(call));
  }
  j["calls"] = std::move(calls);
  if (a.deletion_protection) j["deletion_protection"] = true;
  if (!a.reason.empty()) j["reason"] = a.reason;
  if (ordered_json loc = location_json(a.location); !loc.is_null()) j["declared_at"] = std::move(loc);
  return j;
}

ordered_json diagnostic_json(const Diagnostic& d) {
  ordered_json j = {{"severity", d.severity == Severity::Error ? "error" : "warning"}, {"message", d.message}};
  if (ordered_json loc = location_json(d.location); !loc.is_null()) j["location"] = std::move(loc);
  if (!d.field.empty()) j["field"] = d.field;
  if (!d.hint.empty()) j["hint"] = d.hint;
  return j;
}

ordered_json policies_json_of(const PolicyCheck& c) {
  ordered_json rules = ordered_json::array();
  for (const auto& r : c.rules)
    rules.push_back({{"id", r.id}, {"level", r.mandatory ? "mandatory" : "advisory"}, {"kind", r.kind}, {"waivable", r.waivable}});
  ordered_json violations = ordered_json::array();
  for (const auto& v : c.violations)
    violations.push_back({{"rule", v.rule},
                          {"level", v.mandatory ? "mandatory" : "advisory"},
                          {"address", v.address},
                          {"field", v.field},
                          {"found", v.found},
                          {"required", v.required},
                          {"message", v.message}});
  ordered_json waivers = ordered_json::array();
  for (const auto& w : c.waivers)
    waivers.push_back({{"rule", w.rule}, {"address", w.address}, {"reason", w.reason}, {"expires", w.expires}});
  return {{"files", c.files},
          {"digest", c.digest.empty() ? ordered_json() : ordered_json(c.digest)},
          {"rules", std::move(rules)},
          {"violations", std::move(violations)},
          {"waivers", std::move(waivers)},
          {"mandatory", c.mandatory()},
          {"advisory", c.advisory()}};
}

// Reads one JSON object's fields, naming the document and the field's path in every error.
class Reader {
 public:
  Reader(const json& j, std::string source, std::string path) : j_(j), source_(std::move(source)), path_(std::move(path)) {
    if (!j_.is_object()) fail("", "an object");
  }

  [[noreturn]] void fail(const std::string& field, const std::string& expected) const {
    std::string where = path_.empty() ? field : field.empty() ? path_ : path_ + "." + field;
    throw UsageError(source_ + ": " + (where.empty() ? "" : where + ": ") + "expected " + expected +
                     "; the plan file is damaged. Make a new one with `dbform plan --out FILE`");
  }
  const json* find(const char* field) const {
    auto it = j_.find(field);
    return it == j_.end() || it->is_null() ? nullptr : &*it;
  }
  std::string str(const char* field, bool required = false) const {
    const json* v = find(field);
    if (!v) {
      if (required) fail(field, "a string");
      return {};
    }
    if (!v->is_string()) fail(field, "a string");
    return v->get<std::string>();
  }
  long long integer(const char* field) const {
    const json* v = find(field);
    if (!v || !v->is_number_integer()) fail(field, "an integer");
    return v->get<long long>();
  }
  json any(const char* field) const {
    const json* v = find(field);
    return v ? *v : json();
  }
  const json& array(const char* field) const {
    static const json empty = json::array();
    const json* v = find(field);
    if (!v) return empty;
    if (!v->is_array()) fail(field, "a list");
    return *v;
  }
  Reader child(const char* field) const { return Reader(*find_or_fail(field), source_, sub(field)); }
  Reader item(const char* field, size_t i) const {
    return Reader(array(field)[i], source_, sub(field) + "[" + std::to_string(i) + "]");
  }
  Location location(const char* field) const {
    if (!find(field)) return {};
    Reader r = child(field);
    return {r.str("file", true), static_cast<int>(r.integer("line")), static_cast<int>(r.integer("column"))};
  }
  std::vector<std::string> strings(const char* field) const {
    std::vector<std::string> out;
    for (const auto& v : array(field)) {
      if (!v.is_string()) fail(field, "a list of strings");
      out.push_back(v.get<std::string>());
    }
    return out;
  }

 private:
  const json* find_or_fail(const char* field) const {
    const json* v = find(field);
    if (!v) fail(field, "an object");
    return v;
  }
  std::string sub(const char* field) const { return path_.empty() ? field : path_ + "." + field; }

  const json& j_;
  std::string source_;
  std::string path_;
};

PlannedAction read_action(const Reader& r) {
  PlannedAction a;
  a.address = r.str("address", true);
  a.project_id = r.str("project_id", true);
  a.name = r.str("name", true);
  const auto kind = kind_named(r.str("kind", true));
  if (!kind) r.fail("kind", "`service`, `vpc`, `replica_set` or `peering`");
  a.kind = *kind;
  a.parent = r.str("parent");
  if (parent_kind(a.kind).has_value() == a.parent.empty())
    r.fail("parent", parent_kind(a.kind) ? "the name of the resource it is in" : "absent for this kind");
  const std::string action = r.str("action", true);
  bool known = false;
  for (Action candidate : kActions)
    if (action == action_name(candidate)) a.action = candidate, known = true;
  if (!known) r.fail("action", "one of create, no-op, wait, adopt, update, delete, replace, conflict, orphan, forget");
  a.resource_id = r.str("resource_id");
  a.renamed_from = r.str("renamed_from");
  a.import_id = r.str("import_id");
  const std::string same_kind = resource_address(a.project_id, a.kind, "", a.parent);
  if (!a.renamed_from.empty() && (a.renamed_from.rfind(same_kind, 0) != 0 || a.renamed_from == a.address))
    r.fail("renamed_from", "another address of the same project and kind (" + same_kind + "NAME)");
  a.status = r.str("status");
  a.before = r.any("before");
  a.after = r.any("after");
  for (size_t i = 0; i < r.array("changes").size(); ++i) {
    Reader c = r.item("changes", i);
    a.changes.push_back({c.str("field", true), c.any("before"), c.any("after"), c.any("drift") == true});
  }
  for (size_t i = 0; i < r.array("calls").size(); ++i) {
    Reader c = r.item("calls", i);
    PlannedCall call{c.str("call", true), c.any("body"), c.str("vpc"), c.any("sets")};
    const auto& calls = call_types();
    if (std::none_of(calls.begin(), calls.end(), [&](const CallType& t) { return call.call == t.name; })) {
      std::vector<std::string> names;
      for (const CallType& t : calls) names.push_back(t.name);
      c.fail("call", "one of " + join(names, ", "));
    }
    if (!call.sets.is_object()) c.fail("sets", "an object");
    a.calls.push_back(std::move(call));
  }
  a.deletion_protection = r.any("deletion_protection") == true;
  a.reason = r.str("reason");
  a.location = r.location("declared_at");
  return a;
}

bool read_level(const Reader& r) {
  const std::string level = r.str("level", true);
  if (level != "mandatory" && level != "advisory") r.fail("level", "`mandatory` or `advisory`");
  return level == "mandatory";
}

PolicyCheck read_policies(const Reader& r) {
  PolicyCheck c;
  c.files = r.strings("files");
  c.digest = r.str("digest");
  for (size_t i = 0; i < r.array("rules").size(); ++i) {
    Reader rule = r.item("rules", i);
    c.rules.push_back({rule.str("id", true), read_level(rule), rule.str("kind", true), rule.any("waivable") == true});
  }
  for (size_t i = 0; i < r.array("violations").size(); ++i) {
    Reader v = r.item("violations", i);
    c.violations.push_back({v.str("rule", true), read_level(v), v.str("address", true), v.str("field"), v.any("found"),
                            v.str("required"), v.str("message")});
  }
  for (size_t i = 0; i < r.array("waivers").size(); ++i) {
    Reader w = r.item("waivers", i);
    c.waivers.push_back({w.str("rule", true), w.str("address", true), w.str("reason"), w.str("expires")});
  }
  return c;
}

Diagnostic read_diagnostic(const Reader& r) {
  Diagnostic d;
  d.severity = r.str("severity", true) == "error" ? Severity::Error : Severity::Warning;
  d.location = r.location("location");
  d.field = r.str("field");
  d.message = r.str("message", true);
  d.hint = r.str("hint");
  return d;
}

// Addresses whose saved action is not what the manifests and state give now.
std::vector<std::string> differing_actions(const Plan& saved, const Plan& now) {
  std::map<std::string, ordered_json> before;
  for (const auto& a : saved.actions) before[a.address] = action_json(a);
  std::set<std::string> differ;
  for (const auto& a : now.actions) {
    auto it = before.find(a.address);
    if (it == before.end() || it->second != action_json(a)) differ.insert(a.address);
    if (it != before.end()) before.erase(it);
  }
  for (const auto& [address, _] : before) differ.insert(address);
  return {differ.begin(), differ.end()};
}

std::string file_list_change(const std::vector<std::string>& then, const std::vector<std::string>& now) {
  std::set<std::string> a(then.begin(), then.end()), b(now.begin(), now.end());
  std::vector<std::string> added, removed;
  for (const auto& f : b)
    if (!a.count(f)) added.push_back(f);
  for (const auto& f : a)
    if (!b.count(f)) removed.push_back(f);
  std::string out;
  if (!added.empty()) out += "; added: " + join(added, ", ");
  if (!removed.empty()) out += "; removed: " + join(removed, ", ");
  return out;
}

}  // namespace

ordered_json policies_json(const PolicyCheck& check) { return policies_json_of(check); }

ordered_json plan_actions_json(const Plan& plan) {
  ordered_json actions = ordered_json::array();
  for (const auto& a : plan.actions) actions.push_back(action_json(a));
  return actions;
}

ordered_json plan_summary_json(const PlanSummary& s) {
  return {{"create", s.create},     {"import", s.import},          {"forget", s.forget},
          {"update", s.update},          {"delete", s.del}, {"replace", s.replace},
          {"wait", s.wait},         {"adopt", s.adopt},            {"no_op", s.noop},
          {"conflict", s.conflict}, {"orphan", s.orphan},          {"prunable", s.prunable},
          {"nothing_to_forget", s.nothing_to_forget}, {"policy_violations", s.policy},
          {"has_changes", s.has_changes()}, {"has_conflicts", s.has_conflicts()}};
}

namespace {

// The state a plan was made from; with `last_refreshed` when it was made from the state alone.
ordered_json state_json(const Plan& p) {
  ordered_json state = {{"lineage", p.state_lineage.empty() ? ordered_json() : ordered_json(p.state_lineage)},
                        {"serial", p.state_serial}};
  if (p.freshness) {
    const auto& stamp = p.freshness->refreshed;
    state["last_refreshed"] = {{"at", stamp ? ordered_json(stamp->at) : ordered_json()},
                               {"by", stamp ? ordered_json(stamp->by) : ordered_json()},
                               {"age_seconds", stamp ? ordered_json(p.freshness->age_seconds) : ordered_json()}};
  }
  if (!p.catalogs_unread.empty()) state["catalogs_unread"] = catalogs_unread_json(p.catalogs_unread);
  return state;
}

}  // namespace

ordered_json catalogs_unread_json(const std::vector<CatalogsUnread>& unread) {
  ordered_json out = ordered_json::array();
  for (const auto& u : unread)
    out.push_back({{"service", u.service}, {"why", scrub(u.why)},
                   {"last_read", u.last_read.empty() ? ordered_json() : ordered_json(u.last_read)}});
  return out;
}

ordered_json plan_document_json(const PlanDocument& doc) {
  const Plan& p = doc.plan;
  ordered_json diagnostics = ordered_json::array();
  for (const auto& d : doc.diagnostics) diagnostics.push_back(diagnostic_json(d));
  return {
      {"format", kPlanFormat},
      {"format_version", kPlanFormatVersion},
      {"created_at", doc.created_at},
      {"manifests", {{"paths", doc.manifest_paths}, {"files", doc.manifest_files}, {"digest", p.manifest_digest}}},
      {"state", state_json(p)},
      {"prune", p.prune},
      {"refreshed", p.refreshed},
      {"max_deletes", p.max_deletes},
      {"targets", p.targets},
      {"summary", plan_summary_json(p.summary)},
      {"actions", plan_actions_json(p)},
      {"policies", policies_json_of(p.policy)},
      {"diagnostics", std::move(diagnostics)},
  };
}

PlanDocument parse_plan_document(const std::string& text, const std::string& source) {
  std::string problem;
  JsonProblem kind;
  json j = parse_json_within(text, JsonLimits{kMaxStateBytes, kMaxStateDepth}, problem, &kind);
  if (kind == JsonProblem::TooLarge || kind == JsonProblem::TooDeep)
    throw UsageError(source + " cannot be read: " + problem);
  if (j.is_discarded() || !j.is_object() || j.value("format", json()) != kPlanFormat)
    throw UsageError(source + " is not a dbform plan file. Make one with `dbform plan --out " + source + "`");
  // A plan file is outside text (it may have been edited): every string in it passes the one
  // filter before anything renders it, as the API's answers do.
  scrub_strings(j);
  Reader r(j, source, "");
  long long version = r.integer("format_version");
  if (version > kPlanFormatVersion || version < 1)
    throw UsageError(source + " has plan format version " + std::to_string(version) + "; this dbform reads version " +
                     std::to_string(kPlanFormatVersion) + ". Make the plan and apply it with the same dbform release");
  PlanDocument doc;
  doc.created_at = r.str("created_at");
  Reader manifests = r.child("manifests");
  doc.manifest_paths = manifests.strings("paths");
  doc.manifest_files = manifests.strings("files");
  doc.plan.manifest_digest = manifests.str("digest", true);
  Reader state = r.child("state");
  doc.plan.state_lineage = state.str("lineage");
  doc.plan.state_serial = state.integer("serial");
  if (state.find("last_refreshed")) {
    Reader last = state.child("last_refreshed");
    doc.plan.freshness.emplace();
    if (const std::string at = last.str("at"); !at.empty()) {
      doc.plan.freshness->refreshed = RefreshStamp{at, last.str("by"), 0, std::nullopt};
      doc.plan.freshness->age_seconds = last.integer("age_seconds");
    }
  }
  if (state.find("catalogs_unread"))
    for (size_t i = 0; i < state.array("catalogs_unread").size(); ++i) {
      Reader u = state.item("catalogs_unread", i);
      doc.plan.catalogs_unread.push_back({u.str("service"), u.str("why"), u.str("last_read")});
    }
  doc.plan.prune = r.any("prune") == true;
  doc.plan.refreshed = r.any("refreshed") == true;
  if (r.any("max_deletes").is_number_integer()) doc.plan.max_deletes = static_cast<int>(r.integer("max_deletes"));
  if (r.any("targets").is_array()) doc.plan.targets = r.strings("targets");
  for (size_t i = 0; i < r.array("actions").size(); ++i) doc.plan.actions.push_back(read_action(r.item("actions", i)));
  for (size_t i = 0; i < r.array("diagnostics").size(); ++i)
    doc.diagnostics.push_back(read_diagnostic(r.item("diagnostics", i)));
  // A plan saved before policies existed was checked against none.
  if (r.find("policies")) doc.plan.policy = read_policies(r.child("policies"));
  // The counts follow from the actions; recomputing them means a hand-edited summary cannot lie.
  doc.plan.summary = summarize(doc.plan.actions);
  doc.plan.summary.policy = doc.plan.policy.mandatory();
  return doc;
}

PlanDocument read_plan_file(const std::string& path) {
  // Bounded before it is parsed: a plan holds no more than the state it was made from.
  auto text = read_file_if_exists(path, Links::Follow, kMaxStateBytes);
  if (!text) throw UsageError("there is no plan file " + path + ". Make one with `dbform plan --out " + path + "`");
  return parse_plan_document(*text, path);
}

namespace {

// Every write since `serial` recorded only that nothing had changed outside dbform (a scheduled
// `apply --refresh-only` that found no drift): the records are those the plan was made against, so
// the drift check does not make every plan awaiting approval stale.
bool only_refresh_recorded_since(const State& stored, long long serial) {
  const auto& stamp = stored.refreshed;
  return stamp && stamp->serial == stored.serial && stamp->unchanged_since && *stamp->unchanged_since <= serial &&
         serial < stored.serial;
}

}  // namespace

std::vector<std::string> saved_plan_problems(const PlanDocument& saved, const Manifest& manifest, const State* stored,
                                             const Plan* replanned) {
  std::vector<std::string> problems;
  const Plan& p = saved.plan;
  if (p.state_lineage.empty() && stored)
    problems.push_back("a state was created after the plan was made (it expected none; the state now has serial " +
                       std::to_string(stored->serial) + ")");
  else if (!p.state_lineage.empty() && !stored)
    problems.push_back("the plan was made against a state (lineage " + p.state_lineage +
                       ") but there is no state now: check --state, DBFORM_STATE and --workspace");
  else if (stored && stored->lineage != p.state_lineage)
    problems.push_back("the plan was made against another state (lineage " + p.state_lineage + ", this one has " +
                       stored->lineage + "): check --state, DBFORM_STATE and --workspace");
  else if (stored && stored->serial != p.state_serial && !only_refresh_recorded_since(*stored, p.state_serial))
    problems.push_back("the state has changed since the plan was made (serial " + std::to_string(p.state_serial) +
                       " then, " + std::to_string(stored->serial) + " now): another run applied or forgot something");
  if (manifest.digest != p.manifest_digest)
    problems.push_back("the manifests have changed since the plan was made (" + join(saved.manifest_files, ", ") + ")" +
                       file_list_change(saved.manifest_files, manifest.files));
  // Only meaningful when nothing above explains a difference.
  if (problems.empty() && replanned) {
    auto differ = differing_actions(p, *replanned);
    if (!differ.empty()) {
      // Said resource by resource, field and values then and now: what moved, not only that something did.
      const PlanDifferences why = explain_differences(p, *replanned, differ);
      const std::string what = why.declared || !p.refreshed
                                   ? "the manifest files are unchanged but read differently now (does an environment "
                                     "variable they use have another value?): "
                                   : "what exists has changed since the plan was made: a refresh plans otherwise now for ";
      problems.push_back(what + join(differ, ", ") + "\n    " + join(why.lines, "\n    "));
    }
  }
  return problems;
}

}  // namespace dbform
