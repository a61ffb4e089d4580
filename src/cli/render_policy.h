#pragma once
// The policies' findings (plan/model.h PolicyCheck) as text and markdown, for the plan and for
// `dbform policy check`; the JSON is the plan document's `policies` (plan/plan_file.h).
#include <string>
#include <vector>

#include "cli/context.h"
#include "plan/model.h"

namespace dbform::cli {

// "3 rules from base/baseline.yaml: 1 mandatory violation, 1 advisory, 1 waiver in force"
std::string policy_summary(const PolicyCheck& check);

// The summary, each violation (level, rule, address, field, found, required, message) and each
// waiver in force; "" when no rule file was given.
std::string render_policies_text(const PolicyCheck& check, const Terminal& term);

// The same as markdown list items, for a pull request's comment: one item per violation, then
// one per waiver.
std::vector<std::string> policy_violation_items(const PolicyCheck& check);
std::vector<std::string> policy_waiver_items(const PolicyCheck& check);

// "replica_count is 0, requires >= 1"
std::string violation_text(const PolicyViolation& v);

}  // namespace dbform::cli
