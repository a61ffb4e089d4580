#include "ops/state_edit.h"

#include <algorithm>

#include "ops/address.h"
#include "ops/sealed.h"
#include "plan/kinds.h"
#include "state/codec.h"
#include "state/file_store.h"
#include "state/pg_store.h"
#include "util/atomic_file.h"
#include "util/text.h"

namespace dbform {

namespace {

// The repairing read, an empty state when none is stored.
LockedRead repairing(const RepairRead& read) {
  return [read](StateStore& store) {
    auto state = read(store);
    return state ? std::move(*state) : new_state();
  };
}

Changes whole() {
  Changes c;
  c.save = Changes::Save::Whole;
  return c;
}

// The address `text` names for a record moving from `from`: a full address, `KIND/NAME` or `NAME`,
// always of the same project and kind.
std::string moved_address(const ResourceRecord& from, const std::string& text) {
  const std::string prefix = from.project_id + "/" + kind_plural(from.kind) + "/";
  std::string name = text;
  if (text.rfind(prefix, 0) == 0) name = text.substr(prefix.size());
  else if (text.rfind(std::string(kind_plural(from.kind)) + "/", 0) == 0) name = text.substr(text.find('/') + 1);
  if (!is_valid_name(name))
    throw UsageError("`" + text + "` is not a new address for " + from.address + ": give " + prefix +
                     "NAME (same project and kind) or a bare NAME (letters, digits, - and _)");
  return prefix + name;
}

}  // namespace

StateRmOutcome state_rm_operation(const StateRmRequest& r) {
  StateRmOutcome out;
  with_locked_state(r.access, [&](State& state) {
    std::vector<std::string>& addresses = out.removed;
    for (const auto& t : r.addresses) addresses.push_back(resolve_address(state, t).address);  // all or nothing
    // What lives in a forgotten service or VPC goes with it: a record whose parent is not recorded
    // could be neither read nor deleted.
    for (const auto& rec : state.resources)
      if (auto kind = parent_kind(rec.kind);
          kind && std::count(addresses.begin(), addresses.end(), resource_address(rec.project_id, *kind, rec.parent)) &&
          !std::count(addresses.begin(), addresses.end(), rec.address))
        addresses.push_back(rec.address);
    for (const auto& a : addresses)  // created, perhaps: an apply stopped before the answer
      if (const ResourceRecord* rec = state.find(a); rec->create_pending && rec->id.empty()) out.unknown.push_back(a);
    if (!out.unknown.empty() && !r.force)
      throw UsageError("nothing was removed: the create of " + join(out.unknown, ", ") +
                       " stopped before its outcome was known, so it may exist without being listed yet, and "
                       "forgetting it lets the next apply create a second one. Apply with it declared first (it is "
                       "looked up by name and adopted), or pass --force to forget it anyway");
    for (const auto& a : addresses) state.remove(a);
    return whole();
  }, repairing(r.read));
  return out;
}

StateMvOutcome state_mv_operation(const StateMvRequest& r) {
  StateMvOutcome out;
  with_locked_state(r.access, [&](State& state) {
    const ResourceRecord& from = resolve_address(state, r.from);
    if (parent_kind(from.kind))
      throw UsageError("`" + from.address + "` is a " + kind_noun(from.kind) + ", which the API cannot rename; move " +
                       "its " + kind_noun(*parent_kind(from.kind)) + " instead, and it moves along");
    out.to = moved_address(from, r.to);
    if (state.find(out.to))
      throw UsageError("`" + out.to + "` is recorded already: `dbform state rm` it first, or choose another name");
    if (auto why = unmovable_reason(from); !why.empty()) throw UsageError(why);
    out.from = from.address;
    out.old_name = from.name;
    out.name = out.to.substr(out.to.rfind('/') + 1);
    move_record(state, out.from, out.to, out.name);
    return whole();
  }, repairing(r.read));
  return out;
}

std::string state_pull_operation(StateStore& store, const RepairRead& read) {
  auto state = read(store);
  if (!state) throw UsageError("there is no state at " + store.describe() + " yet; nothing to pull");
  if (auto [r, s] = unreadable_secret(*state); s)
    throw UsageError("refusing to pull " + store.describe() + ": this role may not read the table " +
                     s->unreadable_in() + ", which holds its passwords (" + r->address + "'s first), so the "
                     "copy would lack them. Pull it with a role granted SELECT on " + s->unreadable_in() +
                     " (see docs/state.md); nothing was printed");
  return serialize_state(*state, store.cipher());
}

State read_push_source(const std::string& source, const StateCipher& cipher,
                       const std::function<std::string()>& stdin_text) {
  if (names_postgres_state(source, "state push's FILE"))
    throw UsageError("state push takes a state file, not `" + redacted_conninfo(source) +
                     "`: pull from that database first (dbform state pull --state URL > FILE), then push FILE");
  if (source == "-") return checked_unique(parse_state(stdin_text(), "standard input", cipher), "standard input");
  auto text = read_file_if_exists(source, Links::Follow, kMaxStateBytes);
  if (!text) throw UsageError("cannot push " + source + ": no such file");
  return checked_unique(parse_state(*text, source, cipher), source);
}

namespace {

// Whether two states are the same (lineage, serial, and the records as shown, sealed values as
// read), whatever the form their passwords are stored in.
bool same_records(const State& a, const State& b) {
  if (a.lineage != b.lineage || a.serial != b.serial || a.resources.size() != b.resources.size()) return false;
  for (size_t i = 0; i < a.resources.size(); ++i)
    if (record_to_json(a.resources[i]) != record_to_json(b.resources[i])) return false;
  return true;
}

}  // namespace

StatePushOutcome state_push_operation(const StatePushRequest& r) {
  StatePushOutcome out;
  const std::string dest = r.access.store.describe();
  bool held = false;
  const LockedRead read = [&](StateStore& store) {
    auto current = r.read(store);
    held = current.has_value();
    return current ? std::move(*current) : new_state();
  };
  out.state = with_locked_state(r.access, [&](State& state) {
    State incoming = r.incoming;
    if (held) {
      const std::string theirs = "lineage " + state.lineage + " serial " + std::to_string(state.serial);
      const std::string ours = "lineage " + incoming.lineage + " serial " + std::to_string(incoming.serial);
      out.held = theirs;
      if (state.lineage != incoming.lineage && !r.force)
        throw UsageError(dest + " holds another state (" + theirs + ") than " + r.source + " (" + ours +
                         "); nothing was pushed. Check that you push to the right place; --force replaces it anyway");
      if (state.serial > incoming.serial && !r.force)
        throw UsageError(dest + " is newer (" + theirs + ") than " + r.source + " (" + ours +
                         "); nothing was pushed. Pull it first, or pass --force to replace it with the older state");
      if (same_records(state, incoming)) return Changes{};
      // A state whose passwords are sealed never gets a clear one: pushed without the key, the
      // write refuses a clear password (with the key, it seals them).
      if (incoming.secrets_key_id.empty()) incoming.secrets_key_id = state.secrets_key_id;
      // Written over what was just read, under the lock: the compare-and-swap of every write.
      incoming.lineage = state.lineage;
      incoming.serial = state.serial;
    }
    state = std::move(incoming);
    out.pushed = true;
    return whole();
  }, read);
  return out;
}

StateRewriteOutcome state_rewrite_operation(const StateRewriteRequest& r) {
  StateStore& store = r.access.store;
  store.set_cipher(std::make_shared<StateCipher>(r.read_with, r.write_with));
  StateRewriteOutcome out;
  const LockedRead read = [&](StateStore& s) {
    auto state = s.read();
    if (!state)
      throw UsageError("there is no state at " + s.describe() + " yet; nothing to " + r.access.operation.substr(6));
    return std::move(*state);
  };
  const State written = with_locked_state(r.access, [&](State& state) {
    out.before = store.sealed_by();
    out.after = store.cipher().sealing_key_id();
    // A state sealed whole (the older form) is rewritten in the new form even with the same key, and
    // so is one whose journal still holds lines in the old form (a rewrite killed before it removed
    // them: the rotated passwords in clear, or under the old key); the whole write removes them.
    out.leftover = store.leftover_journal();
    if (out.before == out.after && !state.sealed_whole && !out.leftover) return Changes{};
    state.secrets_key_id = out.after;  // `state decrypt` writes every password in clear
    out.rewritten = true;
    return whole();
  }, read);
  out.serial = written.serial;
  out.backup_too = dynamic_cast<const FileStateStore*>(&store) != nullptr;
  return out;
}

}  // namespace dbform
