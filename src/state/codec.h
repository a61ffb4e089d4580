#pragma once
#include <string>
#include <vector>

#include "state/cipher.h"
#include "state/errors.h"
#include "state/model.h"
#include "util/error.h"

namespace dbform {

// `state`, unless two of its records share a (kind, project, id): then DuplicateRecords naming
// every such pair, where they are (`source`) and how to repair it. Every store's read ends with it,
// after the journal is replayed.
State checked_unique(State state, const std::string& source);

// The most a state document or journal may hold, and how deeply its JSON may nest: a file past
// either is refused before it is parsed, whatever it holds.
constexpr size_t kMaxStateBytes = size_t{1} << 30;
constexpr size_t kMaxStateDepth = 64;
// The largest serial: every JSON reader (JavaScript's included) holds it exactly, and a write
// that would pass it is refused rather than wrapped.
constexpr long long kMaxSerial = (1LL << 53) - 1;

// Parses a state document; `source` names it in errors (a path or a URL). Its sealed passwords are
// opened when `cipher` has a key, and kept sealed (Secret::sealed) when it has none; a document
// sealed whole (the older form) needs the key. `sealed_by`, when given, receives the key id the
// document's passwords are sealed with ("" when they are in clear).
State parse_state(const std::string& text, const std::string& source,
                  const StateCipher& cipher = StateCipher::plaintext(), std::string* sealed_by = nullptr);
// The document, its passwords sealed one by one when `cipher` seals; without a key, sealed values are
// written as read, and a password in clear in a state whose passwords are sealed is refused
// (StateError: a sealed state never gets a clear password).
std::string serialize_state(const State& state, const StateCipher& cipher = StateCipher::plaintext());
// What serialize_state wrote, for the same state at another serial: its top-level "serial" replaced
// (a fold writes the backup one serial behind the new document without serializing it twice).
std::string with_serial(const std::string& document, long long serial);
// The key id a write of `state` with `cipher` seals its passwords with: the cipher's when it seals,
// else the one they were read sealed with ("" for clear).
std::string written_key_id(const State& state, const StateCipher& cipher);

// A record as JSON, for display: a sealed value is its envelope, a clear one its text.
nlohmann::json record_to_json(const ResourceRecord& r);

// A journal entry (one line of JSON, no newline): the records at the `changed` addresses as they
// are in `state` (an address not in it was removed), making serial + 1, their passwords as
// serialize_state writes them. What a store appends instead of the whole document.
std::string journal_entry(const State& state, const std::vector<std::string>& changed,
                          const StateCipher& cipher = StateCipher::plaintext());
// Applies one entry read back from `where` ("FILE line N"): entries the state already holds (its
// serial or older) are skipped; anything but the next serial, another lineage or a damaged entry
// is a StateError that quotes none of the entry (it may hold a password).
void apply_journal_entry(State& state, const std::string& entry, const std::string& where,
                         const StateCipher& cipher = StateCipher::plaintext());
// Whether a journal of `journal_bytes` is to be folded into its document of `document_bytes` now:
// once it is larger than the document and than `floor` (StateStore::journal_floor(): 256 KiB, so a
// small state is not rewritten at every few steps; more during an apply, which folds at its end).
// The one rule of both stores that keep a journal.
bool journal_outgrew(size_t journal_bytes, size_t document_bytes, size_t floor);
// The key id a journal entry's passwords are sealed with (its envelope's, for an entry sealed whole);
// "" for one in clear.
std::string journal_entry_key_id(const nlohmann::json& entry);
// Where a store keeps a record's password apart (the PostgreSQL store's secrets table), the
// document holds this in its place: {"format": "dbform-secret", "stored_in": TABLE}. Read as is, it
// gives Secret::unreadable(TABLE).
nlohmann::json secret_placeholder(const std::string& table);
bool is_secret_placeholder(const nlohmann::json& j);
// Moves what it keeps out of `j`; its sealed passwords opened when `cipher` has a key.
ResourceRecord record_from_json(nlohmann::json&& j, const std::string& source, size_t index,
                                const StateCipher& cipher = StateCipher::plaintext());

}  // namespace dbform
