#pragma once
// The state: what dbform has created (or is about to create) and what it learned about it.
#include <map>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include <nlohmann/json.hpp>

#include "manifest/model.h"

namespace dbform {

// The newest document version this dbform reads. Version 2 is a document whose passwords are
// sealed one by one (it names `secrets_key_id`): an older dbform, which would take a sealed value
// for a damaged field, refuses it as "written by a newer dbform". A document with its passwords in
// clear is still written as version 1, which every dbform reads.
constexpr int kStateVersion = 2;
constexpr int kClearStateVersion = 1;

// A password the state holds: its clear text when known (written in clear, or opened with the
// state's key), or, read without the key, the value sealed for its record (docs/state.md), carried
// through reads and writes unchanged. `empty()` means no password at all, sealed or not: a sealed
// one is never taken for an unknown one.
class Secret {
 public:
  Secret() = default;
  Secret(std::string clear) : clear_(std::move(clear)) {}  // NOLINT: a password learnt now
  Secret(const char* clear) : clear_(clear) {}              // NOLINT
  // A sealed value read without the key; `bound_to` is the binding it was read with (its record's
  // kind, project and id), which a write without the key cannot renew.
  static Secret sealed(nlohmann::json envelope, std::string bound_to);
  // A password kept apart (the PostgreSQL store's secrets table, `table`) that this run's role may
  // not read: the record reads, plans and shows; only the password itself is out of reach.
  static Secret unreadable(std::string table);

  bool empty() const { return clear_.empty() && sealed_.is_null() && unreadable_in_.empty(); }
  bool is_sealed() const { return !sealed_.is_null(); }
  bool is_unreadable() const { return !unreadable_in_.empty(); }
  const std::string& unreadable_in() const { return unreadable_in_; }
  // The clear text ("" when there is none). Throws Error for a sealed value: every command that
  // reads a password checks for the key before it starts, and this is the guard behind them.
  const std::string& text() const;
  const nlohmann::json& envelope() const { return sealed_; }
  const std::string& bound_to() const { return bound_to_; }
  void clear() { *this = Secret(); }
  bool operator==(const Secret& other) const {
    return clear_ == other.clear_ && sealed_ == other.sealed_ && bound_to_ == other.bound_to_ &&
           unreadable_in_ == other.unreadable_in_;
  }
  bool operator!=(const Secret& other) const { return !(*this == other); }

 private:
  std::string clear_;
  nlohmann::json sealed_;
  std::string bound_to_;
  std::string unreadable_in_;
};

struct ResourceRecord {
  std::string address;     // PROJECT_ID/services/NAME
  std::string project_id;
  ResourceKind kind = ResourceKind::Service;
  std::string name;
  std::string parent;      // the name of the service or VPC it is in (read replica sets, peerings); "" otherwise
  // The settings dbform set: those it was created with, then each update's once the API accepted
  // it. A field a later call will set (vpc, connection_pooler) is absent until then.
  nlohmann::json settings = nlohmann::json::object();
  // The settings as the API showed them at the last refresh (or adoption), updated as dbform
  // changes them; null when never read. Where they differ from `settings`, the resource was
  // changed outside dbform (drift).
  nlohmann::json observed;
  std::string id;          // service_id / vpc id; "" while only the intent is recorded
  // The create call was (or is about to be) sent and its outcome is not known yet: the next run
  // must look the resource up by name before creating it again.
  bool create_pending = false;
  std::string status;      // last status seen (services); "" for VPCs and intents
  std::string endpoint_host;
  std::optional<int> endpoint_port;
  std::string pooler_host;
  std::optional<int> pooler_port;
  Secret initial_password;  // empty when unknown (e.g. adopted)
  // A password chosen and recorded before the call that sets it; it replaces initial_password once
  // the API confirmed it. Setting it again is harmless, so a run that stopped before the answer
  // simply sets it again.
  Secret pending_password;
  // An update call recorded before it was sent ({"call": "resize", "body": {...}}) and cleared
  // after its result: a run that stopped in between left its outcome unknown, so the next run
  // checks the service before it sends anything.
  nlohmann::json pending_call;
  // The last refresh found it gone (404, absent, or DELETED): the next apply creates it again.
  bool deleted_outside = false;
  // As last declared, recorded at every apply: a protected orphan is never deleted, so removing
  // the declaration (and the protection with it) cannot unprotect it.
  bool deletion_protection = false;
  std::string created_at;  // when the create was recorded (UTC, ISO 8601)
  std::string updated_at;
  nlohmann::json last_response;  // last API object seen, initial_password removed

