// The operation steps of a run (engine/steps.h): what every row shares, the short rows (settle,
// password, delete, barrier) and the table of them all.
#include "engine/steps.h"

#include <algorithm>

#include "engine/progress.h"
#include "engine/watch_desk.h"
#include "util/text.h"

namespace dbform::scheduling {

void Step::without_call(size_t o) { run_.progress.complete(o); }
void Step::on_ready(size_t o) { run_.progress.complete(o); }

bool Step::expects_pause(size_t o) {
  const PlannedAction& a = run_.graph.action_of(o);
  return a.after.value("paused", false) || is_paused_status(a.status) ||
         std::any_of(a.calls.begin(), a.calls.end(), [](const PlannedCall& c) { return call_type(c.call).starts; });
}

std::string Step::blocked_reason(size_t o, size_t need) { return needs_failed(o, need, ""); }

std::string Step::needs_failed(size_t o, size_t need, const std::string& call) {
  const PlannedAction& a = run_.graph.action_of(o);
  const PlannedAction& needed = *run_.graph.item_of(need).action;
  std::string role = kind_noun(needed.kind);
  for (const Dependency& d : type_of(a.kind).needs(a))
    if (d.address == needed.address) role = d.role;
  return (call.empty() ? std::string("not created") : "`" + call + "` not sent") + ": its " + role + " `" +
         needed.name + "` " + (run_.steps.of(need).traits.creates ? "was not created" : "is not as declared") +
         " (see above); the next apply " + (call.empty() ? "creates it" : "sends it");
}

std::string Step::left_reason(size_t, size_t left) {
  return "waits for `" + run_.graph.item_of(left).action->address + "` (--no-wait)";
}

namespace {

// Settle: a recorded resource an earlier run left changing, watched until READY; no call.
class SettleStep final : public Step {
 public:
  explicit SettleStep(RunContext& run) : Step(run, {.runs_while_stopping = false}) {}
  bool needs_call(size_t) override { return false; }
  void without_call(size_t o) override {  // watched until READY from now
    run_.desk.start_watch(o, run_.clock.now());
    run_.desk.watch_now(run_.graph.ops[o].item);
  }
};

// Password: a recorded pending password is set, and recorded as the password once confirmed. It
// journals nothing more: the pending password is recorded already, and stays when unsent.
class PasswordStep final : public Step {
 public:
  explicit PasswordStep(RunContext& run) : Step(run, {}) {}
  bool needs_call(size_t o) override { return !run_.record_of(o).pending_password.empty(); }
  bool done_unconfirmed(size_t o) override { return !needs_call(o); }
  std::string label(size_t) override { return "its password"; }

  void send(WorkQueue<Outcome>& workers, size_t o) override {
    const ResourceRecord& rec = run_.record_of(o);
    const PlannedAction& a = run_.graph.action_of(o);
    submit(workers, o, [&api = run_.api, &a, id = rec.id, password = rec.pending_password.text(),
                        key = run_.key_of(a)] { return set_password(api, a, id, key, password); });
  }

  void handle(size_t o, const Outcome& out) override {
    if (!out.error.empty())
      return run_.progress.fail(o, "its new password could not be set: " + out.error +
                                       ". It stays recorded as pending, and the next apply (or rotate-password) "
                                       "sets it again");
    ResourceRecord& rec = run_.record_of(o);
    rec.initial_password = rec.pending_password;
    rec.pending_password.clear();
    run_.graph.item_of(o).password_set = true;
    rec.updated_at = format_utc(run_.clock.wall_now());
    run_.ledger.changed(rec.address);
    run_.progress.complete(o);
  }
};

// Delete: recorded as pending, sent once the API shows the recorded name, then watched until gone.
class DeleteStep final : public Step {
 public:
  explicit DeleteStep(RunContext& run) : Step(run, {.deletes = true}) {}
  bool needs_call(size_t) override { return true; }

  bool journal(size_t o) override {
    run_.record_of(o).pending_call = {{"call", "delete"}};
    run_.ledger.changed(run_.graph.action_of(o).address);
    return true;
  }
  void unjournal(size_t o) override { run_.record_of(o).pending_call = nullptr; }

  void send(WorkQueue<Outcome>& workers, size_t o) override {
    const PlannedAction& a = run_.graph.action_of(o);
    const ResourceRecord& rec = run_.record_of(o);
    run_.desk.start_watch(o, run_.clock.now());  // a delete's time counts from its call
    run_.ledger.emit({EventKind::DeleteSent, a.address, rec.id, "", Duration(0), ""});
    submit(workers, o, [&api = run_.api, &a, scope = run_.scope_of(a), id = rec.id, key = run_.key_of(a)] {
      return delete_resource(api, a, scope, id, key);
    });
  }

  void handle(size_t o, const Outcome& out) override {
    const ResourceType& type = type_of(run_.graph.action_of(o).kind);
    ResourceRecord& rec = run_.record_of(o);
    if (!out.transient) rec.pending_call = nullptr;  // no answer: the next apply checks whether it went
    run_.ledger.changed(rec.address);
    if (!out.error.empty())
      return run_.progress.fail(o, "not deleted: " + out.error + (out.http_status == 409 ? type.busy_delete_hint : "") +
                                       ". It stays recorded; the next apply --prune tries again");
    if (out.gone || !type.watched) return run_.progress.forget(o);
    run_.graph.ops[o].deleting = true;  // DELETING until it is gone
    run_.desk.schedule_poll(run_.graph.ops[o].item, rec);
  }

  std::string blocked_reason(size_t, size_t) override {
    return "not deleted: other changes of this apply failed (see above), and deletes are made only after all of "
           "them succeeded. Run apply --prune again once they do";
  }
  std::string left_reason(size_t, size_t) override {
    return "not deleted: deletes go after every other change, and --no-wait left some for the next apply";
  }
};

// Barrier: acts on nothing, done when what it needs is.
class BarrierStep final : public Step {
 public:
  explicit BarrierStep(RunContext& run) : Step(run, {}) {}
  bool needs_call(size_t) override { return false; }
  std::string blocked_reason(size_t, size_t) override { return ""; }
  std::string left_reason(size_t, size_t) override { return ""; }
};

}  // namespace

StepTable::StepTable(RunContext& run) : run_(run) {
  auto row = [&](OpType type, std::unique_ptr<Step> step) { rows_[static_cast<size_t>(type)] = std::move(step); };
  row(OpType::Settle, std::make_unique<SettleStep>(run));
  row(OpType::Create, create_step(run));
  row(OpType::Password, std::make_unique<PasswordStep>(run));
  row(OpType::Call, call_step(run));
  row(OpType::Delete, std::make_unique<DeleteStep>(run));
  row(OpType::Objects, objects_step(run));
  row(OpType::Barrier, std::make_unique<BarrierStep>(run));
}

}  // namespace dbform::scheduling
