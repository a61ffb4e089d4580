#pragma once
// The one helper that every operation which changes the state runs in: it takes the state's lock
// for the whole operation, reads the state once, runs the operation's body on it, saves what the
// body changed (when the engine's run could not save, what it learned goes to a recovery file
// instead), and folds the journal into one document when the body asks. A body never locks, reads
// or writes the store itself; the engine's run, which journals as it goes (an intent before each
// call), is its one writer, and the helper reads its ApplyResult for a save that failed.
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "plan/run.h"
#include "state/model.h"
#include "state/store.h"
#include "util/env.h"

namespace dbform {

// How the store is reached: opened by the caller, locked by the helper.
struct StateAccess {
  StateStore& store;
  std::string operation;  // named in the lock ("preview up"), for whoever waits for it
  Duration lock_timeout{0};
  LockWaitNotice lock_wait;  // told when the lock is held and waited for
  EnvLookup env;             // where a recovery file may go ($TMPDIR, $HOME)
};

// What the body did, for the helper to save.
struct Changes {
  enum class Save {
    None,     // nothing changed, or the engine saved as it went (`engine`)
    Journal,  // the records at `changed`, appended to the journal
    Whole,    // the whole document rewritten (a state edit: rm, mv, push, rekey)
  };
  Save save = Save::None;
  std::vector<std::string> changed;
  // The engine's run, which journaled as it went: its save error stops the operation with the
  // recovery file's message. Null when the engine did not run.
  const ApplyResult* engine = nullptr;
  bool fold = false;  // once saved, the journal folded into one document (StateStore::compact)
  // What the operation does once its changes are saved and folded, still in the lock, changing
  // nothing recorded (preview up's migrations, on the forks' own databases).
  std::function<void(const State&)> then;
};

// What a refresh changed (`changed`), saved: most records (the first refresh after a large apply
// records what every one looks like) by rewriting the document whole, since replaying such a
// journal on every later read costs more than the document; otherwise appended, at the cost of the
// change.
Changes refresh_changes(const std::vector<std::string>& changed, const State& state);

// How the state is read under the lock. The default: the stored state, or a new empty one.
using LockedRead = std::function<State(StateStore& store)>;
State stored_or_new(StateStore& store);
// The same, noting in `missing` whether there was no state (an operation that must not make one).
LockedRead stored_or_new_noting(bool& missing);

// Locks `access.store` for the whole call, reads it with `read`, runs `body` on the state it read,
// saves and folds as the body's Changes say, and returns the state as saved. Throws Error for a
// lock held elsewhere, a state that cannot be read, and a save that failed (an engine's run:
// naming the recovery file that holds what it learned); whatever `body` throws passes through,
// with nothing saved by the helper.
State with_locked_state(const StateAccess& access, const std::function<Changes(State&)>& body,
                       const LockedRead& read = stored_or_new);

}  // namespace dbform
