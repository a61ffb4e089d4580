#pragma once
#include <string>
#include <vector>

#include "plan/model.h"
#include "state/model.h"

namespace dbform {

// Finds the record a user means: its address (`PROJECT/services/NAME`, `PROJECT/vpcs/NAME`,
// `PROJECT/services/SERVICE/replicas/NAME`, ...), `KIND/NAME` (`services/NAME`, `replicas/NAME`) or a
// bare `NAME`, where the short forms must match exactly one record. Throws
// UsageError saying what matched (several) or what is close (none).
const ResourceRecord& resolve_address(const State& state, const std::string& text);

// The address of a declared resource to bring in, named as above. Throws UsageError for anything
// the manifests do not declare.
std::string declared_address(const Manifest& manifest, const std::string& text);

// The addresses of the plan's resources that --target names (each as above). Throws UsageError for
// one the plan does not have.
std::vector<std::string> planned_addresses(const Plan& plan, const std::vector<std::string>& texts);

}  // namespace dbform
