// The objects step of a run (engine/steps.h): a service's roles, schemas, extensions and grants,
// made in one transaction as its admin once it is READY (sql/objects.h's run_objects), and
// recorded after the commit. New login roles' passwords are recorded as pending before the
// transaction, so that a kill at any moment leaves passwords the next run sets again, never one
// made and lost.
#include "engine/steps.h"

#include "engine/connectable.h"
#include "engine/progress.h"
#include "plan/database_objects.h"
#include "util/text.h"

namespace dbform::scheduling {

namespace {

class ObjectsStep final : public Step {
 public:
  explicit ObjectsStep(RunContext& run) : Step(run, {.runs_while_stopping = false}) {}

  // With its service deleted by this run, its objects went with it: they are only forgotten.
  bool needs_call(size_t o) override { return service_record(o) != nullptr; }
  void without_call(size_t o) override {
    for (const PlannedAction* a : group(o)) forget(*a, "with its service");
    run_.graph.done(o);
  }

  std::string label(size_t) override { return "its roles, schemas, extensions and grants"; }

  bool journal(size_t o) override {
    if (auto why = why_not_connectable(*service_record(o))) {
      fail_all(o, "", *why);
      return false;
    }
    const std::string service_id = service_record(o)->id;  // records are added below: no reference held
    Journaled& made = journaled_[o];
    for (const PlannedAction* a : group(o)) {
      if (a->kind != ResourceKind::Role || a->action == Action::Delete || !a->after.value("login", false)) continue;
      ResourceRecord* rec = run_.ledger.state().find(a->address);
      if (rec && (!rec->pending_password.empty() || !rec->initial_password.empty())) continue;
      if (!rec) {
        rec = &run_.ledger.state().upsert(new_record(*a, service_id));
        made.records.push_back(a->address);
      } else {
        made.passwords.push_back(a->address);
      }
      rec->pending_password = random_password(32);
      run_.ledger.changed(a->address);
    }
    return true;
  }

  void unjournal(size_t o) override {
    Journaled& made = journaled_[o];
    for (const auto& address : made.records) run_.ledger.state().remove(address);
    for (const auto& address : made.passwords)
      if (ResourceRecord* rec = run_.ledger.state().find(address)) rec->pending_password.clear();
    journaled_.erase(o);
  }

  void send(WorkQueue<Outcome>& workers, size_t o) override {
    ObjectsRequest request;
    for (const PlannedAction* a : group(o)) {
      if (a->action == Action::Delete) {
        add_db_object(a->kind, a->name, a->before, request.to_delete);
        continue;
      }
      add_db_object(a->kind, a->name, a->after, request.desired);
      const ResourceRecord* rec = run_.ledger.state().find(a->address);
      if (a->kind == ResourceKind::Role && rec && !rec->pending_password.empty())
        request.passwords[a->name] = rec->pending_password.text();
      else if (a->kind == ResourceKind::Role && rec && !rec->initial_password.empty() && a->after.value("login", false))
        request.recorded_passwords[a->name] = rec->initial_password.text();  // made again only if dropped
    }
    const ConnectTarget target = admin_target(*service_record(o));
    const SqlSessionOptions options{.read_only = false,
                                    .statement_timeout = run_.options.statement_timeout,
                                    .connect_timeout = std::chrono::seconds(10)};
    const StatementLimit limit{run_.options.stop, run_.options.statement_timeout};
    submit(workers, o, [connector = run_.options.sql, target, request = std::move(request), options, limit] {
      Outcome out;
      try {
        out.objects = run_objects(*connector, target, request, options, limit);
      } catch (const Error& e) {
        out.error = e.what();
      }
      return out;
    });
  }

