// VPCs: a project's own private networks, which services attach to and peerings live in.
#include "manifest/kind_reader.h"

namespace dbform {

template <> const FieldTable<DesiredVpc>& field_table<DesiredVpc>() {
  using V = DesiredVpc;
  static const FieldTable<V> table{
      "a VPC",
      "A VPC. Its name must be unique among the project's VPCs.",
      {name_row<V>(),
       value_row("cidr", Presence::Reported, &V::cidr, &ValueReader::cidr, schema_ref("cidr")),
       value_row("region_code", Presence::Reported, &V::region_code, &ValueReader::region_code,
                 schema_ref("region_code", "Region of the VPC, like us-east-1.")),
       deletion_protection_row<V>(), renamed_from_row<V>(), import_id_row<V>(), policy_waivers_row<V>(),
       children_row(ResourceKind::Peering, "peerings", &V::peerings)}};
  return table;
}

nlohmann::json vpc_settings(const DesiredVpc& v) {
  return {{"cidr", v.cidr}, {"region_code", v.region_code}};
}

KindForm vpc_form() {
  using T = PolicyFieldType;
  return {
      .kind = ResourceKind::Vpc,
      .name = "vpc",
      .plural = "vpcs",
      .noun = "VPC",
      .list = "vpcs",
      .fields = {"cidr", "region_code"},
      .policy_fields = {{"project_id", T::Text}, {"name", T::Text}, {"cidr", T::Text}, {"region_code", T::Text},
                        {"deletion_protection", T::Bool}},
      .delete_note = "",  // it holds no data at all
      .list_description = "VPCs to create in this project. Created before the project's services.",
      .schema = declaration_schema<DesiredVpc>,
  };
}

}  // namespace dbform
