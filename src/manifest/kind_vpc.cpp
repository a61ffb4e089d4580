// VPCs: a project's own private networks, which services attach to and peerings live in.
#include "manifest/model.h"

namespace dbform {

KindForm vpc_form() {
  using T = PolicyFieldType;
  return {
      .kind = ResourceKind::Vpc,
      .name = "vpc",
      .plural = "vpcs",
      .noun = "VPC",
      .parent = std::nullopt,
      .list = "vpcs",
      .name_key = "name",
      .fields = {"cidr", "region_code"},
      .ready_status = "",
      .settled_status = "",
      .policy_fields = {{"project_id", T::Text}, {"name", T::Text}, {"cidr", T::Text}, {"region_code", T::Text},
                        {"deletion_protection", T::Bool}},
      .password = PasswordOwner::None,
      .connectable = false,
      .has_status = false,
      .refers = std::nullopt,
      .delete_note = "",  // it holds no data at all
  };
}

}  // namespace dbform
