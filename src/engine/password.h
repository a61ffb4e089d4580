#pragma once
// Setting a service's password, or a login role's of its database (`rotate-password`): journaled,
// sent and recorded by the apply engine's scheduler, as the password step of an apply (a role's:
// as its objects step, a SCRAM verifier in one transaction as the service's admin).
#include <string>

#include "api/client.h"
#include "sql/session.h"
#include "state/store.h"

namespace dbform {

// Records `password` as the service's pending password, saves, and has the engine send
// updatePassword and record it as the password once the API confirmed it. An earlier pending
// password is set first. Throws Error when the call fails: the password stays recorded as
// pending, and the next apply (or rotate-password) sets it again. `sql`: the connections a login
// role's password is set through (unused for a service's).
void rotate_password(ApiClient& api, StateStore& store, State& state, const std::string& address,
                     const std::string& key, const std::string& password, Clock& clock,
                     const SqlConnector* sql = nullptr);

}  // namespace dbform
