// The operation steps of a run (engine/apply_run.h): for each, whether it needs a call, what it
// journals, what it sends, and how its answer is checked and recorded.
#include "engine/apply_run.h"

#include <algorithm>

#include "plan/differ.h"
#include "util/json_limits.h"
#include "util/log.h"
#include "util/text.h"

namespace dbform::scheduling {

// The table: one row per step (OpType, in its order). What differs from one step to another is
// here; the loop (apply_run.cpp) runs every step through the same journal, send and answer.
const StepRow& ApplyRun::row(OpType type) {
  static const StepRow kRows[] = {
      // Settle: watched until READY, no call.
      {&ApplyRun::never, &ApplyRun::start_watching, nullptr, nullptr, nullptr, nullptr},
      // Create: its intent recorded, then created (or adopted by name), then watched.
      {&ApplyRun::always, &ApplyRun::complete, &ApplyRun::journal_create, &ApplyRun::forget_unsent_intent_of,
       &ApplyRun::send_create, &ApplyRun::handle_create},
      // Password: a recorded pending password is set; recorded as the password once confirmed.
      {&ApplyRun::password_pending, &ApplyRun::complete, &ApplyRun::journal_password, &ApplyRun::keep_journal,
       &ApplyRun::send_password, &ApplyRun::handle_password},
      // Call: recorded as pending, sent unless its change shows already, then watched until it shows.
      {&ApplyRun::call_not_shown, &ApplyRun::record_shown_call, &ApplyRun::journal_call, &ApplyRun::drop_pending_call,
       &ApplyRun::send_call, &ApplyRun::handle_call},
      // Delete: recorded as pending, sent once the API shows the recorded name, then watched until gone.
      {&ApplyRun::always, &ApplyRun::complete, &ApplyRun::journal_delete, &ApplyRun::drop_pending_call,
       &ApplyRun::send_delete, &ApplyRun::handle_delete},
      // Barrier: acts on nothing, done when what it needs is.
      {&ApplyRun::never, &ApplyRun::complete, nullptr, nullptr, nullptr, nullptr},
  };
  static_assert(std::size(kRows) == static_cast<size_t>(OpType::Barrier) + 1, "one row per OpType");
  return kRows[static_cast<size_t>(type)];
}

bool ApplyRun::always(size_t) { return true; }
bool ApplyRun::never(size_t) { return false; }
bool ApplyRun::password_pending(size_t o) { return !record_of(o).pending_password.empty(); }
bool ApplyRun::call_not_shown(size_t o) { return !shows_change(o, record_of(o)); }

void ApplyRun::start_watching(size_t o) {  // watched until READY from now
  start_watch(o, clock_.now());
  watch_now(ops_[o].item);
}

// A call whose change the service shows already (an earlier send whose answer was lost, or a run
// that stopped before recording it) is recorded, not sent again.
void ApplyRun::record_shown_call(size_t o) {
  record_call(o);
  complete(o);
}

bool ApplyRun::journal_create(size_t o) {
  const PlannedAction& a = *item_of(o).action;
  for (const Dependency& d : type_of(a.kind).needs(a)) {
    const ResourceRecord* needed = state_.find(d.address);
    if (a.action != Action::Adopt && d.settled && (!needed || needed->id.empty() || !needed->is_ready())) {
      if (!options_.wait) {  // it was not waited for
        leave(o, "not created: its " + d.role + " `" + d.address + "` was not waited for (--no-wait)");
        return false;
      }
      fail_op(o, "not created: its " + d.role + " `" + d.address + "` is not READY (" +
                     (needed && !needed->status.empty() ? "status " + needed->status : "not created yet") +
                     "); the next apply creates it once it is");
      return false;
    }
  }
  record_intent(a);
  return true;
}

bool ApplyRun::journal_password(size_t) { return true; }  // the pending password is recorded already

bool ApplyRun::journal_call(size_t o) {
  const PlannedAction& a = *item_of(o).action;
  const PlannedCall& call = call_of(o);
  nlohmann::json body = call_body(a, call);
  if (body.is_object() && body.contains("vpc_id") && body["vpc_id"].is_null()) {
    fail_op(o, call.call == "attachToVPC"
                   ? "not attached: its VPC `" + call.vpc + "` was not created (see above); the next apply "
                     "attaches it"
                   : "not detached: the id of VPC `" + call.vpc + "` is not known. Apply without "
                     "--no-refresh: its refresh reads it");
    return false;
  }
  record_of(o).pending_call = {{"call", call.call}, {"body", std::move(body)}};
  changed_.insert(a.address);
  return true;
}

bool ApplyRun::journal_delete(size_t o) {
  record_of(o).pending_call = {{"call", "delete"}};
  changed_.insert(item_of(o).action->address);
  return true;
}

void ApplyRun::forget_unsent_intent_of(size_t o) { forget_unsent_intent(*item_of(o).action); }
void ApplyRun::keep_journal(size_t) {}  // a pending password stays recorded
void ApplyRun::drop_pending_call(size_t o) { record_of(o).pending_call = nullptr; }

void ApplyRun::send_create(WorkQueue<Outcome>& workers, size_t o) {
  const PlannedAction& a = *item_of(o).action;
  start_watch(o, clock_.now());  // a service's wait timeout counts from its create
  // A read replica set or peering recorded but missing from a list may only be missing from that
  // list (a lagging or flaky one): its absence is confirmed over the settle window first.
  const bool look_first = a.action == Action::Adopt || (a.action == Action::Create && !a.resource_id.empty() &&
                                                        parent_kind(a.kind).has_value());
  const ResourceRecord* source = nullptr;
  std::string made_from;
  for (const Dependency& d : type_of(a.kind).needs(a))
    if (d.source && (source = state_.find(d.address))) made_from = "from its " + d.role + " " + d.address + " (" + source->id + ")";
  emit({EventKind::CreateSent, a.address, "", "", Duration(0),
        look_first ? (a.action == Action::Adopt ? "an earlier create's outcome is unknown: looking it up by name first"
                                                : "missing from a list: looking it up by name again first")
                   : made_from});
  submit(workers, o, [this, &a, look_first, key = key_of(a), scope = scope_of(a), from = source ? source->id : std::string()] {
    try {
      return create_or_adopt(CreateContext{api_, clock_, options_.settle_window, options_.stop}, a, scope, key,
                             look_first, from);
    } catch (const std::exception& e) {  // e.g. the lookup failed: the outcome is still unknown
      Outcome out;
      out.error = describe_exception(e) + "; the create's outcome is unknown, so the next apply looks for `" +
                  a.name + "` by name before creating it";
      return out;
    }
  });
}

void ApplyRun::send_password(WorkQueue<Outcome>& workers, size_t o) {
  const ResourceRecord& rec = record_of(o);
  submit(workers, o, [this, &a = *item_of(o).action, id = rec.id, password = rec.pending_password,
                      key = key_of(*item_of(o).action)] { return set_password(api_, a, id, key, password); });
}

void ApplyRun::send_call(WorkQueue<Outcome>& workers, size_t o) {
  ++ops_[o].sends;
  const PlannedAction& a = *item_of(o).action;
  const ResourceRecord& rec = record_of(o);
  const std::string& name = rec.pending_call["call"].get_ref<const std::string&>();
  const nlohmann::json& body = rec.pending_call["body"];
  emit({EventKind::UpdateSent, a.address, rec.id, "", Duration(0), name + (body.is_null() ? "" : " " + dump_json(body))});
  submit(workers, o, [this, &a, scope = scope_of(a), id = rec.id, key = key_of(a), name, body] {
    return send_update(api_, a, scope, id, key, name, body);
  });
}

void ApplyRun::send_delete(WorkQueue<Outcome>& workers, size_t o) {
  const PlannedAction& a = *item_of(o).action;
  const ResourceRecord& rec = record_of(o);
  start_watch(o, clock_.now());  // a delete's time counts from its call
  emit({EventKind::DeleteSent, a.address, rec.id, "", Duration(0), ""});
  submit(workers, o, [this, &a, scope = scope_of(a), id = rec.id, key = key_of(a)] {
    return delete_resource(api_, a, scope, id, key);
  });
}

void ApplyRun::record_intent(const PlannedAction& a) {
  ResourceRecord* rec = state_.find(a.address);
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
  r.created_at = r.updated_at = format_utc(clock_.wall_now());
  state_.upsert(r);
  changed_.insert(r.address);
}

void ApplyRun::forget_unsent_intent(const PlannedAction& a) {
  if (a.action != Action::Adopt) state_.remove(a.address);
}

void ApplyRun::handle_create(size_t o, const Outcome& out) {
  const PlannedAction& a = *item_of(o).action;
  if (out.stopped) {  // unfinished; its intent stays unless this run never sent its create
    if (out.not_sent) {
      forget_unsent_intent(a);
      changed_.insert(a.address);
    }
    ops_[o].step = OpStep::Ready;
    return;
  }
  if (!out.error.empty()) {
    if (out.nothing_created) {
      state_.remove(a.address);  // nothing exists: the next run plans a plain create
      changed_.insert(a.address);
    }
    return fail_op(o, out.error);
  }
  ResourceRecord& rec = record_of(o);
  const std::string now = format_utc(clock_.wall_now());
  rec.create_pending = false;
  const ResourceType& type = type_of(a.kind);
  if (out.shown) record_answer(rec, *out.shown, now);
  if (out.adopted && out.shown)
    rec.observed = type.observe(*out.shown, rec.settings, recorded_vpc_names(state_, a.project_id));
  changed_.insert(a.address);
  (out.adopted ? result_.adopted : result_.created)++;
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
  emit({out.adopted ? EventKind::Adopted : EventKind::Created, a.address, rec.id, rec.status, Duration(0), note});
  if (!type.watched) return complete(o);
  if (!options_.wait) return end_unconfirmed(o);
  if (!out.adopted) watch_created(o);
  after_status(ops_[o].item, rec);
}

bool ApplyRun::differs_from_declared(const ResourceRecord& rec) {
  for (auto it = rec.settings.begin(); it != rec.settings.end(); ++it)
    if (rec.observed.contains(it.key()) && rec.observed[it.key()] != it.value()) return true;
  return false;
}

void ApplyRun::handle_password(size_t o, const Outcome& out) {
  if (!out.error.empty())
    return fail_op(o, "its new password could not be set: " + out.error +
                          ". It stays recorded as pending, and the next apply (or rotate-password) sets it again");
  ResourceRecord& rec = record_of(o);
  rec.initial_password = rec.pending_password;
  rec.pending_password.clear();
  item_of(o).password_set = true;
  rec.updated_at = format_utc(clock_.wall_now());
  changed_.insert(rec.address);
  complete(o);
}

void ApplyRun::handle_call(size_t o, const Outcome& out) {
  Op& op = ops_[o];
  ResourceRecord& rec = record_of(o);
  const PlannedCall& call = call_of(o);
  // Busy (409) or no answer: the call may have been made (a gateway's 504 after it was, then a
  // retry refused as busy). It stays pending until the resource tells, so that a run stopped
  // before then has the next one check before sending it again.
  const bool unknown = !out.error.empty() && (out.http_status == 409 || out.transient);
  if (!unknown) rec.pending_call = nullptr;
  changed_.insert(rec.address);
  const bool watched = type_of(item_of(o).action->kind).watched;
  if (!out.error.empty()) {
    if (unknown && op.sends < kMaxCallSends && watched) {
      log::info(rec.address + ": " + call.call + " was not confirmed (" + out.error + "); checking the service");
      op.awaiting = false;
      start_watch(o, clock_.now());
      return schedule_poll(op.item, rec);
    }
    return fail_op(o, call.call + " failed: " + out.error +
                          (unknown ? ". The next apply checks whether it was made before sending it again"
                                   : ". The next apply plans it again"));
  }
  // Its settings are recorded once the service shows the change: a refresh while it is being
  // made sees the old values, which are then not taken for a change outside dbform.
  const std::string now = format_utc(clock_.wall_now()), status = rec.status;
  if (out.shown) record_answer(rec, *out.shown, now);
  rec.updated_at = now;
  if (!std::exchange(item_of(o).counted_update, true)) ++result_.updated;
  emit({EventKind::Updated, rec.address, rec.id, rec.status, Duration(0), call.call});
  if (rec.status != status) emit({EventKind::StatusChanged, rec.address, rec.id, rec.status, Duration(0), ""});
  if (!watched) {  // made when it is answered: nothing to watch
    record_call(o);
    return complete(o);
  }
  if (!options_.wait) return end_unconfirmed(o);
  // Watched until READY with its change: an asynchronous call takes a while; a synchronous one is
  // read back at once (a SuccessMessage does not carry what changed, such as a pooler's endpoint).
  op.awaiting = true;
  start_watch(o, clock_.now());
  if (is_async_call(call.call)) schedule_poll(op.item, rec);
  else watch_now(op.item);
}

void ApplyRun::handle_delete(size_t o, const Outcome& out) {
  const ResourceType& type = type_of(item_of(o).action->kind);
  ResourceRecord& rec = record_of(o);
  if (!out.transient) rec.pending_call = nullptr;  // no answer: the next apply checks whether it went
  changed_.insert(rec.address);
  if (!out.error.empty())
    return fail_op(o, "not deleted: " + out.error + (out.http_status == 409 ? type.busy_delete_hint : "") +
                          ". It stays recorded; the next apply --prune tries again");
  if (out.gone || !type.watched) return forget(o);
  ops_[o].deleting = true;  // DELETING until it is gone
  schedule_poll(ops_[o].item, rec);
}

bool ApplyRun::expects_pause(size_t o) {
  const PlannedAction& a = *item_of(o).action;
  if (a.after.value("paused", false)) return true;
  const auto& calls = a.calls;
  if (ops_[o].what.type == OpType::Call)
    return call_of(o).call == "stop" || call_of(o).call == "start" || call_of(o).call == "rename";
  return is_paused_status(a.status) ||
         std::any_of(calls.begin(), calls.end(), [](const PlannedCall& c) { return c.call == "start"; });
}

void ApplyRun::record_call(size_t o) {
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
    rec.observed["vpc_id"] = call_body(*item_of(o).action, call)["vpc_id"];
  changed_.insert(rec.address);
}

nlohmann::json ApplyRun::call_body(const PlannedAction& a, const PlannedCall& call) const {
  nlohmann::json body = call.body;
  if (body.is_object() && body.contains("vpc_id") && body["vpc_id"].is_null())
    if (const std::string id = recorded_vpc_id(state_, a.project_id, call.vpc); !id.empty()) body["vpc_id"] = id;
  return body;
}

bool ApplyRun::shows_change(size_t o, const ResourceRecord& rec) {
  const PlannedCall& call = call_of(o);
  const PlannedAction& a = *item_of(o).action;
  return call_took_effect(type_of(a.kind), call.call, call_body(a, call), rec.last_response);
}

void ApplyRun::end_unconfirmed(size_t o) {
  Item& item = item_of(o);
  item.unconfirmed = true;
  complete(o);
  for (size_t later : item.ops) {
    if (later < o || over(ops_[later])) continue;
    if (ops_[later].what.type == OpType::Password && !needs_call(later)) {
      complete(later);
      continue;
    }
    return leave(later, (ops_[later].what.type == OpType::Call ? "`" + call_of(later).call + "`" : "its password") +
                            " and what follows need it READY, which --no-wait does not wait for");
  }
}

}  // namespace dbform::scheduling
