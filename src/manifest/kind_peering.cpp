// VPC peerings: a VPC's (their parent's) link to another account's VPC, known by the peer VPC's id;
// the peer account accepts it.
#include "manifest/kind_reader.h"

namespace dbform {

namespace {

// A peer's account or VPC id, as the schema takes it: text, or digits written as a number.
constexpr std::string_view kPeerIdForm = R"json({"anyOf": [
    {"type": "string", "minLength": 1, "maxLength": 128, "pattern": "^[A-Za-z0-9][A-Za-z0-9_-]*$"},
    {"type": "integer", "minimum": 0}]})json";

}  // namespace

template <> const FieldTable<DesiredPeering>& field_table<DesiredPeering>() {
  using P = DesiredPeering;
  static const FieldTable<P> table{
      "a peering",
      "A peering of the VPC with a peer VPC (of another cloud account). It has no name: it is known by its "
      "peer_vpc_id, unique among the VPC's peerings. Its fields are create-time only: a change replaces it with --prune.",
      {value_row("peer_account_id", Presence::Required, &P::peer_account_id, &ValueReader::peer_id,
                 interpolable("The peer's cloud account id (quote it: an account id is text).", kPeerIdForm)),
       value_row("peer_region_code", Presence::Required, &P::peer_region_code, &ValueReader::region_code,
                 schema_ref("region_code", "The peer VPC's region, like us-east-1.")),
       value_row("peer_vpc_id", Presence::Required, &P::peer_vpc_id, &ValueReader::peer_id,
                 interpolable("The peer VPC's id; it appears in the peering's address, "
                              "PROJECT/vpcs/VPC/peerings/PEER_VPC_ID.",
                              kPeerIdForm)),
       deletion_protection_row<P>(), import_id_row<P>(), policy_waivers_row<P>()}};
  return table;
}

nlohmann::json peering_settings(const DesiredPeering& p) {
  return {{"peer_account_id", p.peer_account_id},
          {"peer_region_code", p.peer_region_code},
          {"peer_vpc_id", p.peer_vpc_id}};
}

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
      .policy_fields = {{"project_id", T::Text},      {"vpc", T::Text},         {"peer_account_id", T::Text},
                        {"peer_region_code", T::Text}, {"peer_vpc_id", T::Text}, {"deletion_protection", T::Bool}},
      .has_status = true,
      .delete_note = " (it holds no data of its own)",
      .list_description = "Peerings of this VPC, created once it exists; their acceptance by the peer is not waited for.",
      .schema = declaration_schema<DesiredPeering>,
  };
}

}  // namespace dbform