  // In its kind's ready status (KindForm::ready_status: a service READY, a read replica set
  // active); a kind without statuses once it exists (a VPC; a peering, whose acceptance is not
  // waited for).
  bool is_ready() const {
    const char* ready = kind_form(kind).ready_status;
    return *ready ? status == ready : !id.empty();
  }
  // Ready, or in the status that settles it besides (a service PAUSED): nothing is under way, and
  // calls may be planned (a paused service's are wrapped in start and stop).
  bool is_settled() const {
    const char* settled = kind_form(kind).settled_status;
    return is_ready() || (*settled && status == settled);
  }
  // Its delete was journaled (sent, or about to be) and not yet seen to take effect.
  bool delete_pending() const { return pending_call.is_object() && pending_call.value("call", "") == "delete"; }
};

// A role of a service's database that logs in (declared `login: true`): it has a password of its
// own and connects at its service's endpoints as itself.
inline bool is_login_role(const ResourceRecord& r) {
  return r.kind == ResourceKind::Role && r.settings.is_object() && r.settings.value("login", false);
}

// The statuses from which a service will not become READY by itself: DELETING and
// DELETED. The one list the differ, the watcher and the lookups share.
bool is_failed_status(const std::string& status);
// PAUSED, and PAUSING (on its way there): what the differ, the watcher and the observed settings
// count as paused.
bool is_paused_status(const std::string& status);


// When a run that wrote the state last read every record of it from the API (an apply whose
// refresh covered every project the state records, or `apply --refresh-only`): what a plan made
// from the state alone (`plan --no-refresh`, a pull request without a key) says about how current
// it is.
struct RefreshStamp {
  std::string at;        // UTC, as format_utc writes it
  std::string by;        // the command: "apply", "apply --refresh-only"
  long long serial = 0;  // the serial of the write that recorded it
  // That write changed no record (nothing had changed outside dbform): the records are those of
  // this serial, so a plan saved against it still holds (plan/plan_file.cpp).
  std::optional<long long> unchanged_since;
  // Service address -> when a run that recorded the state last read its objects from its
  // catalogs (UTC): what a plan that cannot read them says of how current their records are.
  std::map<std::string, std::string> catalogs;
};

struct State {
  std::string lineage;  // UUID, fixed at creation
  long long serial = 0;
  // The key id its passwords are sealed with, "" when they are in clear: as read, then as written.
  // A write without the key keeps it, and refuses a password in clear (a sealed state never gets
  // a clear one); `state decrypt` empties it.
  std::string secrets_key_id;
  // Read from a document sealed whole (the form of dbform before each password was sealed on its
  // own): its next write, whatever it changes, rewrites it whole in the new form.
  bool sealed_whole = false;
  std::vector<ResourceRecord> resources;
  std::optional<RefreshStamp> refreshed;  // never, or not since the state was made

  ResourceRecord* find(const std::string& address);
  const ResourceRecord* find(const std::string& address) const;
  ResourceRecord& upsert(const ResourceRecord& r);  // replaces by address or appends
  bool remove(const std::string& address);

 private:
  mutable std::unordered_map<std::string, size_t> index_;  // address -> position; kept by upsert/remove
  void reindex() const;
};

// Why the record may not move to another name, or "" when it may: a create whose outcome is
// unknown is settled by looking its resource up by the name it was sent with.
std::string unmovable_reason(const ResourceRecord& rec);

// Moves the record at `from` to `to` (same project and kind; `to` not recorded), renaming it; a
// VPC's new name replaces the old one in the `vpc` of its project's services, and the records of
// the resources in it (read replica sets, peerings) move with it. Returns every address whose
// record changed (`from` and `to` included; both addresses of a moved child).
// The record whose password `r`'s connections use (KindForm::password): `r` itself, or (a read
// replica set) its parent's record; nullptr when that one is not recorded.
const ResourceRecord* password_record(const State& state, const ResourceRecord& r);

std::vector<std::string> move_record(State& state, const std::string& from, const std::string& to,
                                     const std::string& new_name);

// Every record, sorted by address one segment at a time (`acme/services/orders` and its read replica
// sets before `acme/services/orders-2`, and `acme` before `acme-prod`): how listings show a state,
// whatever order the records were written in.
std::vector<const ResourceRecord*> records_by_address(const State& state);

// "service\nPROJECT\nID": what a record's sealed passwords are bound to. Its address is not in it,
// so `state mv` and renames keep them; its id is, so a value copied onto another record never opens.
std::string secret_binding(const ResourceRecord& r);

// A new, empty state with a fresh random lineage.
State new_state();
std::string new_uuid();

}  // namespace dbform
