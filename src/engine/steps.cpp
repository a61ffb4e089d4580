// The operation steps of a run (engine/steps.h): for each, whether it needs a call, what it
// journals, what it sends, and how its answer is checked and recorded.
#include "engine/steps.h"

#include "engine/apply_run.h"

#include <algorithm>

#include "plan/differ.h"
#include "util/json_limits.h"
#include "util/log.h"
#include "util/text.h"

namespace dbform::scheduling {

// The table: one row per step (OpType, in its order). What differs from one step to another is
// here; the loop (apply_run.cpp) runs every step through the same journal, send and answer.
const Steps::Row& Steps::row(size_t o) const {
  static const Row kRows[] = {
      // Settle: watched until READY, no call.
      {&Steps::never, &Steps::start_watching, nullptr, nullptr, nullptr, nullptr},
      // Create: its intent recorded, then created (or adopted by name), then watched.
      {&Steps::always, &Steps::complete, &Steps::journal_create, &Steps::forget_unsent_intent, &Steps::send_create,
       &Steps::handle_create},
      // Password: a recorded pending password is set; recorded as the password once confirmed. It
      // journals nothing more: the pending password is recorded already, and stays when unsent.
      {&Steps::password_pending, &Steps::complete, nullptr, nullptr, &Steps::send_password, &Steps::handle_password},
      // Call: recorded as pending, sent unless its change shows already, then watched until it shows.
      {&Steps::call_not_shown, &Steps::record_shown_call, &Steps::journal_call, &Steps::drop_pending_call,
       &Steps::send_call, &Steps::handle_call},
      // Delete: recorded as pending, sent once the API shows the recorded name, then watched until gone.
      {&Steps::always, &Steps::complete, &Steps::journal_delete, &Steps::drop_pending_call,
       &Steps::send_delete, &Steps::handle_delete},
      // Barrier: acts on nothing, done when what it needs is.
      {&Steps::never, &Steps::complete, nullptr, nullptr, nullptr, nullptr},
  };
  static_assert(std::size(kRows) == static_cast<size_t>(OpType::Barrier) + 1, "one row per OpType");
  return kRows[static_cast<size_t>(run_.ops_[o].what.type)];
}

const PlannedAction& Steps::action_of(size_t o) const { return *run_.items_[run_.ops_[o].item].action; }
ResourceRecord& Steps::record_of(size_t o) { return *run_.state_.find(action_of(o).address); }
const PlannedCall& Steps::call_of(size_t o) const { return action_of(o).calls[run_.ops_[o].what.call]; }
void Steps::complete(size_t o) { run_.complete(o); }

bool Steps::always(size_t) { return true; }
bool Steps::never(size_t) { return false; }
bool Steps::password_pending(size_t o) { return !record_of(o).pending_password.empty(); }
bool Steps::call_not_shown(size_t o) { return !shows_change(o, record_of(o)); }

void Steps::start_watching(size_t o) {  // watched until READY from now
  run_.start_watch(o, run_.clock_.now());
  run_.watch_now(run_.ops_[o].item);
}

// A call whose change the service shows already (an earlier send whose answer was lost, or a run
// that stopped before recording it) is recorded, not sent again.
void Steps::record_shown_call(size_t o) {
  record_call(o);
  complete(o);
}

bool Steps::journal_create(size_t o) {
  const PlannedAction& a = action_of(o);
  for (const Dependency& d : type_of(a.kind).needs(a)) {
    const ResourceRecord* needed = run_.state_.find(d.address);
    if (a.action != Action::Adopt && d.settled && (!needed || needed->id.empty() || !needed->is_ready())) {
      if (!run_.options_.wait) {  // it was not waited for
        run_.leave(o, "not created: its " + d.role + " `" + d.address + "` was not waited for (--no-wait)");
        return false;
      }
      run_.fail_op(o, "not created: its " + d.role + " `" + d.address + "` is not READY (" +
                     (needed && !needed->status.empty() ? "status " + needed->status : "not created yet") +
                     "); the next apply creates it once it is");
      return false;
    }
  }
  record_intent(a);
  return true;
}

bool Steps::journal_call(size_t o) {
  const PlannedAction& a = action_of(o);
  const PlannedCall& call = call_of(o);
  nlohmann::json body = call_body(a, call);
  if (body.is_object() && body.contains("vpc_id") && body["vpc_id"].is_null()) {
    run_.fail_op(o, call.call == "attachToVPC"
                   ? "not attached: its VPC `" + call.vpc + "` was not created (see above); the next apply "
                     "attaches it"
                   : "not detached: the id of VPC `" + call.vpc + "` is not known. Apply without "
                     "--no-refresh: its refresh reads it");
    return false;
  }
  record_of(o).pending_call = {{"call", call.call}, {"body", std::move(body)}};
  run_.changed_.insert(a.address);
  return true;
}

bool Steps::journal_delete(size_t o) {
  record_of(o).pending_call = {{"call", "delete"}};
  run_.changed_.insert(action_of(o).address);
  return true;
}

void Steps::drop_pending_call(size_t o) { record_of(o).pending_call = nullptr; }

void Steps::send_create(WorkQueue<Outcome>& workers, size_t o) {
  const PlannedAction& a = action_of(o);
  run_.start_watch(o, run_.clock_.now());  // a service's wait timeout counts from its create
  // A read replica set or peering recorded but missing from a list may only be missing from that
  // list (a lagging or flaky one): its absence is confirmed over the settle window first.
  const bool look_first = a.action == Action::Adopt || (a.action == Action::Create && !a.resource_id.empty() &&
                                                        parent_kind(a.kind).has_value());
  const ResourceRecord* source = nullptr;
  std::string made_from;
  for (const Dependency& d : type_of(a.kind).needs(a))
    if (d.source && (source = run_.state_.find(d.address)))
      made_from = "from its " + d.role + " " + d.address + " (" + source->id + ")";
  run_.emit({EventKind::CreateSent, a.address, "", "", Duration(0),
        look_first ? (a.action == Action::Adopt ? "an earlier create's outcome is unknown: looking it up by name first"
                                                : "missing from a list: looking it up by name again first")
                   : made_from});
  submit(workers, o, [this, &a, look_first, key = run_.key_of(a), scope = run_.scope_of(a),
                      from = source ? source->id : std::string()] {
    try {
      return create_or_adopt(CreateContext{run_.api_, run_.clock_, run_.options_.settle_window, run_.options_.stop}, a,
                             scope, key,
                             look_first, from);
    } catch (const std::exception& e) {  // e.g. the lookup failed: the outcome is still unknown
      Outcome out;
      out.error = describe_exception(e) + "; the create's outcome is unknown, so the next apply looks for `" +
                  a.name + "` by name before creating it";
      return out;
    }
  });
}

void Steps::send_password(WorkQueue<Outcome>& workers, size_t o) {
  const ResourceRecord& rec = record_of(o);
  submit(workers, o, [this, &a = action_of(o), id = rec.id, password = rec.pending_password.text(),
                      key = run_.key_of(action_of(o))] { return set_password(run_.api_, a, id, key, password); });
}

void Steps::send_call(WorkQueue<Outcome>& workers, size_t o) {
  ++run_.ops_[o].sends;
  const PlannedAction& a = action_of(o);
  const ResourceRecord& rec = record_of(o);
  const std::string& name = rec.pending_call["call"].get_ref<const std::string&>();
  const nlohmann::json& body = rec.pending_call["body"];
  run_.emit({EventKind::UpdateSent, a.address, rec.id, "", Duration(0),
             name + (body.is_null() ? "" : " " + dump_json(body))});
  submit(workers, o, [this, &a, scope = run_.scope_of(a), id = rec.id, key = run_.key_of(a), name, body] {
    return send_update(run_.api_, a, scope, id, key, name, body);
  });
}

void Steps::send_delete(WorkQueue<Outcome>& workers, size_t o) {
  const PlannedAction& a = action_of(o);
  const ResourceRecord& rec = record_of(o);
  run_.start_watch(o, run_.clock_.now());  // a delete's time counts from its call
  run_.emit({EventKind::DeleteSent, a.address, rec.id, "", Duration(0), ""});
  submit(workers, o, [this, &a, scope = run_.scope_of(a), id = rec.id, key = run_.key_of(a)] {
    return delete_resource(run_.api_, a, scope, id, key);
  });
}

void Steps::record_intent(const PlannedAction& a) {
  ResourceRecord* rec = run_.state_.find(a.address);
  if (rec && rec->create_pending) return;  // an adopt: the intent is already recorded
  ResourceRecord r;
  r.address = a.address;
  r.project_id = a.project_id;
  r.kind = a.kind;
  r.parent = a.parent;
  r.name = a.name;
  r.settings = created_with(a.kind, a.after);  // the fields later calls set are recorded as they succeed
  r.deletion_protection = a.deletion_protection;
  r.create_pending = true;
  r.created_at = r.updated_at = format_utc(run_.clock_.wall_now());
  run_.state_.upsert(r);
  run_.changed_.insert(r.address);
}

void Steps::forget_unsent_intent(size_t o) {
  if (const PlannedAction& a = action_of(o); a.action != Action::Adopt) run_.state_.remove(a.address);
}

void Steps::handle_create(size_t o, const Outcome& out) {
  const PlannedAction& a = action_of(o);
  if (out.stopped) {  // unfinished; its intent stays unless this run never sent its create
    if (out.not_sent) {
      forget_unsent_intent(o);
      run_.changed_.insert(a.address);
    }
    run_.ops_[o].step = OpStep::Ready;
    return;
  }
  if (!out.error.empty()) {
    if (out.nothing_created) {
      run_.state_.remove(a.address);  // nothing exists: the next run plans a plain create
      run_.changed_.insert(a.address);
    }
    return run_.fail_op(o, out.error);
  }
  ResourceRecord& rec = record_of(o);
  const std::string now = format_utc(run_.clock_.wall_now());
  rec.create_pending = false;
  const ResourceType& type = type_of(a.kind);
  if (out.shown) record_answer(rec, *out.shown, now);
  if (out.adopted && out.shown)
    rec.observed = type.observe(*out.shown, rec.settings, recorded_vpc_names(run_.state_, a.project_id));
  run_.changed_.insert(a.address);
  (out.adopted ? run_.result_.adopted : run_.result_.created)++;
  std::string note;
  if (out.adopted && type.has_password && rec.initial_password.empty()) {
    // Its initial password was in the answer that was lost, so nobody knows it: a new one is
    // chosen now, recorded, and set once the service is READY. One chosen by an earlier run whose
    // answer was lost too is kept: the service may have it already.
    if (rec.pending_password.empty()) rec.pending_password = random_password();
    note = "the create's answer, and the initial password in it, were lost: a new password is recorded and set "
           "once it is READY (`dbform rotate-password " + a.address + "` sets another at any time)";
  }
  if (out.adopted && differs_from_declared(rec))
    note += std::string(note.empty() ? "" : "; ") +
            "its settings differ from the declaration, recorded as found: the next plan shows the difference";
  run_.emit({out.adopted ? EventKind::Adopted : EventKind::Created, a.address, rec.id, rec.status, Duration(0), note});
  if (!type.watched) return complete(o);
  if (!run_.options_.wait) return end_unconfirmed(o);
  if (!out.adopted) run_.watcher_.created(run_.ops_[o].item, type.verdict(rec.status) == StatusVerdict::Ready);
  run_.after_status(run_.ops_[o].item, rec);
}

bool Steps::differs_from_declared(const ResourceRecord& rec) {
  for (auto it = rec.settings.begin(); it != rec.settings.end(); ++it)
    if (rec.observed.contains(it.key()) && rec.observed[it.key()] != it.value()) return true;
  return false;
}

void Steps::handle_password(size_t o, const Outcome& out) {
  if (!out.error.empty())
    return run_.fail_op(o, "its new password could not be set: " + out.error +
                          ". It stays recorded as pending, and the next apply (or rotate-password) sets it again");
  ResourceRecord& rec = record_of(o);
  rec.initial_password = rec.pending_password;
  rec.pending_password.clear();
  run_.item_of(o).password_set = true;
  rec.updated_at = format_utc(run_.clock_.wall_now());
  run_.changed_.insert(rec.address);
  complete(o);
}

void Steps::handle_call(size_t o, const Outcome& out) {
  Op& op = run_.ops_[o];
  ResourceRecord& rec = record_of(o);
  const PlannedCall& call = call_of(o);
  // Busy (409) or no answer: the call may have been made (a gateway's 504 after it was, then a
  // retry refused as busy). It stays pending until the resource tells, so that a run stopped
  // before then has the next one check before sending it again.
  const bool unknown = !out.error.empty() && (out.http_status == 409 || out.transient);
  if (!unknown) rec.pending_call = nullptr;
  run_.changed_.insert(rec.address);
  const bool watched = type_of(action_of(o).kind).watched;
  if (!out.error.empty()) {
    if (unknown && op.sends < kMaxCallSends && watched) {
      log::info(rec.address + ": " + call.call + " was not confirmed (" + out.error + "); checking the service");
      op.awaiting = false;
      run_.start_watch(o, run_.clock_.now());
      return run_.schedule_poll(op.item, rec);
    }
    return run_.fail_op(o, call.call + " failed: " + out.error +
                          (unknown ? ". The next apply checks whether it was made before sending it again"
                                   : ". The next apply plans it again"));
  }
  // Its settings are recorded once the service shows the change: a refresh while it is being
  // made sees the old values, which are then not taken for a change outside dbform.
  const std::string now = format_utc(run_.clock_.wall_now()), status = rec.status;
  if (out.shown) record_answer(rec, *out.shown, now);
  rec.updated_at = now;
  if (!std::exchange(run_.item_of(o).counted_update, true)) ++run_.result_.updated;
  run_.emit({EventKind::Updated, rec.address, rec.id, rec.status, Duration(0), call.call});
  if (rec.status != status) run_.emit({EventKind::StatusChanged, rec.address, rec.id, rec.status, Duration(0), ""});
  if (!watched) {  // made when it is answered: nothing to watch
    record_call(o);
    return complete(o);
  }
  if (!run_.options_.wait) return end_unconfirmed(o);
  // Watched until READY with its change: an asynchronous call takes a while; a synchronous one is
  // read back at once (a SuccessMessage does not carry what changed, such as a pooler's endpoint).
  op.awaiting = true;
  run_.start_watch(o, run_.clock_.now());
  if (is_async_call(call.call)) run_.schedule_poll(op.item, rec);
  else run_.watch_now(op.item);
}

void Steps::handle_delete(size_t o, const Outcome& out) {
  const ResourceType& type = type_of(action_of(o).kind);
  ResourceRecord& rec = record_of(o);
  if (!out.transient) rec.pending_call = nullptr;  // no answer: the next apply checks whether it went
  run_.changed_.insert(rec.address);
  if (!out.error.empty())
    return run_.fail_op(o, "not deleted: " + out.error + (out.http_status == 409 ? type.busy_delete_hint : "") +
                          ". It stays recorded; the next apply --prune tries again");
  if (out.gone || !type.watched) return run_.forget(o);
  run_.ops_[o].deleting = true;  // DELETING until it is gone
  run_.schedule_poll(run_.ops_[o].item, rec);
}

bool Steps::expects_pause(size_t o) {
  const PlannedAction& a = action_of(o);
  if (a.after.value("paused", false)) return true;
  const auto& calls = a.calls;
  if (run_.ops_[o].what.type == OpType::Call)
    return call_of(o).call == "stop" || call_of(o).call == "start" || call_of(o).call == "rename";
  return is_paused_status(a.status) ||
         std::any_of(calls.begin(), calls.end(), [](const PlannedCall& c) { return c.call == "start"; });
}

void Steps::record_call(size_t o) {
  ResourceRecord& rec = record_of(o);
  const PlannedCall& call = call_of(o);
  rec.pending_call = nullptr;
  for (auto it = call.sets.begin(); it != call.sets.end(); ++it) {
    if (it.value().is_null()) {
      rec.settings.erase(it.key());
      if (rec.observed.is_object()) rec.observed.erase(it.key());
    } else {
      rec.settings[it.key()] = it.value();
      if (rec.observed.is_object()) rec.observed[it.key()] = it.value();
    }
  }
  if (call.call == "rename" && rec.last_response.is_object()) rec.last_response["name"] = call.body["name"];
  if (rec.observed.is_object() && call.call == "detachFromVPC") rec.observed.erase("vpc_id");
  if (rec.observed.is_object() && call.call == "attachToVPC")
    rec.observed["vpc_id"] = call_body(action_of(o), call)["vpc_id"];
  run_.changed_.insert(rec.address);
}

nlohmann::json Steps::call_body(const PlannedAction& a, const PlannedCall& call) const {
  nlohmann::json body = call.body;
  if (body.is_object() && body.contains("vpc_id") && body["vpc_id"].is_null())
    if (const std::string id = recorded_vpc_id(run_.state_, a.project_id, call.vpc); !id.empty()) body["vpc_id"] = id;
  return body;
}

bool Steps::shows_change(size_t o, const ResourceRecord& rec) {
  const PlannedCall& call = call_of(o);
  const PlannedAction& a = action_of(o);
  return call_took_effect(type_of(a.kind), call.call, call_body(a, call), rec.last_response);
}

void Steps::end_unconfirmed(size_t o) {
  Item& item = run_.item_of(o);
  item.unconfirmed = true;
  complete(o);
  for (size_t later : item.ops) {
    if (later < o || over(run_.ops_[later])) continue;
    if (run_.ops_[later].what.type == OpType::Password && !needs_call(later)) {
      complete(later);
      continue;
    }
    return run_.leave(later, (run_.ops_[later].what.type == OpType::Call ? "`" + call_of(later).call + "`"
                                                                          : "its password") +
                            " and what follows need it READY, which --no-wait does not wait for");
  }
}

std::string Steps::blocked_reason(size_t o, size_t need) {
  if (run_.ops_[o].what.type == OpType::Delete)
    return "not deleted: other changes of this apply failed (see above), and deletes are made only after all of "
           "them succeeded. Run apply --prune again once they do";
  if (run_.ops_[o].what.type == OpType::Barrier) return "";
  const PlannedAction& a = action_of(o);
  const PlannedAction& needed = *run_.item_of(need).action;
  std::string role = kind_noun(needed.kind);
  for (const Dependency& d : type_of(a.kind).needs(a))
    if (d.address == needed.address) role = d.role;
  const bool call = run_.ops_[o].what.type == OpType::Call;
  return (call ? "`" + call_of(o).call + "` not sent" : std::string("not created")) + ": its " + role + " `" +
         needed.name + "` " + (run_.ops_[need].what.type == OpType::Create ? "was not created" : "is not as declared") +
         " (see above); the next apply " + (call ? "sends it" : "creates it");
}

}  // namespace dbform::scheduling
