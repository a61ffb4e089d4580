#pragma once
#include <string>

#include "plan/run.h"
#include "state/model.h"
#include "state/store.h"
#include "util/env.h"

namespace dbform {

// When the state cannot be saved, everything the run learned (ids, passwords, intents) must still
// land somewhere: writes `state` (with the next serial) to the first writable of: beside the state
// file, $TMPDIR or /tmp, $HOME (read through `env`). Returns a message for stderr naming the file
// and how to restore it, or, if even that failed, the state's resources so nothing created is
// forgotten.
std::string save_recovery_file(const State& state, const StateStore& store, const std::string& why,
                               const EnvLookup& env);

// What to tell the user when an apply stopped because the state could not be saved: the recovery
// file (when the memory holds more than the store) or that nothing is lost.
std::string save_failure_message(const ApplyResult& result, const State& state, const StateStore& store,
                                 const EnvLookup& env);

}  // namespace dbform
