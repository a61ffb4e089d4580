// The update-call step of a run (engine/steps.h): one call of the plan, recorded as pending, sent
// unless its change shows already, then watched until it shows.
#include "engine/steps.h"

#include <utility>

#include "engine/progress.h"
#include "engine/watch_desk.h"
#include "plan/differ.h"
#include "util/json_limits.h"
#include "util/log.h"
#include "util/text.h"

namespace dbform::scheduling {

namespace {

// How often one call is sent when its answers say the service was busy (409) or did not come.
constexpr int kMaxCallSends = 3;

class CallStep final : public Step {
 public:
  explicit CallStep(RunContext& run) : Step(run, {.waits_for_room = true}) {}

  bool needs_call(size_t o) override { return !shows_change(o, run_.record_of(o)); }
  // A call whose change the service shows already (an earlier send whose answer was lost, or a run
  // that stopped before recording it) is recorded, not sent again.
  void without_call(size_t o) override {
    record_call(o);
    run_.progress.complete(o);
  }
  std::string label(size_t o) override { return "`" + run_.call_of(o).call + "`"; }
  NameClaim claims_name(size_t o) const override {
    return call_type(run_.call_of(o).call).renames ? NameClaim::Rename : NameClaim::None;
  }

  bool journal(size_t o) override {
    const PlannedAction& a = run_.graph.action_of(o);
    const PlannedCall& call = run_.call_of(o);
    nlohmann::json body = call_body(a, call);
    if (body.is_object() && body.contains("vpc_id") && body["vpc_id"].is_null()) {
      run_.progress.fail(o, call_type(call.call).vpc == VpcEffect::Attach
                                ? "not attached: its VPC `" + call.vpc + "` was not created (see above); the next "
                                  "apply attaches it"
                                : "not detached: the id of VPC `" + call.vpc + "` is not known. Apply without "
                                  "--no-refresh: its refresh reads it");
      return false;
    }
    run_.record_of(o).pending_call = {{"call", call.call}, {"body", std::move(body)}};
    run_.ledger.changed(a.address);
    return true;
  }
  void unjournal(size_t o) override { run_.record_of(o).pending_call = nullptr; }

  void send(WorkQueue<Outcome>& workers, size_t o) override {
    ++run_.graph.ops[o].sends;
    const PlannedAction& a = run_.graph.action_of(o);
    const ResourceRecord& rec = run_.record_of(o);
    const std::string& name = rec.pending_call["call"].get_ref<const std::string&>();
    const nlohmann::json& body = rec.pending_call["body"];
    run_.ledger.emit({EventKind::UpdateSent, a.address, rec.id, "", Duration(0),
                      name + (body.is_null() ? "" : " " + dump_json(body))});
    submit(workers, o, [&api = run_.api, &a, scope = run_.scope_of(a), id = rec.id, key = run_.key_of(a), name, body] {
      return send_update(api, a, scope, id, key, name, body);
    });
  }

