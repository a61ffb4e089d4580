#pragma once
// The `state` commands that change the state, as operations of the core: rm, mv, push and the
// rewrites (encrypt, decrypt, rekey). Each runs in the state's lock (ops/locked_state.h) and
// writes the whole document once; none calls the API. The command line parses, opens the store,
// reads what it pushes and renders the outcome.
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "ops/locked_state.h"
#include "state/cipher.h"
#include "state/model.h"

namespace dbform {

// How rm, mv and push read the state under the lock: the command line's reader, which takes a
// state two of whose records name one resource as read (saying so), so that these commands can
// repair it. Empty: no state stored.
using RepairRead = std::function<std::optional<State>(StateStore& store)>;

struct StateRmRequest {
  StateAccess access;
  RepairRead read;
  std::vector<std::string> addresses;  // as typed: full or short
  bool force = false;                  // forget even a resource whose create's outcome is unknown
};

struct StateRmOutcome {
  std::vector<std::string> removed;  // the addresses given, then what lived in them
  std::vector<std::string> unknown;  // of those, the creates whose outcome was unknown
};

// All the addresses or none; what lives in a forgotten service or VPC goes with it. Throws
// UsageError for an address not recorded, or an unknown create without `force`.
StateRmOutcome state_rm_operation(const StateRmRequest& request);

struct StateMvRequest {
  StateAccess access;
  RepairRead read;
  std::string from;  // as typed
  std::string to;    // an address of the same project and kind, or a bare name
};

struct StateMvOutcome {
  std::string from, to;  // full addresses
  std::string old_name, name;
};

StateMvOutcome state_mv_operation(const StateMvRequest& request);

// `state pull`: the whole document as stored (sealed values stay sealed), to back it up or to push
// it elsewhere. Refuses (UsageError) when none is stored, and when this role may not read some of
// its passwords (a PostgreSQL role without SELECT on dbform_secrets): a copy without them, pushed
// back, would lose them.
std::string state_pull_operation(StateStore& store, const RepairRead& read);

// The state `state push` pushes: a state file, or `-` for `stdin_text` (read only then). Refuses
// (UsageError) a PostgreSQL URL (pull from it first) and a missing file; checked as every read is.
State read_push_source(const std::string& source, const StateCipher& cipher,
                       const std::function<std::string()>& stdin_text);

struct StatePushRequest {
  StateAccess access;
  RepairRead read;
  State incoming;      // read from `source` with the store's cipher
  std::string source;  // its file, for messages
  bool force = false;  // another lineage or an older serial replaced all the same
};

struct StatePushOutcome {
  bool pushed = false;  // false: the store holds it already
  std::string held;     // "lineage L serial S" of the store before, when it had a state
  State state;          // as pushed
};

// Refuses another lineage or an older serial without `force` (UsageError, nothing pushed); writes
// over what was read, keeping its lineage and serial for the compare-and-swap.
StatePushOutcome state_push_operation(const StatePushRequest& request);

// encrypt, decrypt, rekey: read with one key, written with another (or none).
struct StateRewriteRequest {
  StateAccess access;  // its operation: "state encrypt", "state decrypt" or "state rekey"
  std::optional<StateKey> read_with, write_with;
};

struct StateRewriteOutcome {
  bool rewritten = false;  // false: sealed as asked already, nothing changed
  std::string before, after;  // the key ids; "" for plain
  long long serial = 0;
  bool backup_too = false;    // a file store's .backup rewritten in the new form as well
  bool leftover = false;      // the journal held lines in the old form (left by a killed rewrite): removed
};

// Throws UsageError when there is no state yet.
StateRewriteOutcome state_rewrite_operation(const StateRewriteRequest& request);

}  // namespace dbform
