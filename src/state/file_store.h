#pragma once
#include "state/store.h"

namespace dbform {

// A JSON file. Whole writes go to a new temporary file, are fsynced, renamed over FILE and the
// directory fsynced; the previous version is kept as FILE.backup; mode 0600. Changes go to
// FILE.journal instead: one line per write (the changed records, the serial it makes), appended and
// fdatasync'ed, so a write costs what changed. Reading replays the journal onto the document (a
// torn last line, from a crash during its append, was never acknowledged and is dropped); a whole
// write, made when the journal outgrows the document and at the end of an apply, folds it in. The
// lock is flock(2) on FILE.lock, whose content names the holder. A FILE that is a symbolic link
// stands for its target (all of these files are beside the target); one to nothing is an error.
class FileStateStore : public StateStore {
 public:
  explicit FileStateStore(std::string path);
  std::optional<State> read() override;
  void write(State& state) override;
  void write_changes(State& state, const std::vector<std::string>& changed) override;
  void compact(State& state) override;
  std::unique_ptr<StateLock> lock(const std::string& operation, Duration timeout) override;
  std::optional<LockInfo> lock_holder() override;
  std::string sealed_by() const override { return seen_ ? seen_->key_id : ""; }
  bool leftover_journal() const override { return seen_ && seen_->leftover_journal; }
  std::string describe() const override { return given_; }
  std::string command_line_args() const override;
  // The files this store reads and writes: the state (a link's target), its journal, backup and lock.
  std::vector<std::string> own_files() const { return {path_, journal_path_, path_ + ".backup", path_ + ".lock"}; }

 private:
  // Lineage and serial of what is on disk, and the file's identity when we last saw it: a write
  // re-reads the file only when someone else has replaced it since.
  struct Seen {
    std::string lineage;
    long long serial = 0;
    std::string file_identity;
    size_t journal_bytes = 0;  // the journal's acknowledged length (a torn tail beyond it is dropped)
    size_t document_bytes = 0;
    std::string key_id;  // of the key the document's passwords are sealed with; "" when in clear
    // The journal holds lines in another form than the document (sealed with another key, or
    // plain beside a sealed one): left by a whole rewrite killed before it removed the journal.
    bool leftover_journal = false;
    bool sealed_whole = false;  // the document is sealed whole (the older form): the next write converts it
  };
  // A whole write. `stored`: `state` is what the document and its journal hold (every change
  // saved), so the backup is made from it rather than by reading the journal back.
  void write_whole(State& state, bool stored);
  void write_whole_once(State& state, bool stored);
  // A write of this store failed since its last whole write: what is in memory may not be on disk,
  // so a fold makes its backup from what is (read back).
  bool write_failed_ = false;
  std::optional<State> read_current();  // the document with its journal replayed; updates seen_
  std::optional<State> read_once(bool& torn);  // read_current's one attempt; `torn`: replaced meanwhile
  void check_unchanged(const State& state);  // the compare-and-swap of every write
  void append_to_journal(const std::string& line);
  std::string given_;  // as the user named it
  std::string path_;   // the file itself: `given_`, or the target of the link it names
  std::string journal_path_;
  std::optional<Seen> seen_;
};

}  // namespace dbform
