// Roles, schemas, extensions and grants inside a service's database: no API calls. The apply
// engine makes each service's in one transaction (engine/objects_step.cpp, sql/objects.h); what the
// differ, the operations and the renderers ask of every kind is answered here for them.
#include "plan/kind_rows.h"

namespace dbform {

namespace {

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
      .needs = [](const PlannedAction&) { return std::vector<Dependency>(); },
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
