// Watching in a run (engine/apply_run.h): status checks by id or by list, their timers and pauses,
// what a status means for the operation watched, and waits for connections.
#include "engine/apply_run.h"

#include <algorithm>
#include <utility>

#include "util/duration.h"
#include "util/log.h"

namespace dbform::scheduling {

void ApplyRun::dispatch_due_polls(WorkQueue<Outcome>& workers) {
  if (std::exchange(forecast_changed_, false)) retime_to_forecast();
  drop_stale_timers();
  while (polls_in_flight_ < kPollLane && !timers_.empty() && timers_.top().at <= clock_.now()) {
    const size_t first = timers_.top().item;
    cancel_timer(first);
    if (items_[first].connecting) {
      submit_connection_check(workers, first);
      drop_stale_timers();
      continue;
    }
    const PlannedAction& a = *items_[first].action;
    std::vector<size_t> round = {first};
    if (!items_[first].get_next)
      for (size_t j : watched_together_[together(a)]) {
        const Item& other = items_[j];
        if (j != first && watching(other) && !other.polling && !other.get_next) round.push_back(j);
      }
    ++polls_in_flight_;
    if (round.size() >= kListAtLeast) {
      for (size_t j : round) {
        cancel_timer(j);
        items_[j].polling = true;
      }
      workers.submit([this, round, &a, scope = scope_of(a), key = key_of(a)] {
        Outcome out = poll_list(api_, type_of(a.kind), scope, key);
        out.items = round;
        return out;
      });
    } else {
      items_[first].polling = true;
      workers.submit([this, first, &a, scope = scope_of(a), id = state_.find(a.address)->id, key = key_of(a)] {
        Outcome out = poll_resource(api_, a, scope, id, key);
        out.item = first;
        return out;
      });
    }
    drop_stale_timers();
  }
}

void ApplyRun::submit_connection_check(WorkQueue<Outcome>& workers, size_t i) {
  ++polls_in_flight_;
  items_[i].polling = true;
  workers.submit([check = options_.connectable.check, target = connect_target(*state_.find(items_[i].action->address)),
                  i] {
    Outcome out = check_connection(*check, target);
    out.item = i;
    return out;
  });
}

void ApplyRun::start_connection_wait(Item& item, const ResourceRecord& rec) {
  if (auto problem = connection_problem(rec)) return report_failure(item, *problem);
  item.connecting = true;
  const auto now = clock_.now();
  item.connect_deadline = item.deadline > now ? item.deadline : now + options_.wait_timeout;
  emit({EventKind::StatusChanged, rec.address, rec.id, rec.status, since_first_call(item), kCheckingConnections});
  push_timer(static_cast<size_t>(&item - items_.data()), now);
}

void ApplyRun::handle_connection(size_t i, const Outcome& out) {
  Item& item = items_[i];
  item.polling = false;
  const ResourceRecord& rec = *state_.find(item.action->address);
  const auto now = clock_.now();
  if (out.error.empty() || !out.transient || now >= item.connect_deadline) item.connecting = false;
  if (out.error.empty()) {
    item.connected = true;
    return ready(item, rec);
  }
  if (!out.transient) return report_failure(item, login_refused_message(out.error));
  if (now >= item.connect_deadline) return report_failure(item, not_connectable_message(options_.wait_timeout, out.error));
  push_timer(i, std::min(now + connection_retry_pause(options_.polls.interval), item.connect_deadline));
}

void ApplyRun::push_timer(size_t i, Clock::TimePoint at) {
  Item& item = items_[i];
  cancel_timer(i);
  item.timer_live = true;
  item.timer_at = at;
  ++live_timers_;
  timers_.push({at, i, item.timer_generation});
}

void ApplyRun::cancel_timer(size_t i) {
  Item& item = items_[i];
  ++item.timer_generation;
  if (item.timer_live) --live_timers_;
  item.timer_live = false;
}

void ApplyRun::drop_stale_timers() {
  while (!timers_.empty() && timers_.top().generation != items_[timers_.top().item].timer_generation) timers_.pop();
}

void ApplyRun::handle_poll(size_t i, const Outcome& out) {
  Item& item = items_[i];
  item.polling = false;
  item.get_next = false;  // asked by id: the next rounds may use the list again
  ++item.polls;
  if (!watching(item)) return;
  const ResourceRecord& rec = *state_.find(item.action->address);
  if (out.gone && ops_[item.watched].deleting) return forget(item.watched);
  if (out.gone && type_of(rec.kind).listed_only && elapsed(item) < options_.settle_window)
    return schedule_poll(i, rec);  // not listed yet: its list lags behind its create
  if (out.gone)
    return fail_op(item.watched, "the " + std::string(kind_noun(rec.kind)) + " " + rec.id + " no longer exists (404). Run `dbform state rm " +
                                     rec.address + "` to forget it and create it again");
  if (!out.error.empty()) return poll_failed(i, out);
  seen(i, *out.shown);
}

void ApplyRun::handle_poll_list(const Outcome& out) {
  std::unordered_map<std::string, const Shown*> by_id;
  for (const auto& s : out.listed) by_id.emplace(s.id, &s);
  if (out.error.empty() && !out.items.empty()) back_off_if_quiet(out.items, by_id);
  for (size_t i : out.items) {
    Item& item = items_[i];
    item.polling = false;
    ++item.polls;
    if (!watching(item)) continue;
    if (!out.error.empty()) {
      poll_failed(i, out);
      continue;
    }
    const ResourceRecord& rec = *state_.find(item.action->address);
    auto found = by_id.find(rec.id);
    if (found == by_id.end()) {
      item.get_next = true;  // not listed (yet: lists lag behind writes); a GET by id tells
      schedule_poll(i, rec);
      continue;
    }
    seen(i, *found->second);
  }
}

Duration::rep ApplyRun::spread() const {
  return std::clamp<Duration::rep>(static_cast<Duration::rep>(watched_together_.size() / 25), 1, 4);
}

Duration ApplyRun::quiet_pause(const PlannedAction& a) const {
  if (spread() == 1) return Duration(0);
  auto quiet = quiet_for_.find(together(a));
  return quiet == quiet_for_.end() ? 2 * options_.polls.interval : quiet->second;
}

Duration ApplyRun::poll_pause(const Item& item) const {
  const PlannedAction& a = *item.action;
  const Duration usual = std::max(options_.polls.after(elapsed(item)), quiet_pause(a));
  if (!forecast_applies(item)) return usual;  // updates, deletes, settles, adoptions: as ever
  if (auto f = forecasts_.find(a.kind); f != forecasts_.end() && f->second.known()) {
    auto due = f->second.pause(last_create_.at(together(a)), clock_.now(), options_.polls.interval);
    return due ? std::min(usual, *due) : usual;
  }
  if (!probing(a.kind)) return usual;
  // The probe is looked at closely; the others' creates wait for what it learns.
  if (is_probe(a)) return options_.polls.after(elapsed(item)) / 4;
  return std::max(usual, 2 * spread() * options_.polls.interval);
}

bool ApplyRun::forecast_applies(const Item& item) const {
  return item.created_here && ops_[item.watched].what.type == OpType::Create;
}

bool ApplyRun::probing(ResourceKind kind) const {
  auto f = forecasts_.find(kind);
  return probe_.count(kind) && (f == forecasts_.end() || !f->second.known());
}

bool ApplyRun::is_probe(const PlannedAction& a) const {
  auto p = probe_.find(a.kind);
  return p != probe_.end() && p->second == together(a) && probing(a.kind);
}

void ApplyRun::end_probe_if_failed(size_t o) {
  const Item& item = item_of(o);
  if (ops_[o].what.type != OpType::Create || !item.created_here) return;
  auto p = probe_.find(item.action->kind);
  // It taught nothing (READY would have): the others go back to their usual schedule.
  if (p != probe_.end() && p->second == together(*item.action) && probing(p->first)) probe_.erase(p);
}

void ApplyRun::watch_created(size_t o) {
  Item& item = item_of(o);
  item.created_here = true;
  const std::string group = together(*item.action);
  Clock::TimePoint& last = last_create_[group];
  last = std::max(last, item.watch_start);
  if (spread() > 1) probe_.try_emplace(item.action->kind, group);
  const ResourceRecord& rec = record_of(o);
  if (type_of(rec.kind).verdict(rec.status) == StatusVerdict::Ready)  // READY in the create's answer
    forecast_changed_ = forecasts_[rec.kind].ready_after(elapsed(item)) || forecast_changed_;
}

void ApplyRun::retime_to_forecast() {
  for (size_t i = 0; i < items_.size(); ++i) {
    Item& item = items_[i];
    if (!item.timer_live || item.polling || item.connecting || !watching(item) || !forecast_applies(item)) continue;
    const auto at = std::min(clock_.now() + poll_pause(item), item.deadline);
    if (at < item.timer_at) push_timer(i, at);
  }
}

void ApplyRun::back_off_if_quiet(const std::vector<size_t>& round,
                       const std::unordered_map<std::string, const Shown*>& listed) {
  bool changed = false;
  for (size_t i : round) {
    const ResourceRecord& rec = *state_.find(items_[i].action->address);
    auto found = listed.find(rec.id);
    changed = changed || found == listed.end() || found->second->status != rec.status;
  }
  const PlannedAction& a = *items_[round.front()].action;
  if (!changed && spread() > 1)
    quiet_for_[together(a)] = std::min(2 * quiet_pause(a), spread() * options_.polls.interval);
}

void ApplyRun::poll_failed(size_t i, const Outcome& out) {
  Item& item = items_[i];
  if (!out.transient) return fail_op(item.watched, out.error);
  log::info(item.action->address + ": watch request failed, will retry: " + out.error);
  schedule_poll(i, *state_.find(item.action->address));
}

void ApplyRun::seen(size_t i, const Shown& shown) {
  Item& item = items_[i];
  ResourceRecord& rec = *state_.find(item.action->address);
  const std::string before = rec.status, host = rec.endpoint_host, pooler = rec.pooler_host;
  record_answer(rec, shown, format_utc(clock_.wall_now()));
  if (forecast_applies(item) && type_of(rec.kind).verdict(rec.status) == StatusVerdict::Ready)
    forecast_changed_ = forecasts_[rec.kind].ready_after(elapsed(item)) || forecast_changed_;
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
      if (!expects_pause(o))
        return fail_op(o, "status PAUSED: it was paused outside dbform. Declare `paused: true` to keep it paused, "
                          "or `paused: false` to have dbform start it");
      [[fallthrough]];
    case StatusVerdict::Ready:
      if (rec.delete_pending()) {  // a stopped prune's delete did not happen
        rec.pending_call = nullptr;
        changed_.insert(rec.address);
      }
      if (op.what.type != OpType::Call) return complete(o);
      if (!shows_change(o, rec)) {
        if (op.awaiting) return schedule_poll(i, rec);  // READY before its change shows: a view that lags
        return make_ready(o);                           // not made: sent again
      }
      record_call(o);
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
  if (now >= item.deadline && ops_[item.watched].deleting)
    return fail_op(item.watched, "not gone after " + format_duration(options_.wait_timeout) + " (last status " +
                                     last + "); it stays recorded, and apply --prune again keeps waiting for it");
  if (now >= item.deadline)
    return fail_op(item.watched, "not READY after " + format_duration(options_.wait_timeout) + " (last status " +
                                     last + "); run apply again to keep waiting, it will not be created again");
  ops_[item.watched].step = OpStep::Watching;
  push_timer(i, std::min(now + poll_pause(item), item.deadline));
}

void ApplyRun::watch_now(size_t i) {
  ops_[items_[i].watched].step = OpStep::Watching;
  push_timer(i, clock_.now());
}

void ApplyRun::start_watch(size_t o, Clock::TimePoint at) {
  Item& item = item_of(o);
  item.watched = o;
  item.watch_start = at;
  item.deadline = at + options_.wait_timeout;
}

Duration ApplyRun::since_first_call(const Item& item) const {
  return item.first_call ? std::chrono::duration_cast<Duration>(clock_.now() - *item.first_call) : Duration(0);
}

Duration ApplyRun::elapsed(const Item& item) const {
  return std::chrono::duration_cast<Duration>(clock_.now() - item.watch_start);
}

}  // namespace dbform::scheduling
