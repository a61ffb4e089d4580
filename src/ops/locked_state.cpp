#include "ops/locked_state.h"

#include "ops/recovery.h"

namespace dbform {

State stored_or_new(StateStore& store) {
  auto state = store.read();
  return state ? std::move(*state) : new_state();
}

LockedRead stored_or_new_noting(bool& missing) {
  return [&missing](StateStore& store) {
    auto state = store.read();
    missing = !state;
    return state ? std::move(*state) : new_state();
  };
}

Changes refresh_changes(const std::vector<std::string>& changed, const State& state) {
  Changes save;
  save.save = changed.size() * 2 > state.resources.size() ? Changes::Save::Whole : Changes::Save::Journal;
  save.changed = changed;
  return save;
}

State with_locked_state(const StateAccess& access, const std::function<Changes(State&)>& body,
                       const LockedRead& read) {
  auto lock = lock_state(access.store, access.operation, access.lock_timeout, access.lock_wait);
  State state = read(access.store);
  const Changes changes = body(state);
  if (changes.engine && !changes.engine->save_error.empty())
    throw Error(save_failure_message(*changes.engine, state, access.store, access.env));
  if (changes.save == Changes::Save::Journal) access.store.write_changes(state, changes.changed);
  else if (changes.save == Changes::Save::Whole) access.store.write(state);
  if (changes.fold) access.store.compact(state);
  if (changes.then) changes.then(state);
  return state;
}

}  // namespace dbform
