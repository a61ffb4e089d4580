#pragma once
// What a recorded resource has now, and the calls that bring it to its declaration (the differ's
// part that speaks in calls; docs/using.md lists them).
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "plan/model.h"
#include "state/model.h"

namespace dbform {

// What the resource has now as far as dbform knows: the recorded settings, or where a refresh (or
// an adoption) observed a field, what it observed. `vpc` is observed even when absent (no VPC).
nlohmann::json current_value(const ResourceRecord& rec, const std::string& field);

// The declared fields (and for services `vpc`, whose absence is managed too) whose current value
// differs from the declaration.
std::vector<FieldChange> changes_of(const ResourceRecord& rec, const nlohmann::json& declared);

struct CallPlan {
  std::vector<PlannedCall> calls;
  std::string problem;  // why the changes cannot be made by calls; "" when they can
};

// The calls that bring `current` (field -> value) to `declared`, in the order they are made:
// start, resize, setEnvironment, setHA, the pooler, the VPC (detach, attach), stop.
CallPlan calls_between(const nlohmann::json& current, const nlohmann::json& declared, const nlohmann::json& observed,
                       const State& state, const std::string& project_id);

}  // namespace dbform
