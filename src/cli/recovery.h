#pragma once
#include <string>

#include "state/model.h"
#include "state/store.h"

namespace dbform::cli {

// When the state cannot be saved, everything the run learned (ids, passwords, intents) must still
// land somewhere: writes `state` (with the next serial) to the first writable of: beside the state
// file, $TMPDIR or /tmp, $HOME. Returns a message for stderr naming the file and how to restore it,
// or, if even that failed, the state's resources so nothing created is forgotten.
std::string save_recovery_file(const State& state, const StateStore& store, const std::string& why);

}  // namespace dbform::cli
