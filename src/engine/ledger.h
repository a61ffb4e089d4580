#pragma once
// The one writer of an apply run's state (Pulumi's SnapshotManager beside its step executor):
// every record the run changes is marked here and saved with the round's one write (the journal of
// the calls about to be sent included); the events that tell of a change reach the renderers only
// once it is saved; the journal floor during the run, the fold at its end, and the run's result.
#include <set>
#include <string>
#include <vector>

#include "engine/apply.h"
#include "plan/events.h"
#include "state/model.h"
#include "state/store.h"

namespace dbform::scheduling {

// Hands an event to a renderer, which can never throw into the engine: its output is lost (a closed
// pipe, a full disk), the run goes on recording. False when the renderer failed.
bool deliver(EventSink& sink, const Event& event);

class Ledger {
 public:
  Ledger(StateStore& store, State& state, EventSink& events) : store_(store), state_(state), events_(events) {}

  State& state() { return state_; }
  // The record at `address`, which the run's operations act on (it exists while they do).
  ResourceRecord& record(const std::string& address) { return *state_.find(address); }
  // Changed in memory: saved by the next save.
  void changed(const std::string& address) { changed_.insert(address); }
  void changed(const std::vector<std::string>& addresses) { changed_.insert(addresses.begin(), addresses.end()); }

  // Held until the save that records what it tells, so that a renderer that fails can never cost a
  // record (flush_events delivers them).
  void emit(Event event) { unreported_.push_back(std::move(event)); }
  void flush_events();

  // Writes every record changed since the last save, in one write. A state that cannot be written
  // stops the run like a signal: false, and `result().save_error` says why (reported once).
  bool save();
  // What is unsaved now, to put back when the next save fails (save_or_undo).
  std::set<std::string> unsaved() const { return changed_; }
  // A round's journal that could not be saved is taken back out of memory by the caller; the
  // ledger then holds as unsaved only what it held before the round (`before`).
  void forget_round(std::set<std::string> before) { changed_ = std::move(before); }
  // Everything journaled so far folded into one document (and the polls' last answers with it).
  void compact();
  // While a run that folds the journal at its end runs, the journal is not folded on the way (a
  // crash leaves a longer journal, which the next read replays: StateStore::kRunJournalFloor).
  void hold_journal(bool fold_at_end);
  void release_journal() { store_.set_journal_floor(journal_floor_); }

  ApplyResult& result() { return result_; }
  bool save_failed() const { return !result_.save_error.empty(); }
  // The run's result: whether the last write failed too, and the state holds more than the store.
  ApplyResult finish() {
    result_.unsaved_changes = !changed_.empty();
    return std::move(result_);
  }

 private:
  StateStore& store_;
  State& state_;
  EventSink& events_;
  std::set<std::string> changed_;  // addresses changed in memory since the last save
  std::vector<Event> unreported_;  // waiting for the save that records what they tell
  size_t journal_floor_ = 0;
  ApplyResult result_;
};

}  // namespace dbform::scheduling
