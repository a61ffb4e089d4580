// What becomes of a run's operations and resources (engine/progress.h).
#include "engine/progress.h"

#include "engine/connectable.h"
#include "engine/steps.h"
#include "engine/watcher.h"

namespace dbform::scheduling {

void Progress::complete(size_t o) {
  RunGraph& graph = run_.graph;
  graph.done(o);
  const Op& op = graph.ops[o];
  if (op.item == kNone) return;
  Item& item = graph.items[op.item];
  if (run_.steps.of(o).traits.deletes || item.failed || item.unconfirmed || graph.unfinished(item)) return;
  ready(item, run_.ledger.record(item.action->address));
}

void Progress::leave(size_t o, const std::string& why) {
  RunGraph& graph = run_.graph;
  Op& op = graph.ops[o];
  if (over(op)) return;
  op.step = OpStep::Left;
  if (op.item != kNone && !why.empty()) {
    Item& item = graph.items[op.item];
    item.unconfirmed = true;
    run_.ledger.result().left.push_back(item.action->address + ": " + why);
    const ResourceRecord* rec = run_.ledger.state().find(item.action->address);
    run_.ledger.emit({EventKind::Left, item.action->address, rec ? rec->id : "", "", Duration(0), why});
  }
  for (size_t d : op.dependants) leave(d, graph.ops[d].item == op.item ? "" : run_.steps.of(d).left_reason(d, o));
}

void Progress::fail(size_t o, const std::string& why) {
  RunGraph& graph = run_.graph;
  Op& op = graph.ops[o];
  if (over(op)) return;
  op.step = OpStep::Failed;
  if (op.item != kNone) {
    if (run_.steps.of(o).traits.creates) run_.watcher.learn(op.item, Lesson::CreateFailed);
    Item& item = graph.items[op.item];
    if (item.watched == o) run_.watcher.cancel(op.item);
    if (!why.empty()) report_failure(item, why);
  }
  for (size_t d : op.dependants)
    fail(d, op.item != kNone && graph.ops[d].item == op.item ? "" : run_.steps.of(d).blocked_reason(d, o));
}

void Progress::report_failure(Item& item, const std::string& why) {
  item.failed = true;
  run_.ledger.result().failures.push_back(item.action->address + ": " + why);
  const ResourceRecord* rec = run_.ledger.state().find(item.action->address);
  run_.ledger.emit({EventKind::Failed, item.action->address, rec ? rec->id : "", rec ? rec->status : "",
                    rec ? since_first_call(item) : Duration(0), why});
}

void Progress::forget(size_t o) {
  const Item& item = run_.graph.item_of(o);
  const PlannedAction& a = *item.action;
  const std::string id = run_.ledger.record(a.address).id;
  run_.ledger.state().remove(a.address);
  run_.ledger.changed(a.address);
  ++run_.ledger.result().deleted;
  run_.ledger.emit({EventKind::Deleted, a.address, id, "", since_first_call(item), ""});
  complete(o);
}

void Progress::end_unconfirmed(size_t o) {
  Item& item = run_.graph.item_of(o);
  item.unconfirmed = true;
  complete(o);
  for (size_t later : item.ops) {
    if (later < o || over(run_.graph.ops[later])) continue;
    Step& step = run_.steps.of(later);
    if (step.done_unconfirmed(later)) {
      complete(later);
      continue;
    }
    return leave(later, step.label(later) + " and what follows need it READY, which --no-wait does not wait for");
  }
}

void Progress::ready(Item& item, const ResourceRecord& rec) {
  if (!item.connected && wants_connection(run_.options.connectable, *item.action, rec, item.password_set))
    return start_connection_wait(item, rec);
  ApplyResult& result = run_.ledger.result();
  ++result.ready;
  if (type_of(rec.kind).verdict(rec.status) == StatusVerdict::Paused) ++result.paused;
  std::string endpoint = rec.endpoint_host;
  if (rec.endpoint_port) endpoint += ":" + std::to_string(*rec.endpoint_port);
  run_.ledger.emit({EventKind::Ready, rec.address, rec.id, rec.status, since_first_call(item), endpoint});
}

void Progress::start_connection_wait(Item& item, const ResourceRecord& rec) {
  if (auto problem = connection_problem(rec)) return report_failure(item, *problem);
  run_.watcher.start(run_.graph.slot_of(item), run_.clock.now(), WaitFor::Connection);
  run_.ledger.emit({EventKind::StatusChanged, rec.address, rec.id, rec.status, since_first_call(item),
                    kCheckingConnections});
}

Duration Progress::since_first_call(const Item& item) const {
  return item.first_call ? std::chrono::duration_cast<Duration>(run_.clock.now() - *item.first_call) : Duration(0);
}

}  // namespace dbform::scheduling