  void handle(size_t o, const Outcome& out) override {
    journaled_.erase(o);
    if (!out.error.empty()) return fail_all(o, "", out.error);
    const ObjectsRun& ran = *out.objects;
    const ObjectsOutcome& outcome = ran.outcome;
    if (outcome.result != ObjectsOutcome::Result::Applied) {
      if (outcome.cancelled == Cancelled::Stopped)
        return run_.progress.leave(o, "stopped before its transaction committed: nothing of it was made, and the "
                                      "next apply makes it");
      const std::string what = outcome.kind.empty() ? "its transaction" : outcome.kind;
      return fail_all(o, outcome.object, what + " failed: " + outcome.message);
    }
    const std::string now = format_utc(run_.clock.wall_now());
    const std::string service_id = service_record(o)->id;  // records are added below: no reference held
    ApplyResult& result = run_.ledger.result();
    for (const PlannedAction* a : group(o)) {
      if (a->action == Action::Delete) {
        forget(*a, "");
        continue;
      }
      ResourceRecord* rec = run_.ledger.state().find(a->address);
      if (!rec) rec = &run_.ledger.state().upsert(new_record(*a, service_id));
      rec->settings = a->after;
      rec->observed = observed_settings(a->kind, a->name, a->after, ran.observed, ran.server_version_num);
      rec->create_pending = false;
      rec->deleted_outside = false;
      rec->deletion_protection = a->deletion_protection;
      if (!rec->pending_password.empty()) {
        rec->initial_password = rec->pending_password;
        rec->pending_password.clear();
      }
      rec->updated_at = now;
      run_.ledger.changed(a->address);
      if (a->action == Action::Create) {
        ++result.created;
        run_.ledger.emit({EventKind::Created, a->address, rec->id, "", Duration(0), ""});
      } else if (a->action == Action::Update) {
        ++result.updated;
        run_.ledger.emit({EventKind::Updated, a->address, rec->id, "", Duration(0), "ALTER, GRANT, REVOKE"});
      }
      if (a->action != Action::NoOp) ++result.ready;
    }
    run_.graph.done(o);
  }

  std::string blocked_reason(size_t o, size_t need) override {
    return "its roles, schemas, extensions and grants were not made: its service `" +
           run_.graph.action_of(o).parent + "` " +
           (run_.steps.of(need).traits.creates ? "was not created" : "is not as declared") +
           " (see above); the next apply makes them once it is";
  }

 private:
  struct Journaled {
    std::vector<std::string> records, passwords;
  };
  std::map<size_t, Journaled> journaled_;

  // Dropped (or gone with its service): the state forgets it.
  void forget(const PlannedAction& a, const std::string& message) {
    const ResourceRecord* rec = run_.ledger.state().find(a.address);
    if (!rec) return;
    const std::string id = rec->id;
    run_.ledger.state().remove(a.address);
    run_.ledger.changed(a.address);
    ++run_.ledger.result().deleted;
    run_.ledger.emit({EventKind::Deleted, a.address, id, "", Duration(0), message});
  }

  std::vector<const PlannedAction*> group(size_t o) const {
    std::vector<const PlannedAction*> out;
    for (size_t i : run_.graph.ops[o].what.group) out.push_back(&run_.graph.plan->actions[i]);
    return out;
  }
  const ResourceRecord* service_record(size_t o) const {
    return run_.ledger.state().find(service_address_of(run_.graph.action_of(o)));
  }

  std::optional<std::string> why_not_connectable(const ResourceRecord& service) const {
    if (!run_.options.sql) return "this run has no connections to databases";
    return admin_unreachable(service);
  }

  ResourceRecord new_record(const PlannedAction& a, const std::string& service_id) const {
    ResourceRecord rec;
    rec.address = a.address;
    rec.project_id = a.project_id;
    rec.kind = a.kind;
    rec.name = a.name;
    rec.parent = a.parent;
    rec.settings = a.after;
    rec.id = service_id + "/" + kind_plural(a.kind) + "/" + a.name;  // unique, and bound to its service
    rec.create_pending = true;
    rec.deletion_protection = a.deletion_protection;
    rec.created_at = format_utc(run_.clock.wall_now());
    rec.updated_at = rec.created_at;
    return rec;
  }

  // The service's objects all fail together: the transaction made none of them. `object` is the
  // failed statement's (its address below the service), "" when the step failed before any.
  void fail_all(size_t o, const std::string& object, const std::string& why) {
    const PlannedAction& first = run_.graph.action_of(o);
    const std::string service = service_address_of(first);
    const std::string address = object.empty() ? service : service + "/" + object;
    const std::string message =
        "its roles, schemas, extensions and grants were not made (" + std::to_string(group(o).size()) +
        " objects, one transaction, rolled back): " + why + ". The service is kept as it is; the next apply " +
        "reads the catalogs again and makes them";
    run_.ledger.result().failures.push_back(address + ": " + message);
    const ResourceRecord* rec = run_.ledger.state().find(address);
    run_.ledger.emit({EventKind::Failed, address, rec ? rec->id : "", "", Duration(0), message});
    run_.graph.item_of(o).failed = true;
    run_.progress.fail(o, "");
  }
};

}  // namespace

std::unique_ptr<Step> objects_step(RunContext& run) { return std::make_unique<ObjectsStep>(run); }

}  // namespace dbform::scheduling
