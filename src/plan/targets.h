#pragma once
// --target: a plan narrowed to some of its resources, as Terraform's -target.
#include <string>
#include <vector>

#include "plan/model.h"

namespace dbform {

// Keeps of `plan` the actions of `targets` (addresses it has) and of what they need first, as the
// kinds say (a service's VPC, a fork's source, a read replica set's service, a peering's VPC),
// and, for a delete, the deletes of what lives in the resource; records the targets in the plan
// and recounts its summary.
void limit_to_targets(Plan& plan, const std::vector<std::string>& targets);

}  // namespace dbform
