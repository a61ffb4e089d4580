#include "engine/password.h"

#include "util/text.h"

namespace dbform {

namespace {

// The API confirmed the pending password: it is the password now.
void confirm_pending(StateStore& store, State& state, ResourceRecord& rec, Clock& clock) {
  rec.initial_password = rec.pending_password;
  rec.pending_password.clear();
  rec.updated_at = format_utc(clock.wall_now());
  store.write_changes(state, {rec.address});
}

}  // namespace

void rotate_password(ApiClient& api, StateStore& store, State& state, const std::string& address,
                     const std::string& key, const std::string& password, Clock& clock) {
  ResourceRecord& rec = *state.find(address);
  // A pending password may be the one the service has (its change's answer was lost): it is kept
  // until the service is known to have another, so it is set again first (SPEC section 5).
  if (!rec.pending_password.empty() && rec.pending_password != password) {
    try {
      api.update_password(key, rec.project_id, rec.id, rec.pending_password);
    } catch (const Error& e) {
      throw Error(std::string("an earlier password change of ") + address +
                  " is still pending (the service may have that password) and could not be completed: " + e.what() +
                  ". Nothing else was changed: the pending password stays recorded, and `dbform output " + address +
                  ".password` cannot be trusted until a rotate-password or apply completes it");
    }
    confirm_pending(store, state, rec, clock);
  }
  rec.pending_password = password;
  rec.updated_at = format_utc(clock.wall_now());
  store.write_changes(state, {address});  // on disk before it is sent: a crash cannot lose it
  try {
    api.update_password(key, rec.project_id, rec.id, password);
  } catch (const Error& e) {
    throw Error(std::string("the new password could not be set: ") + e.what() +
                ". It stays recorded as pending: the next apply, or rotate-password again, sets it");
  }
  confirm_pending(store, state, rec, clock);
}

std::string checked_password(std::string text) {
  if (!text.empty() && text.back() == '\n') text.pop_back();
  if (!text.empty() && text.back() == '\r') text.pop_back();
  if (text.empty()) throw UsageError("--password-stdin read an empty password; nothing was changed");
  if (text.size() < 8) throw UsageError("the password read from stdin is shorter than 8 characters; nothing was changed");
  for (unsigned char c : text)
    if (c < 0x20 || c == 0x7f)
      throw UsageError("the password read from stdin holds a control character (a second line?); nothing was changed");
  if (valid_utf8(text) != text) throw UsageError("the password read from stdin is not valid UTF-8; nothing was changed");
  return text;
}

}  // namespace dbform