  // The answer: the service is then watched until READY with the change, which on_ready records;
  // or its failure.
  void handle(size_t o, const Outcome& out) override {
    Op& op = run_.graph.ops[o];
    ResourceRecord& rec = run_.record_of(o);
    const PlannedCall& call = run_.call_of(o);
    // Busy (409) or no answer: the call may have been made (a gateway's 504 after it was, then a
    // retry refused as busy). It stays pending until the resource tells, so that a run stopped
    // before then has the next one check before sending it again.
    const bool unknown = !out.error.empty() && (out.http_status == 409 || out.transient);
    if (!unknown) rec.pending_call = nullptr;
    run_.ledger.changed(rec.address);
    const bool watched = type_of(run_.graph.action_of(o).kind).watched;
    if (!out.error.empty()) {
      if (unknown && op.sends < kMaxCallSends && watched) {
        log::info(rec.address + ": " + call.call + " was not confirmed (" + out.error + "); checking the service");
        op.awaiting = false;
        run_.desk.start_watch(o, run_.clock.now());
        return run_.desk.schedule_poll(op.item, rec);
      }
      return run_.progress.fail(o, call.call + " failed: " + out.error +
                                       (unknown ? ". The next apply checks whether it was made before sending it again"
                                                : ". The next apply plans it again"));
    }
    // Its settings are recorded once the service shows the change: a refresh while it is being
    // made sees the old values, which are then not taken for a change outside dbform.
    const std::string now = format_utc(run_.clock.wall_now()), status = rec.status;
    if (out.shown) record_answer(rec, *out.shown, now);
    rec.updated_at = now;
    if (!std::exchange(run_.graph.item_of(o).counted_update, true)) ++run_.ledger.result().updated;
    run_.ledger.emit({EventKind::Updated, rec.address, rec.id, rec.status, Duration(0), call.call});
    if (rec.status != status)
      run_.ledger.emit({EventKind::StatusChanged, rec.address, rec.id, rec.status, Duration(0), ""});
    if (!watched) {  // made when it is answered: nothing to watch
      record_call(o);
      return run_.progress.complete(o);
    }
    if (!run_.options.wait) return run_.progress.end_unconfirmed(o);
    // Watched until READY with its change: an asynchronous call takes a while; a synchronous one is
    // read back at once (a SuccessMessage does not carry what changed, such as a pooler's endpoint).
    op.awaiting = true;
    run_.desk.start_watch(o, run_.clock.now());
    if (is_async_call(call.call)) run_.desk.schedule_poll(op.item, rec);
    else run_.desk.watch_now(op.item);
  }

  void on_ready(size_t o) override {
    ResourceRecord& rec = run_.record_of(o);
    if (!shows_change(o, rec)) {
      if (run_.graph.ops[o].awaiting) return run_.desk.schedule_poll(run_.graph.ops[o].item, rec);  // a view that lags
      return run_.graph.make_ready(o);  // not made: sent again
    }
    record_call(o);
    run_.progress.complete(o);
  }

  // A stop, a start or a rename may find it PAUSED (and so may any call of a service declared paused).
  bool expects_pause(size_t o) override {
    return run_.graph.action_of(o).after.value("paused", false) || call_type(run_.call_of(o).call).may_find_paused;
  }

  std::string blocked_reason(size_t o, size_t need) override { return needs_failed(o, need, run_.call_of(o).call); }

 private:
  bool shows_change(size_t o, const ResourceRecord& rec) {
    const PlannedCall& call = run_.call_of(o);
    const PlannedAction& a = run_.graph.action_of(o);
    return call_took_effect(type_of(a.kind), call.call, call_body(a, call), rec.last_response);
  }

  // The change is made: the settings it brings about are recorded as set (and as observed), and it
  // is pending no more.
  void record_call(size_t o) {
    ResourceRecord& rec = run_.record_of(o);
    const PlannedCall& call = run_.call_of(o);
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
    const CallType& type = call_type(call.call);
    if (type.renames && rec.last_response.is_object()) rec.last_response["name"] = call.body["name"];
    if (rec.observed.is_object() && type.vpc == VpcEffect::Detach) rec.observed.erase("vpc_id");
    if (rec.observed.is_object() && type.vpc == VpcEffect::Attach)
      rec.observed["vpc_id"] = call_body(run_.graph.action_of(o), call)["vpc_id"];
    run_.ledger.changed(rec.address);
  }

  // The body as sent: an attachment's VPC id, unknown when the plan was made, is the recorded one.
  nlohmann::json call_body(const PlannedAction& a, const PlannedCall& call) const {
    nlohmann::json body = call.body;
    if (body.is_object() && body.contains("vpc_id") && body["vpc_id"].is_null())
      if (const std::string id = recorded_vpc_id(run_.ledger.state(), a.project_id, call.vpc); !id.empty())
        body["vpc_id"] = id;
    return body;
  }
};

}  // namespace

std::unique_ptr<Step> call_step(RunContext& run) { return std::make_unique<CallStep>(run); }

}  // namespace dbform::scheduling
