#include "plan/differ.h"

#include <set>
#include <unordered_set>

#include "util/text.h"

namespace dbform {

using nlohmann::json;

namespace {

std::vector<FieldChange> differing_fields(const json& before, const json& after) {
  std::set<std::string> keys;
  for (auto it = before.begin(); it != before.end(); ++it) keys.insert(it.key());
  for (auto it = after.begin(); it != after.end(); ++it) keys.insert(it.key());
  std::vector<FieldChange> changes;
  for (const auto& k : keys) {
    json b = before.contains(k) ? before[k] : json();
    json a = after.contains(k) ? after[k] : json();
    if (b != a) changes.push_back({k, b, a});
  }
  return changes;
}

PlannedAction plan_declared(const std::string& project_id, ResourceKind kind, const std::string& name,
                            json settings, const Location& location, const State& state, const Namesakes* namesakes) {
  PlannedAction a;
  a.kind = kind;
  a.project_id = project_id;
  a.name = name;
  a.address = resource_address(project_id, kind, name);
  a.after = std::move(settings);
  a.location = location;
  const ResourceRecord* rec = state.find(a.address);
  if (!rec) {
    a.action = Action::Create;
    if (namesakes) {
      if (auto found = namesakes->find(a.address); found != namesakes->end() && !found->second.empty()) {
        a.action = Action::Conflict;
        a.resource_id = join(found->second, ", ");
        a.reason = namesake_reason(kind, a.address, found->second);
      }
    }
    return a;
  }
  a.before = rec->settings;
  a.resource_id = rec->id;
  a.status = rec->status;
  a.changes = differing_fields(rec->settings, a.after);
  const bool unknown_outcome = rec->create_pending && rec->id.empty();
  if (!a.changes.empty()) {
    a.action = Action::Conflict;
    a.reason = unknown_outcome
                   ? "an earlier create of this " + std::string(kind_name(kind)) +
                         " with the recorded settings may have succeeded. Restore the recorded values and "
                         "apply to finish it, or run `dbform state rm " + a.address + "` to forget it"
                   : "dbform does not modify existing resources. Restore the recorded values in the manifest, or "
                     "run `dbform state rm " + a.address + "` to forget this one (it keeps running) and "
                     "declare the new settings under another name";
  } else if (unknown_outcome) {
    a.action = Action::Adopt;
    a.reason = "an earlier run stopped before the create's outcome was known: it is looked up by name "
               "and adopted if found, created otherwise";
  } else if (!rec->is_ready() || !rec->pending_password.empty()) {
    a.action = Action::Wait;
    if (!rec->pending_password.empty() && rec->is_ready())
      a.reason = "a new password was recorded but the API has not confirmed it: it is set again";
    if (is_failed_status(rec->status))
      a.reason = "recorded status " + rec->status + ": it will not become READY by itself. Run `dbform state rm " +
                 a.address + "` to create it again";
  } else {
    a.action = Action::NoOp;
  }
  return a;
}

}  // namespace

std::string namesake_reason(ResourceKind kind, const std::string& address, const std::vector<std::string>& ids) {
  const std::string noun = kind_name(kind);
  return "a " + noun + " of this name already exists (" + (ids.size() == 1 ? "id " : "ids ") + join(ids, ", ") +
         ") but the state does not record it, so dbform does not create another one beside it. Check that --state "
         "names the right state; to manage the existing " + noun + ", bring it into the state (`dbform import " +
         address + " " + ids.front() + "`, coming with the day-two commands); until then declare the new " + noun +
         " under another name";
}

Plan make_plan(const Manifest& manifest, const State& state, const Namesakes* namesakes) {
  Plan plan;
  plan.state_lineage = state.lineage;
  plan.state_serial = state.serial;
  plan.manifest_digest = manifest.digest;
  std::unordered_set<std::string> declared;
  for (const auto& project : manifest.projects) {
    for (const auto& v : project.vpcs)
      plan.actions.push_back(plan_declared(project.id, ResourceKind::Vpc, v.name, settings_json(v), v.location, state, namesakes));
    for (const auto& s : project.services)
      plan.actions.push_back(
          plan_declared(project.id, ResourceKind::Service, s.name, settings_json(s), s.location, state, namesakes));
  }
  declared.reserve(plan.actions.size());
  for (const auto& a : plan.actions) declared.insert(a.address);
  for (const auto& rec : state.resources) {
    if (declared.count(rec.address)) continue;
    PlannedAction a;
    a.action = Action::Orphan;
    a.kind = rec.kind;
    a.project_id = rec.project_id;
    a.name = rec.name;
    a.address = rec.address;
    a.resource_id = rec.id;
    a.status = rec.status;
    a.before = rec.settings;
    a.reason = "recorded but no longer declared: dbform never deletes it. Declare it again, or run `dbform state rm " +
               rec.address + "` to forget it";
    plan.actions.push_back(std::move(a));
  }
  plan.summary = summarize(plan.actions);
  return plan;
}

}  // namespace dbform
