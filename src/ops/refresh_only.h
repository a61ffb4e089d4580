#pragma once
// `plan --refresh-only` and `apply --refresh-only`, as Terraform's -refresh-only: every record of
// the state is read from the API as a plan's refresh reads it (one list per project and kind, a
// read by id for what a lagging list lacks), and what changed outside dbform since the state was
// written is reported: settings, statuses, endpoints, resources gone. `apply` then records exactly
// that, with the time of the refresh, and makes no call but those reads. The manifests are read
// for the projects' keys (api_key_env) only: nothing they declare is planned, so a scheduled drift
// check reports what others did, never what a pull request proposes.
#include <optional>
#include <string>
#include <vector>

#include "manifest/model.h"
#include "ops/operation.h"
#include "plan/model.h"
#include "sql/session.h"
#include "state/model.h"
#include "state/store.h"
#include "util/env.h"

namespace dbform {

class ApiClient;  // api/client.h: the requests hold it, the .cpp calls it

// One recorded resource as the API shows it now, where that differs from the record.
struct OutsideChange {
  std::string address;
  ResourceKind kind = ResourceKind::Service;
  std::string resource_id;
  bool gone = false;                // deleted outside dbform (404, in no list nor read, or DELETED)
  std::vector<FieldChange> fields;  // settings: as recorded -> as the API shows them
  std::string status_before, status_after;      // equal when the status did not change
  std::string endpoint_before, endpoint_after;  // "host:port"; equal when unchanged
  std::string pooler_before, pooler_after;
  // A call journaled by a run that stopped before its answer: what the API shows now settles it.
  bool settled = false;
};

struct RefreshReport {
  std::vector<std::string> projects;   // read (each key checked, then one list per kind)
  size_t records = 0;                  // the records read (those with an id, in those projects)
  std::vector<OutsideChange> changes;  // in address order
  // Services whose objects inside the database could not be read from their catalogs, and why.
  std::vector<CatalogsUnread> catalogs_unread;
  std::map<std::string, std::string> catalogs_read;  // service -> when its catalogs were read
  std::vector<std::string> targets;    // --target: only these records (and what is in them) were read
  std::optional<RefreshStamp> last;    // when the state was last refreshed, before this run
  long long last_age_seconds = 0;      // how long before this run
  std::string lineage;                 // the state read
  long long serial = 0;
  bool has_changes() const { return !changes.empty(); }
  int gone() const;
};

struct RefreshOnlyRequest {
  const Manifest& manifest;  // the projects' keys (api_key_env); nothing it declares is planned
  StateStore& store;         // opened
  ApiClient& api;
  Clock& clock;
  EnvLookup env;
  std::vector<std::string> targets;  // records to read, as --target names them (and what is in them); empty: all
  int parallelism = 10;
  Duration settle_window = std::chrono::seconds(30);  // how far lists may lag behind a create
  // Where the objects inside the services' databases are read (read/catalogs.h); null: not read.
  const SqlConnector* catalogs = nullptr;
};

struct RefreshOnlyOutcome {
  enum class End {
    NoState,    // there is no state: nothing to read, nothing written
    Reported,   // plan --refresh-only: reported, nothing written
    Cancelled,  // apply --refresh-only: not confirmed, nothing written
    Recorded,   // apply --refresh-only: what was read and the time of the refresh, recorded
  };
  End end = End::Reported;
  RefreshReport report;
  State state;  // as read, with what the refresh read (recorded only by apply)
};

// plan --refresh-only: read-only and lock-free, as every plan is; writes nothing. Throws Error
// (MissingKeyError for a project without a key) when a key or a read fails, before anything is
// reported.
RefreshOnlyOutcome plan_refresh_only(const RefreshOnlyRequest& request);

// What apply --refresh-only tells as it goes.
class RefreshReporter {
 public:
  virtual ~RefreshReporter() = default;
  virtual void report(const RefreshReport& report) = 0;  // before the question
};

struct RefreshApplySettings {
  Duration lock_timeout{0};
  LockWaitNotice lock_wait;
  EnvLookup env;              // where a recovery file may go
  bool auto_approve = false;  // otherwise `approve` is asked when anything changed
};

// apply --refresh-only: locks the state for the whole run, reads it, refreshes it, reports, asks
// `approve` when anything changed outside dbform (unless auto-approved; a refresh that found
// nothing is recorded without asking: its time is all it records), and records what was read with
// the time of the refresh. No call but the reads. Throws Error as plan_refresh_only does, and for
// a lock held elsewhere or a write that failed; nothing is written then.
RefreshOnlyOutcome apply_refresh_only(const RefreshOnlyRequest& request, const RefreshApplySettings& settings,
                                      RefreshReporter& reporter, const Approver& approve);

// Stamps `state` as refreshed now by `by` ("apply", "apply --refresh-only"), for its next write.
// `records_changed`: that write records more than the stamp. One that does not carries on the
// serial whose records are unchanged, so that a plan saved against it still holds.
// `catalogs_read`: the services whose objects it read from their catalogs, and when; the stamp
// keeps the earlier times of the others the state still records.
void stamp_refresh(State& state, const std::string& by, const Clock& clock, bool records_changed,
                   const std::map<std::string, std::string>& catalogs_read = {});

// How current `state` is for a plan made from it alone (--no-refresh), at the clock's time.
StateFreshness freshness_of(const State& state, const Clock& clock);

}  // namespace dbform
