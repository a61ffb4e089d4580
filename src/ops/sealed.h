#pragma once
// Sealed secrets and the commands that need the state's key. With a key, each password the state
// holds is sealed on its own (state/cipher.h) and everything else reads without it: planning,
// listing, showing, importing and forgetting never need the key. A command that reads a password
// or records a new one needs it when the state's passwords are sealed, and says so before its first
// call; without any key and nothing sealed, passwords stay in clear and each command that records
// one warns.
#include <string>
#include <utility>

#include "plan/model.h"
#include "state/model.h"
#include "state/store.h"

namespace dbform {

// Whether `state`'s passwords are sealed and `store` has no key to open them.
bool sealed_without_key(const StateStore& store, const State& state);

// The first record of `state` holding a password out of this role's reach (a PostgreSQL role
// without SELECT on dbform_secrets), and that password; {nullptr, nullptr} when there is none.
std::pair<const ResourceRecord*, const Secret*> unreadable_secret(const State& state);

// Throws (exit 1) when some password of `state` is out of this role's reach (a PostgreSQL role
// without SELECT on dbform_secrets): `what` prints passwords, and printing the rest would pass for
// the whole. Says which table, as reading one of them does.
void require_readable_secrets(const State& state, const std::string& what);

// Throws UsageError when sealed_without_key: `what` ("this apply", "output orders.password") needs
// the state's key (`why`, when given, says what for), naming the key id and both variables that
// give it. A role that may not read the secrets table is told that first (the key alone would not
// help it), and the key second.
void require_state_key(const StateStore& store, const State& state, const std::string& what,
                       const std::string& why = "");

// The warning of a command that records a password in clear (no key, nothing sealed): where it is
// kept and the two variables that would seal it. "" when the store seals or the state is sealed.
std::string clear_password_warning(const StateStore& store, const State& state);

// Whether applying `plan` records a password: a create, adoption or replacement of a kind that has
// one (a service; a fork is a service's create), or a pending password set again.
bool plan_records_password(const Plan& plan, const State& state);

}  // namespace dbform
