#include "policy/rules.h"

namespace dbform {

namespace {

using T = PolicyFieldType;

// A preview's fork as `preview up` makes it: its source, its name in the API, the block's strategy,
// its size (the block's, else its source's) and its tag (always DEV).
const std::vector<PolicyField> kPreviewFields = {{"project_id", T::Text},      {"preview", T::Text},     {"service", T::Text},
                                           {"name", T::Text},            {"strategy", T::Strategy}, {"cpu_millis", T::Size},
                                           {"memory_gbs", T::Size},      {"environment_tag", T::Tag}};

}  // namespace

const std::vector<std::string>& policy_kinds() {
  static const std::vector<std::string> kinds = {"service", "vpc",    "replica_set", "peering", "preview",
                                                 "role",    "schema", "extension",   "grant"};
  return kinds;
}

const std::vector<PolicyField>& policy_fields(std::string_view kind) {
  static const std::vector<PolicyField> none;
  if (kind == "preview") return kPreviewFields;  // not a resource kind: what `preview up` makes
  if (auto resource = kind_named(kind)) return kind_form(*resource).policy_fields;
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
