#pragma once
// `rotate-password` as an operation of the core: in the state's lock (ops/locked_state.h), the
// service's record is checked, its key resolved and the new password recorded as pending before
// the engine's password step sends it. Nothing is reported while it runs: the command line renders
// the outcome.
#include <string>

#include "manifest/model.h"
#include "ops/locked_state.h"
#include "ops/preview.h"

namespace dbform {

struct RotatePasswordRequest {
  StateAccess access;
  const Manifest& manifest;  // the keys' variables (and declarations, when there are any)
  ApiSource api;
  Clock& clock;
  std::string address;   // as typed: a full or a short address
  std::string password;  // the new one, checked (checked_password) or random
  const SqlConnector* sql = nullptr;  // a login role's password is set through it
};

struct RotatePasswordOutcome {
  std::string address;  // the service's full address
  std::string clear_warning;  // the password was recorded in clear (no key): why and how to seal it
};

// A password given by a person (--password-stdin): what was read, less one trailing newline.
// Throws UsageError, without quoting it, when it is shorter than 8 characters (empty included) or
// holds a control character.
std::string checked_password(std::string text);

// Throws UsageError for an address that is not a recorded service with an id (or a recorded login
// role of one), Error when the call or the role's transaction failed (the password stays recorded as pending for the next apply or rotate-password).
RotatePasswordOutcome rotate_password_operation(const RotatePasswordRequest& request);

}  // namespace dbform
