#pragma once
// A platform team's rules (`--policy FILE`): what every plan must keep. The rule files' format is
// docs/policies.md and schemas/policy.schema.json; loader.h reads them, evaluate.h checks them.
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "manifest/model.h"  // PolicyFieldType, PolicyField: each kind's fields are its row's
#include "util/diagnostics.h"

namespace dbform {

// The kinds a rule may name, "service", "vpc", "replica_set", "peering" and "preview", each with
// the fields its conditions may name, in the order docs/policies.md lists them: a resource kind's
// are its KindForm::policy_fields.
const std::vector<std::string>& policy_kinds();
const std::vector<PolicyField>& policy_fields(std::string_view kind);
// The plan actions forbid_actions may name.
const std::vector<std::string>& policy_actions();

struct PolicyComparison {
  enum class Op { Eq, Ne, Ge, Le, Gt, Lt, In, Present };
  Op op = Op::Eq;
  nlohmann::json value;  // In: an array; Present: a boolean
};
const char* comparison_name(PolicyComparison::Op op);  // "==", ">=", "in", "present"

// One field's condition: every comparison must hold.
struct PolicyCondition {
  std::string field;
  PolicyFieldType type = PolicyFieldType::Text;
  std::vector<PolicyComparison> all;
};

struct PolicyRule {
  std::string id;
  bool mandatory = true;
  std::string kind;
  std::vector<PolicyCondition> where;    // which resources it applies to (all of them when empty)
  std::vector<PolicyCondition> require;  // what each must be after the plan
  std::vector<std::string> forbid_actions;
  std::string message;
  bool waivable = false;
  Location location;  // of the rule, in its file
};

struct PolicySet {
  std::vector<PolicyRule> rules;
  std::vector<std::string> files;  // as given
  // sha256 over the files' contents, independent of their names and order: a pipeline may read the
  // base branch's rules from another path at apply than at plan. "" when no file was given.
  std::string digest;
  bool given() const { return !files.empty(); }
  const PolicyRule* find(std::string_view id) const;
};

}  // namespace dbform
