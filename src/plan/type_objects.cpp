// Roles, schemas, extensions and grants inside a service's database: no API calls. The apply
// engine makes each service's in one transaction (engine/objects_step.cpp, sql/objects.h); what the
// differ, the operations and the renderers ask of every kind is answered here for them.
#include "plan/kind_rows.h"

namespace dbform {

namespace {

// What an object needs made first in the same database (by --target; the objects step orders a
// service's objects itself): a role's declared groups, a schema's owner, a grant's role and
// schema. An address the plan does not have (tsdbadmin, a predefined role) is nobody's action.
std::vector<Dependency> object_needs(const PlannedAction& a) {
  const nlohmann::json& s = a.action == Action::Delete ? a.before : a.after;
  std::vector<Dependency> needs;
  auto add = [&](ResourceKind kind, const char* role, const nlohmann::json& name) {
    if (name.is_string()) needs.push_back({resource_address(a.project_id, kind, name.get<std::string>(), a.parent), role});
  };
  if (!s.is_object()) return needs;
  switch (a.kind) {
    case ResourceKind::Role:
      for (const auto& group : s.value("member_of", nlohmann::json::array())) add(ResourceKind::Role, "group role", group);
      break;
    case ResourceKind::Schema: add(ResourceKind::Role, "owner", s.value("owner", nlohmann::json())); break;
    case ResourceKind::Grant:
      add(ResourceKind::Role, "role", s.value("role", nlohmann::json()));
      add(ResourceKind::Schema, "schema", s.value("schema", nlohmann::json()));
      break;
    default: break;
  }
  return needs;
}

template <ResourceKind K>
const ResourceType& object_row() {
  static const ResourceType row = {
      .kind = K,
      .has_password = false,
      .watched = false,
      .deleted_after = {},
      .verdict = [](const std::string&) { return StatusVerdict::Ready; },  // made once committed
      .needs_replacement = [](const FieldChange&) { return false; },      // every change is an ALTER or a GRANT
      .replaceable = false,
      .call_inputs = {},
      .created_with = [](const nlohmann::json& declared) { return declared; },
      .needs = object_needs,
      .observe = [](const Shown&, const nlohmann::json& recorded, const VpcNames&) { return recorded; },
      .took_effect = [](const std::string&, const nlohmann::json&, const nlohmann::json&) { return false; },
  };
  return row;
}

}  // namespace

const ResourceType& database_object_type(ResourceKind kind) {
  switch (kind) {
    case ResourceKind::Role: return object_row<ResourceKind::Role>();
    case ResourceKind::Schema: return object_row<ResourceKind::Schema>();
    case ResourceKind::Extension: return object_row<ResourceKind::Extension>();
    default: return object_row<ResourceKind::Grant>();
  }
}

}  // namespace dbform
