// Watching in a run (engine/apply_run.h): the checks its Watcher says are due sent (by id, by list,
// connection attempts), and what they saw recorded: what a status means for the operation watched.
#include "engine/apply_run.h"

#include <algorithm>
#include <utility>

#include "util/duration.h"
#include "util/log.h"

namespace dbform::scheduling {

void ApplyRun::send_checks(WorkQueue<Outcome>& workers) {
  for (Check& due : watcher_.due([this](size_t i) { return watching(items_[i]); })) {
    const size_t first = due.slots.front();
    const PlannedAction& a = *items_[first].action;
    switch (due.kind) {
      case Check::Kind::Connect:
        workers.submit([check = options_.connectable.check, target = connect_target(*state_.find(a.address)), first] {
          Outcome out = check_connection(*check, target);
          out.item = first;
          return out;
        });
        break;
      case Check::Kind::List:
        workers.submit([this, round = std::move(due.slots), &a, scope = scope_of(a), key = key_of(a)] {
          Outcome out = poll_list(api_, type_of(a.kind), scope, key);
          out.items = round;
          return out;
        });
        break;
      case Check::Kind::Get:
        workers.submit([this, first, &a, scope = scope_of(a), id = state_.find(a.address)->id, key = key_of(a)] {
          Outcome out = poll_resource(api_, a, scope, id, key);
          out.item = first;
          return out;
        });
        break;
    }
  }
}

void ApplyRun::start_connection_wait(Item& item, const ResourceRecord& rec) {
  if (auto problem = connection_problem(rec)) return report_failure(item, *problem);
  watcher_.start_connecting(static_cast<size_t>(&item - items_.data()));
  emit({EventKind::StatusChanged, rec.address, rec.id, rec.status, since_first_call(item), kCheckingConnections});
}

void ApplyRun::handle_connection(size_t i, const Outcome& out) {
  Item& item = items_[i];
  const ResourceRecord& rec = *state_.find(item.action->address);
  switch (watcher_.connection_answered(i, out.error.empty(), out.transient)) {
    case ConnectVerdict::Accepted: item.connected = true; return ready(item, rec);
    case ConnectVerdict::Refused: return report_failure(item, login_refused_message(out.error));
    case ConnectVerdict::TimedOut:
      return report_failure(item, not_connectable_message(options_.wait_timeout, out.error));
    case ConnectVerdict::TryAgain: return;
  }
}

void ApplyRun::handle_poll(size_t i, Outcome& out) {
  Item& item = items_[i];
  watcher_.answered(i);
  if (!watching(item)) return;
  const ResourceRecord& rec = *state_.find(item.action->address);
  if (out.gone && ops_[item.watched].deleting) return forget(item.watched);
  if (out.gone && type_of(rec.kind).listed_only && watcher_.elapsed(i) < options_.settle_window)
    return schedule_poll(i, rec);  // not listed yet: its list lags behind its create
  if (out.gone)
    return fail_op(item.watched, "the " + std::string(kind_noun(rec.kind)) + " " + rec.id + " no longer exists (404). Run `dbform state rm " +
                                     rec.address + "` to forget it and create it again");
  if (!out.error.empty()) return poll_failed(i, out);
  seen(i, std::move(*out.shown));
}

void ApplyRun::handle_poll_list(Outcome& out) {
  // Each listed resource is one record's answer: moved into it (an id is listed once).
  std::unordered_map<std::string, Shown*> by_id;
  for (auto& s : out.listed) by_id.emplace(s.id, &s);
  // Quiet: the list shows every one of them, each in the status recorded.
  const bool quiet = out.error.empty() && !out.items.empty() &&
                     std::all_of(out.items.begin(), out.items.end(), [&](size_t i) {
                       const ResourceRecord& rec = *state_.find(items_[i].action->address);
                       auto found = by_id.find(rec.id);
                       return found != by_id.end() && found->second->status == rec.status;
                     });
  watcher_.listed(out.items, quiet);
  for (size_t i : out.items) {
    Item& item = items_[i];
    if (!watching(item)) continue;
    if (!out.error.empty()) {
      poll_failed(i, out);
      continue;
    }
    const ResourceRecord& rec = *state_.find(item.action->address);
    auto found = by_id.find(rec.id);
    if (found == by_id.end()) {
      watcher_.ask_by_id(i);  // not listed (yet: lists lag behind writes); a GET by id tells
      schedule_poll(i, rec);
      continue;
    }
    Shown* shown = found->second;
    by_id.erase(found);  // moved from below: a second record of the same id (none should be) is asked by id
    seen(i, std::move(*shown));
  }
}

void ApplyRun::poll_failed(size_t i, const Outcome& out) {
  Item& item = items_[i];
  if (!out.transient) return fail_op(item.watched, out.error);
  log::info(item.action->address + ": watch request failed, will retry: " + out.error);
  schedule_poll(i, *state_.find(item.action->address));
}

void ApplyRun::seen(size_t i, Shown&& shown) {
  Item& item = items_[i];
  ResourceRecord& rec = *state_.find(item.action->address);
  const std::string before = rec.status, host = rec.endpoint_host, pooler = rec.pooler_host;
  record_answer(rec, std::move(shown), format_utc(clock_.wall_now()));
  if (type_of(rec.kind).verdict(rec.status) == StatusVerdict::Ready) watcher_.saw_ready(i);
  // A poll that saw nothing new costs no write; the end of the run writes the last answers.
  if (rec.status != before || rec.endpoint_host != host || rec.pooler_host != pooler) changed_.insert(rec.address);
  if (rec.status != before)
    emit({EventKind::StatusChanged, rec.address, rec.id, rec.status, since_first_call(item), ""});
  after_status(i, rec);
}

void ApplyRun::after_status(size_t i, ResourceRecord& rec) {
  const size_t o = items_[i].watched;
  Op& op = ops_[o];
  if (op.deleting) return rec.status == "DELETED" ? forget(o) : schedule_poll(i, rec);
  switch (type_of(rec.kind).verdict(rec.status)) {
    case StatusVerdict::Paused:
      if (!steps_.expects_pause(o))
        return fail_op(o, "status PAUSED: it was paused outside dbform. Declare `paused: true` to keep it paused, "
                          "or `paused: false` to have dbform start it");
      [[fallthrough]];
    case StatusVerdict::Ready:
      if (rec.delete_pending()) {  // a stopped prune's delete did not happen
        rec.pending_call = nullptr;
        changed_.insert(rec.address);
      }
      if (op.what.type != OpType::Call) return complete(o);
      if (!steps_.shows_change(o, rec)) {
        if (op.awaiting) return schedule_poll(i, rec);  // READY before its change shows: a view that lags
        return make_ready(o);                           // not made: sent again
      }
      steps_.record_call(o);
      return complete(o);
    case StatusVerdict::Failed:
      return fail_op(o, "status " + rec.status + ": it will not become READY. After fixing it in the console, " +
                            "run `dbform state rm " + rec.address + "` to create it again");
    case StatusVerdict::KeepWaiting: return schedule_poll(i, rec);
  }
}

void ApplyRun::schedule_poll(size_t i, const ResourceRecord& rec) {
  Item& item = items_[i];
  auto now = clock_.now();
  const std::string last = rec.status.empty() ? "unknown" : rec.status;
  if (now >= watcher_.deadline(i) && ops_[item.watched].deleting)
    return fail_op(item.watched, "not gone after " + format_duration(options_.wait_timeout) + " (last status " +
                                     last + "); it stays recorded, and apply --prune again keeps waiting for it");
  if (now >= watcher_.deadline(i))
    return fail_op(item.watched, "not READY after " + format_duration(options_.wait_timeout) + " (last status " +
                                     last + "); run apply again to keep waiting, it will not be created again");
  ops_[item.watched].step = OpStep::Watching;
  watcher_.check_later(i, now);
}

void ApplyRun::watch_now(size_t i) {
  ops_[items_[i].watched].step = OpStep::Watching;
  watcher_.check_now(i);
}

void ApplyRun::start_watch(size_t o, Clock::TimePoint at) {
  Item& item = item_of(o);
  item.watched = o;
  watcher_.start(ops_[o].item, at, ops_[o].what.type == OpType::Create);
}

Duration ApplyRun::since_first_call(const Item& item) const {
  return item.first_call ? std::chrono::duration_cast<Duration>(clock_.now() - *item.first_call) : Duration(0);
}

}  // namespace dbform::scheduling
