#pragma once
#include "manifest/model.h"
#include "plan/model.h"
#include "state/model.h"

namespace dbform {

// Pure: compares what is declared with what is recorded. Linear in the number of resources.
Plan make_plan(const Manifest& manifest, const State& state);

}  // namespace dbform
