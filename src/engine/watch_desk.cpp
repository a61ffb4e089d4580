// The watch of one apply run (engine/watch_desk.h): the checks its Watcher says are due sent (by
// id, by list, connection attempts), and what they saw recorded: what a status means for the
// operation watched.
#include "engine/watch_desk.h"

#include <algorithm>
#include <unordered_map>
#include <utility>

#include "engine/progress.h"
#include "engine/connectable.h"
#include "plan/database_objects.h"
#include "engine/steps.h"
#include "engine/watcher.h"
#include "util/duration.h"
#include "util/log.h"
#include "util/text.h"

namespace dbform::scheduling {

void WatchDesk::send_checks(WorkQueue<Outcome>& workers) {
  RunGraph& graph = run_.graph;
  for (Check& due : run_.watcher.due([&](size_t i) { return watching(graph.items[i]); })) {
    const size_t first = due.slots.front();
    const PlannedAction& a = *graph.items[first].action;
    switch (due.kind) {
      case Check::Kind::Connect:
        workers.submit([check = run_.options.connectable.check,
                        target = admin_target(run_.ledger.record(a.address)), first] {
          Outcome out = check_connection(*check, target);
          out.item = first;
          return out;
        });
        break;
      case Check::Kind::List:
        workers.submit([&api = run_.api, round = std::move(due.slots), &a, scope = run_.scope_of(a),
                        key = run_.key_of(a)] {
          Outcome out = poll_list(api, type_of(a.kind), scope, key);
          out.items = round;
          return out;
        });
        break;
      case Check::Kind::Get:
        workers.submit([&api = run_.api, first, &a, scope = run_.scope_of(a), id = run_.ledger.record(a.address).id,
                        key = run_.key_of(a)] {
          Outcome out = poll_resource(api, a, scope, id, key);
          out.item = first;
          return out;
        });
        break;
    }
  }
}

void WatchDesk::handle(Outcome& out) {
  switch (out.to) {
    case AnswerTo::Poll: return handle_poll(out.item, out);
    case AnswerTo::PollList: return handle_poll_list(out);
    case AnswerTo::Connect: return handle_connection(out.item, out);
    case AnswerTo::Step: return;  // a step's answer goes to its row (ApplyRun::handle)
  }
}

bool WatchDesk::watching(const Item& item) const {
  return item.watched != kNone && run_.graph.ops[item.watched].step == OpStep::Watching;
}

void WatchDesk::handle_connection(size_t i, const Outcome& out) {
  Item& item = run_.graph.items[i];
  const ResourceRecord& rec = run_.ledger.record(item.action->address);
  switch (run_.watcher.connection_answered(i, out.error.empty(), out.transient)) {
    case ConnectVerdict::Accepted: item.connected = true; return run_.progress.ready(item, rec);
    case ConnectVerdict::Refused: return run_.progress.report_failure(item, login_refused_message(out.error));
    case ConnectVerdict::TimedOut:
      return run_.progress.report_failure(item, not_connectable_message(run_.options.wait_timeout, out.error));
    case ConnectVerdict::TryAgain: return;
  }
}

void WatchDesk::handle_poll(size_t i, Outcome& out) {
  Item& item = run_.graph.items[i];
  run_.watcher.answered(i);
  if (!watching(item)) return;
  const ResourceRecord& rec = run_.ledger.record(item.action->address);
  if (out.gone && run_.graph.ops[item.watched].deleting) return run_.progress.forget(item.watched);
  if (out.gone && type_of(rec.kind).listed_only && run_.watcher.elapsed(i) < run_.options.settle_window)
    return schedule_poll(i, rec);  // not listed yet: its list lags behind its create
  if (out.gone)
    return run_.progress.fail(item.watched, "the " + std::string(kind_noun(rec.kind)) + " " + rec.id +
                                                " no longer exists (404). Run `dbform state rm " + rec.address +
                                                "` to forget it and create it again");
  if (!out.error.empty()) return poll_failed(i, out);
  seen(i, std::move(*out.shown));
}

void WatchDesk::handle_poll_list(Outcome& out) {
  RunGraph& graph = run_.graph;
  // Each listed resource is one record's answer: moved into it (an id is listed once).
  std::unordered_map<std::string, Shown*> by_id;
  for (auto& s : out.listed) by_id.emplace(s.id, &s);
  // Quiet: the list shows every one of them, each in the status recorded.
  const bool quiet = out.error.empty() && !out.items.empty() &&
                     std::all_of(out.items.begin(), out.items.end(), [&](size_t i) {
                       const ResourceRecord& rec = run_.ledger.record(graph.items[i].action->address);
                       auto found = by_id.find(rec.id);
                       return found != by_id.end() && found->second->status == rec.status;
                     });
  run_.watcher.listed(out.items, quiet);
  for (size_t i : out.items) {
    Item& item = graph.items[i];
    if (!watching(item)) continue;
    if (!out.error.empty()) {
      poll_failed(i, out);
      continue;
    }
    const ResourceRecord& rec = run_.ledger.record(item.action->address);
    auto found = by_id.find(rec.id);
    if (found == by_id.end()) {
      run_.watcher.ask_by_id(i);  // not listed (yet: lists lag behind writes); a GET by id tells
      schedule_poll(i, rec);
      continue;
    }
    Shown* shown = found->second;
    by_id.erase(found);  // moved from below: a second record of the same id (none should be) is asked by id
    seen(i, std::move(*shown));
  }
}

void WatchDesk::poll_failed(size_t i, const Outcome& out) {
  Item& item = run_.graph.items[i];
  if (!out.transient) return run_.progress.fail(item.watched, out.error);
  log::info(item.action->address + ": watch request failed, will retry: " + out.error);
  schedule_poll(i, run_.ledger.record(item.action->address));
}

void WatchDesk::seen(size_t i, Shown&& shown) {
  Item& item = run_.graph.items[i];
  ResourceRecord& rec = run_.ledger.record(item.action->address);
  const std::string before = rec.status, host = rec.endpoint_host, pooler = rec.pooler_host;
  record_answer(rec, std::move(shown), format_utc(run_.clock.wall_now()));
  if (type_of(rec.kind).verdict(rec.status) == StatusVerdict::Ready) run_.watcher.learn(i, Lesson::SawReady);
  // A poll that saw nothing new costs no write; the end of the run writes the last answers.
  if (rec.status != before || rec.endpoint_host != host || rec.pooler_host != pooler) run_.ledger.changed(rec.address);
  if (rec.status != before)
    run_.ledger.emit(
        {EventKind::StatusChanged, rec.address, rec.id, rec.status, run_.progress.since_first_call(item), ""});
  after_status(i, rec);
}

void WatchDesk::after_status(size_t i, ResourceRecord& rec) {
  const size_t o = run_.graph.items[i].watched;
  Op& op = run_.graph.ops[o];
  const ResourceType& type = type_of(rec.kind);
  if (op.deleting) {
    const bool gone = *type.deleted_status && rec.status == type.deleted_status;
    return gone ? run_.progress.forget(o) : schedule_poll(i, rec);
  }
  Step& step = run_.steps.of(o);
  switch (type.verdict(rec.status)) {
    case StatusVerdict::Paused:
      if (!step.expects_pause(o))
        return run_.progress.fail(o, "status PAUSED: it was paused outside dbform. Declare `paused: true` to keep it "
                                     "paused, or `paused: false` to have dbform start it");
      [[fallthrough]];
    case StatusVerdict::Ready:
      if (rec.delete_pending()) {  // a stopped prune's delete did not happen
        rec.pending_call = nullptr;
        run_.ledger.changed(rec.address);
      }
      return step.on_ready(o);
    case StatusVerdict::Failed:
      return run_.progress.fail(o, "status " + rec.status + ": it will not become READY. After fixing it in the " +
                                       "console, run `dbform state rm " + rec.address + "` to create it again");
    case StatusVerdict::KeepWaiting: return schedule_poll(i, rec);
  }
}

void WatchDesk::schedule_poll(size_t i, const ResourceRecord& rec) {
  Item& item = run_.graph.items[i];
  auto now = run_.clock.now();
  const std::string last = rec.status.empty() ? "unknown" : rec.status;
  const Duration timeout = run_.options.wait_timeout;
  if (now >= run_.watcher.deadline(i) && run_.graph.ops[item.watched].deleting)
    return run_.progress.fail(item.watched, "not gone after " + format_duration(timeout) + " (last status " + last +
                                                "); it stays recorded, and apply --prune again keeps waiting for it");
  if (now >= run_.watcher.deadline(i))
    return run_.progress.fail(item.watched, "not READY after " + format_duration(timeout) + " (last status " + last +
                                                "); run apply again to keep waiting, it will not be created again");
  run_.graph.ops[item.watched].step = OpStep::Watching;
  run_.watcher.check_later(i, now);
}

void WatchDesk::watch_now(size_t i) {
  run_.graph.ops[run_.graph.items[i].watched].step = OpStep::Watching;
  run_.watcher.check_now(i);
}

void WatchDesk::start_watch(size_t o, Clock::TimePoint at) {
  Item& item = run_.graph.item_of(o);
  item.watched = o;
  run_.watcher.start(run_.graph.ops[o].item, at, run_.steps.of(o).traits.creates ? WaitFor::Create : WaitFor::Status);
}

}  // namespace dbform::scheduling
