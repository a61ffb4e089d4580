// The one writer of an apply run's state (engine/ledger.h).
#include "engine/ledger.h"

#include <algorithm>

#include "util/log.h"

namespace dbform::scheduling {

bool deliver(EventSink& sink, const Event& event) {
  try {
    sink.on_event(event);
    return true;
  } catch (const std::exception& e) {
    log::debug(std::string("the output failed, recording goes on: ") + e.what());
    return false;
  }
}

void Ledger::flush_events() {
  for (const auto& event : unreported_) deliver(events_, event);
  unreported_.clear();
}

bool Ledger::save() {
  if (changed_.empty()) return !save_failed();
  try {
    store_.write_changes(state_, std::vector<std::string>(changed_.begin(), changed_.end()));
    changed_.clear();
  } catch (const Error& e) {
    if (result_.save_error.empty())
      emit({EventKind::Failed, "", "", "", Duration(0), std::string("cannot save the state, stopping: ") + e.what()});
    result_.save_error = e.what();
  }
  return !save_failed();
}

void Ledger::compact() {
  try {
    store_.compact(state_);
  } catch (const Error& e) {  // every change is saved already: the journal keeps it
    log::warn(std::string("the state's journal could not be folded in (") + e.what() +
              "); it is replayed on every read until a later run folds it");
  }
}

void Ledger::hold_journal(bool fold_at_end) {
  journal_floor_ = store_.journal_floor();
  if (fold_at_end) store_.set_journal_floor(std::max(journal_floor_, StateStore::kRunJournalFloor));
}

}  // namespace dbform::scheduling
