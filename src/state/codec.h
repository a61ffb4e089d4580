#pragma once
#include <string>
#include <vector>

#include "state/model.h"
#include "util/error.h"

namespace dbform {

// A state that cannot be used: not JSON, not a dbform state, a newer version, a bad record. The
// message names the source and the problem; the file is never touched.
class StateError : public Error {
 public:
  using Error::Error;
};

// Parses a state document; `source` names it in errors (a path or a URL).
State parse_state(const std::string& text, const std::string& source);
std::string serialize_state(const State& state);

nlohmann::json record_to_json(const ResourceRecord& r);

// A journal entry (one line of JSON, no newline): the records at the `changed` addresses as they
// are in `state` (an address not in it was removed), making serial + 1. What a store appends
// instead of the whole document.
std::string journal_entry(const State& state, const std::vector<std::string>& changed);
// Applies one entry read back from `where` ("FILE line N"): entries the state already holds (its
// serial or older) are skipped; anything but the next serial, another lineage or a damaged entry
// is a StateError that quotes none of the entry (it may hold a password).
void apply_journal_entry(State& state, const std::string& entry, const std::string& where);
// Whether a journal of `journal_bytes` is to be folded into its document of `document_bytes` now:
// once it is larger than the document (and than 256 KiB, so a small state is not rewritten at
// every few steps). The one rule of both stores that keep a journal.
bool journal_outgrew(size_t journal_bytes, size_t document_bytes);
ResourceRecord record_from_json(const nlohmann::json& j, const std::string& source, size_t index);

}  // namespace dbform
