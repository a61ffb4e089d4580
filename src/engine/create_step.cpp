// The create step of a run (engine/steps.h): its intent recorded, then created (or adopted by
// name after an unknown outcome), then watched until READY.
#include "engine/steps.h"

#include "engine/progress.h"
#include "engine/watch_desk.h"
#include "engine/watcher.h"
#include "util/text.h"

namespace dbform::scheduling {

namespace {

class CreateStep final : public Step {
 public:
  explicit CreateStep(RunContext& run) : Step(run, {.creates = true}) {}

  bool needs_call(size_t) override { return true; }

  NameClaim claims_name(size_t o) const override {
    const Action action = run_.graph.action_of(o).action;
    return action == Action::Create || action == Action::Replace ? NameClaim::Create : NameClaim::None;
  }

  bool journal(size_t o) override {
    const PlannedAction& a = run_.graph.action_of(o);
    for (const Dependency& d : type_of(a.kind).needs(a)) {
      const ResourceRecord* needed = run_.ledger.state().find(d.address);
      if (a.action != Action::Adopt && d.settled && (!needed || needed->id.empty() || !needed->is_ready())) {
        if (!run_.options.wait) {  // it was not waited for
          run_.progress.leave(o, "not created: its " + d.role + " `" + d.address + "` was not waited for (--no-wait)");
          return false;
        }
        run_.progress.fail(o, "not created: its " + d.role + " `" + d.address + "` is not READY (" +
                                  (needed && !needed->status.empty() ? "status " + needed->status : "not created yet") +
                                  "); the next apply creates it once it is");
        return false;
      }
    }
    record_intent(a);
    return true;
  }

  // The intent of a create that was never sent: a new record goes (nothing exists; a replaced one
  // is deleted by then), an adopt's record stays (its earlier create may have happened).
  void unjournal(size_t o) override {
    if (const PlannedAction& a = run_.graph.action_of(o); a.action != Action::Adopt) run_.ledger.state().remove(a.address);
  }

  void send(WorkQueue<Outcome>& workers, size_t o) override {
    const PlannedAction& a = run_.graph.action_of(o);
    run_.desk.start_watch(o, run_.clock.now());  // a service's wait timeout counts from its create
    // A read replica set or peering recorded but missing from a list may only be missing from that
    // list (a lagging or flaky one): its absence is confirmed over the settle window first.
    const bool look_first = a.action == Action::Adopt || (a.action == Action::Create && !a.resource_id.empty() &&
                                                          parent_kind(a.kind).has_value());
    const ResourceRecord* source = nullptr;
    std::string made_from;
    for (const Dependency& d : type_of(a.kind).needs(a))
      if (d.source && (source = run_.ledger.state().find(d.address)))
        made_from = "from its " + d.role + " " + d.address + " (" + source->id + ")";
    run_.ledger.emit({EventKind::CreateSent, a.address, "", "", Duration(0),
                      look_first ? (a.action == Action::Adopt
                                        ? "an earlier create's outcome is unknown: looking it up by name first"
                                        : "missing from a list: looking it up by name again first")
                                 : made_from});
    submit(workers, o,
           [ctx = CreateContext{run_.api, run_.clock, run_.options.settle_window, run_.options.stop}, &a, look_first,
            key = run_.key_of(a), scope = run_.scope_of(a), from = source ? source->id : std::string()] {
             try {
               return create_or_adopt(ctx, a, scope, key, look_first, from);
             } catch (const std::exception& e) {  // e.g. the lookup failed: the outcome is still unknown
               Outcome out;
               out.error = describe_exception(e) + "; the create's outcome is unknown, so the next apply looks for `" +
                           a.name + "` by name before creating it";
               return out;
             }
           });
  }

  void handle(size_t o, const Outcome& out) override {
    const PlannedAction& a = run_.graph.action_of(o);
    if (out.stopped) {  // unfinished; its intent stays unless this run never sent its create
      if (out.not_sent) {
        unjournal(o);
        run_.ledger.changed(a.address);
      }
      run_.graph.ops[o].step = OpStep::Ready;
      return;
    }
    if (!out.error.empty()) {
      if (out.nothing_created) {
        run_.ledger.state().remove(a.address);  // nothing exists: the next run plans a plain create
        run_.ledger.changed(a.address);
      }
      return run_.progress.fail(o, out.error);
    }
    ResourceRecord& rec = run_.record_of(o);
    const std::string now = format_utc(run_.clock.wall_now());
    rec.create_pending = false;
    const ResourceType& type = type_of(a.kind);
    if (out.shown) record_answer(rec, *out.shown, now);
    if (out.adopted && out.shown)
      rec.observed = type.observe(*out.shown, rec.settings, recorded_vpc_names(run_.ledger.state(), a.project_id));
    run_.ledger.changed(a.address);
    (out.adopted ? run_.ledger.result().adopted : run_.ledger.result().created)++;
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
    run_.ledger.emit(
        {out.adopted ? EventKind::Adopted : EventKind::Created, a.address, rec.id, rec.status, Duration(0), note});
    if (!type.watched) return run_.progress.complete(o);
    if (!run_.options.wait) return run_.progress.end_unconfirmed(o);
    const size_t item = run_.graph.ops[o].item;
    if (!out.adopted) run_.watcher.learn(item, type.verdict(rec.status) == StatusVerdict::Ready ? Lesson::CreatedReady : Lesson::Created);
    run_.desk.after_status(item, rec);
  }

 private:
  void record_intent(const PlannedAction& a) {
    ResourceRecord* rec = run_.ledger.state().find(a.address);
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
    r.created_at = r.updated_at = format_utc(run_.clock.wall_now());
    run_.ledger.state().upsert(r);
    run_.ledger.changed(r.address);
  }

  // Whether what an adoption found differs from the create's declared fields.
  static bool differs_from_declared(const ResourceRecord& rec) {
    for (auto it = rec.settings.begin(); it != rec.settings.end(); ++it)
      if (rec.observed.contains(it.key()) && rec.observed[it.key()] != it.value()) return true;
    return false;
  }
};

}  // namespace

std::unique_ptr<Step> create_step(RunContext& run) { return std::make_unique<CreateStep>(run); }

}  // namespace dbform::scheduling
