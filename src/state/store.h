#pragma once
// Where the state lives. The file store is the default; other backends implement the same
// interface and pass the same conformance tests.
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "state/cipher.h"
#include "state/model.h"
#include "util/clock.h"
#include "util/error.h"

namespace dbform {

struct LockInfo {
  long long pid = 0;
  std::string host;
  std::string operation;  // "apply", "import", "state rm"
  std::string since;      // UTC, ISO 8601
  std::string str() const;  // "pid 123 on host ci-1, running apply since 2026-..."
};

// What a refused lock's message ends with: how to wait, or, after a --lock-timeout ran out, that
// it did.
std::string lock_refused_advice(Duration timeout);

class LockError : public Error {
 public:
  using Error::Error;
};

// Held while alive; released on destruction (and by the kernel or server if the process dies).
class StateLock {
 public:
  virtual ~StateLock() = default;
};

class StateStore {
 public:
  virtual ~StateStore() = default;
  // What documents and journal entries are read and written with: plaintext unless set.
  const StateCipher& cipher() const { return cipher_ ? *cipher_ : StateCipher::plaintext(); }
  void set_cipher(std::shared_ptr<const StateCipher> cipher) { cipher_ = std::move(cipher); }
  // The stored state, or nullopt when there is none yet. Throws StateError when it is unusable.
  virtual std::optional<State> read() = 0;
  // Persists `state` with serial + 1 and updates state.serial. Refuses (StateError) when the stored
  // serial or lineage is no longer the one `state` was read with: nothing is overwritten.
  virtual void write(State& state) = 0;
  // The same for a state that differs from the last one written (or read) only at the `changed`
  // addresses (an address no longer in `state` was removed): what it costs grows with the change,
  // not with the state, where the backend can (the file store appends to a journal). Otherwise a
  // whole write.
  virtual void write_changes(State& state, const std::vector<std::string>& changed) { write(state); }
  // Folds what write_changes() appended into one document (the end of an apply calls it); a no-op
  // for a backend that keeps nothing to fold. `state` is what the writes saved, perhaps with newer
  // observations of the same resources (a poll's time), which the fold writes too; after a failed
  // write the fold reads back what is stored for its backup.
  virtual void compact(State& state) {}
  // How large the journal grows before write_changes() folds it (when it also outgrows the
  // document): kJournalFloor, so that a small state is not rewritten every few steps. An apply,
  // which folds at its end anyway, raises it for its run (kRunJournalFloor): a fold rewrites the
  // whole state while the run waits, and a state growing from nothing would be rewritten at each
  // doubling while the creates are being sent.
  static constexpr size_t kJournalFloor = size_t{256} * 1024;
  static constexpr size_t kRunJournalFloor = size_t{64} * 1024 * 1024;
  size_t journal_floor() const { return journal_floor_; }
  void set_journal_floor(size_t bytes) { journal_floor_ = bytes; }
  // Exclusive lock for the whole of an operation; waits up to `timeout` for a live holder, then
  // throws LockError naming the holder.
  virtual std::unique_ptr<StateLock> lock(const std::string& operation, Duration timeout) = 0;
  // Who holds the lock now, asked without taking it or writing anything (a read-only plan says so
  // beside its result); nullopt when nobody does, or the backend cannot tell.
  virtual std::optional<LockInfo> lock_holder() { return std::nullopt; }
  // The key id the document last read is sealed with; "" when it is plain (or nothing was read).
  virtual std::string sealed_by() const { return ""; }
  // Whether the last read found journal lines in another form than the document (in clear beside a
  // sealed document, or sealed with another key): what a whole rewrite killed before it removed its
  // journal leaves. Reading skips them; they still hold passwords in the old form until the next
  // whole write removes them.
  virtual bool leftover_journal() const { return false; }
  // "dbform.state.json" or the URL without password; for messages.
  virtual std::string describe() const = 0;
  // The other states beside this one that hold something (a PostgreSQL store's workspaces), for a
  // message about a state that is not there; none for a file.
  virtual std::vector<std::string> workspaces() { return {}; }
  // The flags that name this state on a dbform command line ("--state FILE", or "--state URL
  // --workspace W" with the URL's password left out), for messages that tell what to run.
  virtual std::string command_line_args() const = 0;

 private:
  std::shared_ptr<const StateCipher> cipher_;
  size_t journal_floor_ = kJournalFloor;
};

// Told once, when the lock is held by another process and the caller waits for it
// (--lock-timeout): who holds it, and how long the caller waits.
using LockWaitNotice = std::function<void(const std::string& holder, Duration timeout)>;

// The lock at once when it is free; otherwise, with a timeout, `notice` is told who holds it and
// the lock is waited for up to `timeout` (so that a pipeline waiting for another does not look hung).
// Without one it is refused at once (LockError naming the holder).
std::unique_ptr<StateLock> lock_state(StateStore& store, const std::string& operation, Duration timeout,
                                      const LockWaitNotice& notice);

}  // namespace dbform
