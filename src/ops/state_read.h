#pragma once
// What the `state` commands read of the state, as the command line shows it: a state to repair
// (two records of one resource are taken as read, not refused) and one record as `state show`
// prints it. Neither takes the lock or writes.
#include <functional>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "state/model.h"
#include "state/store.h"

namespace dbform {

// The store's state, or empty when none is stored. One two of whose records name one resource
// (kind, project, id) is taken as read, `warn` told why, so that the commands that repair it (rm,
// mv, push, pull, completion) can; every other problem throws as a read does.
std::optional<State> read_to_repair(StateStore& store, const std::function<void(const std::string&)>& warn);

// One record as the state holds it (id, status, endpoints, settings, what the API showed, a pending
// call or intent), its passwords hidden: `(sensitive)` in clear, `(sealed)` sealed and not opened
// (no key), `(not readable here)` to a role that may not read where they are kept.
nlohmann::json shown_record(const ResourceRecord& rec);

}  // namespace dbform
