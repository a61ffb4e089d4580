#include "ops/state_read.h"

#include "state/codec.h"

namespace dbform {

std::optional<State> read_to_repair(StateStore& store, const std::function<void(const std::string&)>& warn) {
  try {
    return store.read();
  } catch (const DuplicateRecords& e) {
    warn(e.what());
    return e.state;
  }
}

nlohmann::json shown_record(const ResourceRecord& rec) {
  nlohmann::json j = record_to_json(rec);
  // A password in clear shows as (sensitive); one sealed and not opened (no key) as (sealed).
  // One this role may not read at all (kept in a table it has no access to): (not readable here).
  auto hidden = [](const Secret& s) {
    return s.is_unreadable() ? "(not readable here)" : s.is_sealed() ? "(sealed)" : "(sensitive)";
  };
  if (!rec.initial_password.empty()) j["initial_password"] = hidden(rec.initial_password);
  if (!rec.pending_password.empty()) j["pending_password"] = hidden(rec.pending_password);
  return j;
}

}  // namespace dbform
