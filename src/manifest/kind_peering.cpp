// VPC peerings: a VPC's (their parent's) link to another account's VPC, known by the peer VPC's id;
// the peer account accepts it.
#include "manifest/model.h"

namespace dbform {

KindForm peering_form() {
  using T = PolicyFieldType;
  return {
      .kind = ResourceKind::Peering,
      .name = "peering",
      .plural = "peerings",
      .noun = "VPC peering",
      .parent = ResourceKind::Vpc,
      .list = "peerings",
      .name_key = "",
      .fields = {"peer_account_id", "peer_region_code", "peer_vpc_id"},
      .ready_status = "",
      .settled_status = "",
      .policy_fields = {{"project_id", T::Text},      {"vpc", T::Text},         {"peer_account_id", T::Text},
                        {"peer_region_code", T::Text}, {"peer_vpc_id", T::Text}, {"deletion_protection", T::Bool}},
      .password = PasswordOwner::None,
      .connectable = false,
      .has_status = true,
      .refers = std::nullopt,
      .delete_note = " (it holds no data of its own)",
  };
}

}  // namespace dbform
