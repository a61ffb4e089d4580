// VPC peerings as the API makes them, in a VPC: the plain REST shape, made once created (the
// peer account accepts it), replaced by any change.
#include "plan/kind_rows.h"

namespace dbform {

// Made when its create is answered (its acceptance by the peer is not waited for), once its VPC is.
const ResourceType& peering_type() {
  static const ResourceType row = {
      .kind = ResourceKind::Peering,
      .has_password = false,
      .watched = false,
      .deleted_after = {},
      .unready_call = "",
      .busy_delete_hint = "",
      .deleting_status = "deleting",  // listed so while its routes go: neither ours after a lost answer nor a namesake
      .deleted_status = "",
      .verdict = [](const std::string&) { return StatusVerdict::Ready; },  // recorded as it is, accepted or not
      .needs_replacement = always_replaced,
      .replaceable = true,
      .accepted_status = "active",
      .awaiting_status = "pending",
      .call_inputs = {},
      .created_with = created_without_calls,
      .needs = [](const PlannedAction& a) {
        return std::vector<Dependency>{
            {resource_address(a.project_id, ResourceKind::Vpc, a.parent), "VPC", false, false, kBeforeCreate}};
      },
      .observe = [](const Shown& shown, const nlohmann::json&, const VpcNames&) {
        const Peering p = parse_peering(shown.raw);
        nlohmann::json seen = nlohmann::json::object();
        if (!p.peer_account_id.empty()) seen["peer_account_id"] = p.peer_account_id;
        if (!p.peer_region_code.empty()) seen["peer_region_code"] = p.peer_region_code;
        if (!p.peer_vpc_id.empty()) seen["peer_vpc_id"] = p.peer_vpc_id;
        return seen;
      },
      .took_effect = [](const std::string&, const nlohmann::json&, const nlohmann::json&) { return false; },
      .route = kPeeringRoute,
      .name_field = "peer_vpc_id",  // a peering has no name: it is known by its peer VPC's id
      .status_field = "status",
      .create_body = [](const PlannedAction& a) {
        return to_json(PeeringCreateRequest{a.after.value("peer_account_id", ""), a.after.value("peer_region_code", ""),
                                            a.after.value("peer_vpc_id", "")});
      },
      .create = routed_create<ResourceKind::Peering>,
      .list = routed_list<ResourceKind::Peering>,
      .get = routed_get<ResourceKind::Peering>,
      .update = [](ApiClient&, const std::string&, const Scope&, const std::string&, const std::string& call,
                   const nlohmann::json&) -> std::optional<Shown> {
        throw Error("a VPC peering has no `" + call + "` call: a change of its peer replaces it");
      },
      .remove = routed_remove<ResourceKind::Peering>,
  };
  return row;
}

}  // namespace dbform
