#include "ops/sealed.h"

#include "plan/kinds.h"
#include "util/error.h"

namespace dbform {

bool sealed_without_key(const StateStore& store, const State& state) {
  return !state.secrets_key_id.empty() && !store.cipher().has_key();
}

void require_state_key(const StateStore& store, const State& state, const std::string& what,
                       const std::string& why) {
  if (!sealed_without_key(store, state)) return;
  // A role that may not read the secrets table (the pull request's planner) would not be helped by
  // the key: that table is its first obstacle, and the key comes second.
  if (const Secret* secret = unreadable_secret(state).second) {
    std::string role;
    try {
      secret->text();  // throws, naming the table and the grant
    } catch (const Error& e) {
      role = e.what();
    }
    throw UsageError(what + ": " + role + "; and as the passwords in " + store.describe() + " are sealed (key id " +
                     state.secrets_key_id + "), that role needs the state's key too (DBFORM_STATE_PASSPHRASE or "
                     "DBFORM_STATE_KEY_FILE); nothing was done");
  }
  throw UsageError(what + " needs the state's key" + (why.empty() ? "" : " (" + why + ")") + ": the passwords in " +
                   store.describe() +
                   " are sealed (key id " + state.secrets_key_id +
                   "). Set DBFORM_STATE_PASSPHRASE or DBFORM_STATE_KEY_FILE to the key they were sealed with; "
                   "nothing was done");
}

std::pair<const ResourceRecord*, const Secret*> unreadable_secret(const State& state) {
  for (const auto& r : state.resources)
    for (const Secret* s : {&r.initial_password, &r.pending_password})
      if (s->is_unreadable()) return {&r, s};
  return {nullptr, nullptr};
}

void require_readable_secrets(const State& state, const std::string& what) {
  const Secret* secret = unreadable_secret(state).second;
  if (!secret) return;
  try {
    secret->text();  // throws, naming the table and the grant
  } catch (const Error& e) {
    throw Error(what + ": " + e.what() + "; nothing was printed");
  }
}

std::string clear_password_warning(const StateStore& store, const State& state) {
  if (store.cipher().seals() || !state.secrets_key_id.empty()) return "";
  return "the password(s) this run records are kept in clear in " + store.describe() +
         ": set DBFORM_STATE_PASSPHRASE or DBFORM_STATE_KEY_FILE to seal them (then `dbform state encrypt` seals "
         "those recorded before)";
}

bool plan_records_password(const Plan& plan, const State& state) {
  for (const auto& a : plan.actions) {
    if (!type_of(a.kind).has_password) continue;
    if (a.action == Action::Create || a.action == Action::Adopt || a.action == Action::Replace) return true;
    const std::string& at = a.renamed_from.empty() ? a.address : a.renamed_from;
    if (const ResourceRecord* rec = state.find(at); rec && !rec->pending_password.empty()) return true;
  }
  return false;
}

}  // namespace dbform
