#include "ops/rotate_password.h"

#include "api/project_key.h"
#include "engine/password.h"
#include "ops/address.h"
#include "ops/keys.h"
#include "ops/sealed.h"
#include "plan/kinds.h"
#include "util/text.h"

namespace dbform {

RotatePasswordOutcome rotate_password_operation(const RotatePasswordRequest& r) {
  RotatePasswordOutcome out;
  with_locked_state(r.access, [&](State& state) {
    require_state_key(r.access.store, state, "rotate-password");  // it records the new password
    out.clear_warning = clear_password_warning(r.access.store, state);
    const ResourceRecord& rec = resolve_address(state, r.address);
    if (rec.kind == ResourceKind::Role) {
      if (!is_login_role(rec))
        throw UsageError(rec.address + " is a group role (login: false): it has no password to rotate");
      if (rec.create_pending)
        throw UsageError(rec.address + " is not made yet (its transaction's outcome is unknown): apply first");
      out.address = rec.address;
      // No API call: the role's password goes to its database as a verifier, as apply sends it.
      rotate_password(r.api(), r.access.store, state, out.address, "", r.password, r.clock, r.sql);
      return Changes{};
    }
    if (const KindForm& form = kind_form(rec.kind); form.password != PasswordOwner::Own)
      throw UsageError(rec.address + " is a " + form.noun + ": only services and their login roles have passwords" +
                       (form.password == PasswordOwner::Parent
                            ? std::string(" (a ") + form.noun + " shares its " + kind_noun(*form.parent) + "'s)"
                            : ""));
    if (rec.id.empty()) throw UsageError(rec.address + " has no id yet (its create's outcome is unknown): apply first");
    const std::string key = resolve_keys(r.manifest, {rec.project_id}, r.access.env).at(rec.project_id).key;
    out.address = rec.address;
    // The engine's password step: the pending password journaled before its call, the password
    // recorded once confirmed; left appended for the next apply to fold.
    rotate_password(r.api(), r.access.store, state, out.address, key, r.password, r.clock);
    return Changes{};
  });
  return out;
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
