#include "policy/rules.h"

namespace dbform {

namespace {

using T = PolicyFieldType;

// Kept in agreement with schemas/policy.schema.json (tests/schema_agreement.py --policy) and
// docs/policies.md.
const std::vector<PolicyField> kServiceFields = {
    {"project_id", T::Text},       {"name", T::Text},         {"addons", T::TextList},
    {"cpu_millis", T::Size},       {"memory_gbs", T::Size},   {"environment_tag", T::Tag},
    {"region_code", T::Text},      {"replica_count", T::Number}, {"sync_replica_count", T::Number},
    {"paused", T::Bool},           {"vpc", T::Text},          {"connection_pooler", T::Bool},
    {"deletion_protection", T::Bool}};
const std::vector<PolicyField> kVpcFields = {{"project_id", T::Text}, {"name", T::Text}, {"cidr", T::Text},
                                       {"region_code", T::Text}, {"deletion_protection", T::Bool}};
const std::vector<PolicyField> kReplicaSetFields = {
    {"project_id", T::Text},       {"service", T::Text},     {"name", T::Text},
    {"nodes", T::Number},          {"cpu_millis", T::Number}, {"memory_gbs", T::Number},
    {"connection_pooler", T::Bool}, {"environment_tag", T::Tag}, {"deletion_protection", T::Bool}};
const std::vector<PolicyField> kPeeringFields = {{"project_id", T::Text},       {"vpc", T::Text},
                                           {"peer_account_id", T::Text},  {"peer_region_code", T::Text},
                                           {"peer_vpc_id", T::Text},      {"deletion_protection", T::Bool}};
// A preview's fork as `preview up` makes it: its source, its name in the API, the block's strategy,
// its size (the block's, else its source's) and its tag (always DEV).
const std::vector<PolicyField> kPreviewFields = {{"project_id", T::Text},      {"preview", T::Text},     {"service", T::Text},
                                           {"name", T::Text},            {"strategy", T::Strategy}, {"cpu_millis", T::Size},
                                           {"memory_gbs", T::Size},      {"environment_tag", T::Tag}};

}  // namespace

const std::vector<std::string>& policy_kinds() {
  static const std::vector<std::string> kinds = {"service", "vpc", "replica_set", "peering", "preview"};
  return kinds;
}

const std::vector<PolicyField>& policy_fields(std::string_view kind) {
  static const std::vector<PolicyField> none;
  if (kind == "service") return kServiceFields;
  if (kind == "vpc") return kVpcFields;
  if (kind == "replica_set") return kReplicaSetFields;
  if (kind == "peering") return kPeeringFields;
  if (kind == "preview") return kPreviewFields;
  return none;
}

const std::vector<std::string>& policy_actions() {
  static const std::vector<std::string> actions = {"create", "update", "delete", "replace",
                                                   "rename", "pause",  "import", "forget"};
  return actions;
}

const char* comparison_name(PolicyComparison::Op op) {
  using Op = PolicyComparison::Op;
  switch (op) {
    case Op::Eq: return "==";
    case Op::Ne: return "!=";
    case Op::Ge: return ">=";
    case Op::Le: return "<=";
    case Op::Gt: return ">";
    case Op::Lt: return "<";
    case Op::In: return "in";
    case Op::Present: return "present";
  }
  return "?";
}

const PolicyRule* PolicySet::find(std::string_view id) const {
  for (const auto& r : rules)
    if (r.id == id) return &r;
  return nullptr;
}

}  // namespace dbform
