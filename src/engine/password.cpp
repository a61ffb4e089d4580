#include "engine/password.h"

#include "engine/apply.h"
#include "util/text.h"

namespace dbform {

namespace {

// rotate-password reports through its own messages: the engine's events go nowhere.
class NoEvents : public EventSink {
 public:
  void on_event(const Event&) override {}
};

// Sets the service's recorded pending password through the scheduler, as an apply's password step
// does: sent, and recorded as the password once the API confirmed it (appended to the journal).
// `journal`: the record changed in memory before the run (a new pending password), saved by the
// run with its first write, before the call. Returns why it was not set ("" when it was). Throws
// Error when the state cannot be saved.
std::string set_pending(ApiClient& api, StateStore& store, State& state, const ResourceRecord& rec,
                        const std::string& key, Clock& clock, const SqlConnector* sql,
                        const std::vector<std::string>& journal = {}) {
  Plan plan;
  // An update of a settled service: its password step first, nothing else. Of a login role: its
  // service's objects step with that role alone, as recorded, and its pending password.
  PlannedAction& a = plan.actions.emplace_back(action_on(rec, Action::Update));
  a.after = rec.settings;
  a.deletion_protection = rec.deletion_protection;
  plan.summary = summarize(plan.actions);
  NoEvents events;
  ApplyOptions options;
  options.fold_journal = false;
  options.sql = sql;
  ApplyEngine engine(api, store, clock, events, options);
  const ApplyResult result = engine.apply(plan, {{rec.project_id, {key, ""}}}, state, journal);
  if (!result.save_error.empty()) throw Error(result.save_error);
  return result.failures.empty() ? "" : result.failures.front();
}

}  // namespace

void rotate_password(ApiClient& api, StateStore& store, State& state, const std::string& address,
                     const std::string& key, const std::string& password, Clock& clock, const SqlConnector* sql) {
  ResourceRecord& rec = *state.find(address);
  // A pending password may be the one the service has (its change's answer was lost): it is kept
  // until the service is known to have another, so it is set again first.
  if (!rec.pending_password.empty() && rec.pending_password != Secret(password)) {
    if (const std::string why = set_pending(api, store, state, rec, key, clock, sql); !why.empty())
      throw Error("an earlier password change of " + address +
                  " is still pending (the service may have that password) and could not be completed: " + why +
                  ". Nothing else was changed: the pending password stays recorded, and `dbform output " + address +
                  ".password` cannot be trusted until a rotate-password or apply completes it");
  }
  ResourceRecord& now = *state.find(address);
  now.pending_password = password;
  now.updated_at = format_utc(clock.wall_now());
  // On disk before it is sent (the run's first write, with the call's journal): a crash cannot
  // lose it, and the run stays the one writer of the state.
  if (const std::string why = set_pending(api, store, state, now, key, clock, sql, {address}); !why.empty())
    throw Error(why);
}

}  // namespace dbform
