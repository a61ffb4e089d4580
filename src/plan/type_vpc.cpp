// VPCs as the API makes them: the plain REST shape (created, renamed, deleted), nothing to watch.
#include "plan/kind_rows.h"

namespace dbform {

VpcNames recorded_vpc_names(const State& state, const std::string& project_id) {
  VpcNames names;
  for (const auto& r : state.resources)
    if (r.kind == ResourceKind::Vpc && r.project_id == project_id && !r.id.empty()) names[r.id] = r.name;
  return names;
}

// A VPC is made when its create is answered, and changed when its call is: nothing to watch. It
// goes after the services of its project, which may be attached to it.
const ResourceType& vpc_type() {
  static const ResourceType row = {
      .kind = ResourceKind::Vpc,
      .has_password = false,
      .watched = false,
      .deleted_after = {ResourceKind::Service, ResourceKind::Peering},
      .unready_call = "",
      .busy_delete_hint = " (is a service still attached to it?)",
      .deleting_status = "",
      .deleted_status = "",
      .verdict = [](const std::string&) { return StatusVerdict::Ready; },  // no status: one read shows it is there
      .needs_replacement = always_replaced,
      .replaceable = false,
      .replaced_noun = "VPC",
      .call_inputs = {},
      .created_with = created_without_calls,
      .needs = [](const PlannedAction&) { return std::vector<Dependency>(); },
      .observe = [](const Shown& shown, const nlohmann::json&, const VpcNames&) {
        const Vpc v = parse_vpc(shown.raw);
        nlohmann::json seen = nlohmann::json::object();
        if (!v.cidr.empty()) seen["cidr"] = v.cidr;
        if (!v.region_code.empty()) seen["region_code"] = v.region_code;
        return seen;
      },
      .took_effect = [](const std::string&, const nlohmann::json&, const nlohmann::json&) { return false; },
      .route = kVpcRoute,
      .name_field = "name",
      .status_field = "",
      .create_body = [](const PlannedAction& a) {
        return to_json(VpcCreateRequest{a.name, a.after.value("cidr", ""), a.after.value("region_code", "")});
      },
      .create = routed_create<ResourceKind::Vpc>,
      .list = routed_list<ResourceKind::Vpc>,
      .get = routed_get<ResourceKind::Vpc>,
      .update = routed_update<ResourceKind::Vpc>,  // rename
      .remove = routed_remove<ResourceKind::Vpc>,
  };
  return row;
}

}  // namespace dbform
