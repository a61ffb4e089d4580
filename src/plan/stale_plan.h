#pragma once
// Why a saved plan no longer holds, resource by resource: what the saved plan and a plan made now
// say differently about each, with the field and its values then and now as the new plan shows
// them, so that a refused `apply PLANFILE` says what moved instead of "something changed".
#include <string>
#include <vector>

#include "plan/model.h"

namespace dbform {

struct PlanDifferences {
  // One line per address, "ADDRESS: what differs" (at most kMaxExplained; then how many more).
  std::vector<std::string> lines;
  // A declared value differs: the same manifest files read differently (a ${VAR} has another value).
  bool declared = false;
};

inline constexpr size_t kMaxExplained = 10;

// `addresses`: those whose saved action is not the action planned now.
PlanDifferences explain_differences(const Plan& saved, const Plan& now, const std::vector<std::string>& addresses);

}  // namespace dbform
