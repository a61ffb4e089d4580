// The watching of one apply run (engine/watcher.h): timers, pauses, the forecast and the probe.
#include "engine/watcher.h"

#include <algorithm>
#include <utility>

#include "engine/connectable.h"

namespace dbform::scheduling {

void Watcher::add(const std::string& group, ResourceKind kind, bool listed) {
  if (listed) groups_[group].push_back(slots_.size());
  Slot& s = slots_.emplace_back();
  s.group = group;
  s.kind = kind;
}

void Watcher::start(size_t i, Clock::TimePoint at, bool of_create) {
  Slot& s = slots_[i];
  s.start = at;
  s.deadline = at + wait_timeout_;
  s.of_create = of_create;
}

Duration Watcher::elapsed(size_t i) const {
  return std::chrono::duration_cast<Duration>(clock_.now() - slots_[i].start);
}

void Watcher::created(size_t i, bool ready) {
  Slot& s = slots_[i];
  s.created_here = true;
  Clock::TimePoint& last = last_create_[s.group];
  last = std::max(last, clock_.now());  // its answer is in: the API has made it
  if (spread() > 1) probe_.try_emplace(s.kind, s.group);
  if (ready) learn_ready(s);  // READY in the create's answer
}

void Watcher::saw_ready(size_t i) {
  if (forecast_applies(slots_[i])) learn_ready(slots_[i]);
}

void Watcher::learn_ready(const Slot& s) {
  const auto since_send = std::chrono::duration_cast<Duration>(clock_.now() - s.start);
  forecast_changed_ = forecasts_[s.kind].ready_after(since_send) || forecast_changed_;
}

void Watcher::create_failed(size_t i) {
  const Slot& s = slots_[i];
  if (!s.created_here) return;
  auto p = probe_.find(s.kind);
  // It taught nothing (READY would have): the others go back to their usual schedule.
  if (p != probe_.end() && p->second == s.group && probing(p->first)) probe_.erase(p);
}

void Watcher::check_later(size_t i, Clock::TimePoint now) {
  push(i, std::min(now + pause(slots_[i]), slots_[i].deadline));
}

void Watcher::check_now(size_t i) { push(i, clock_.now()); }

void Watcher::push(size_t i, Clock::TimePoint at) {
  Slot& s = slots_[i];
  cancel(i);
  s.timer_live = true;
  s.timer_at = at;
  ++live_timers_;
  timers_.push({at, i, s.timer_generation});
}

void Watcher::cancel(size_t i) {
  Slot& s = slots_[i];
  ++s.timer_generation;
  if (s.timer_live) --live_timers_;
  s.timer_live = false;
}

void Watcher::drop_stale() {
  while (!timers_.empty() && timers_.top().generation != slots_[timers_.top().slot].timer_generation) timers_.pop();
}

std::optional<Clock::TimePoint> Watcher::next_due() {
  drop_stale();
  if (in_flight_ >= kPollLane || timers_.empty()) return std::nullopt;
  return timers_.top().at;
}

std::vector<Check> Watcher::due(const std::function<bool(size_t)>& watching) {
  std::vector<Check> checks;
  if (std::exchange(forecast_changed_, false)) retime(watching);
  drop_stale();
  while (in_flight_ < kPollLane && !timers_.empty() && timers_.top().at <= clock_.now()) {
    const size_t first = timers_.top().slot;
    cancel(first);
    ++in_flight_;
    if (slots_[first].connecting) {
      mark_sent(slots_[first]);
      checks.push_back({Check::Kind::Connect, {first}});
      drop_stale();
      continue;
    }
    std::vector<size_t> round = {first};
    if (!slots_[first].get_next)
      for (size_t j : groups_[slots_[first].group]) {
        const Slot& other = slots_[j];
        if (j != first && watching(j) && !other.polling && !other.get_next) round.push_back(j);
      }
    if (round.size() >= kListAtLeast) {
      for (size_t j : round) {
        cancel(j);
        mark_sent(slots_[j]);
      }
      checks.push_back({Check::Kind::List, std::move(round)});
    } else {
      mark_sent(slots_[first]);
      checks.push_back({Check::Kind::Get, {first}});
    }
    drop_stale();
  }
  return checks;
}

void Watcher::mark_sent(Slot& s) {
  s.polling = true;
  s.looked = clock_.now();
}

void Watcher::answered(size_t i) {
  --in_flight_;
  Slot& s = slots_[i];
  s.polling = false;
  s.get_next = false;  // asked by id: the next rounds may use the list again
  ++s.checks;
}

void Watcher::listed(const std::vector<size_t>& slots, bool quiet) {
  --in_flight_;
  if (quiet && spread() > 1) {
    const Slot& first = slots_[slots.front()];
    quiet_for_[first.group] = std::min(2 * quiet_pause(first), spread() * polls_.interval);
  }
  for (size_t i : slots) {
    slots_[i].polling = false;
    ++slots_[i].checks;
  }
}

void Watcher::start_connecting(size_t i) {
  Slot& s = slots_[i];
  s.connecting = true;
  const auto now = clock_.now();
  s.connect_deadline = s.deadline > now ? s.deadline : now + wait_timeout_;
  push(i, now);
}

ConnectVerdict Watcher::connection_answered(size_t i, bool accepted, bool transient) {
  --in_flight_;
  Slot& s = slots_[i];
  s.polling = false;
  const auto now = clock_.now();
  if (accepted || !transient || now >= s.connect_deadline) s.connecting = false;
  if (accepted) return ConnectVerdict::Accepted;
  if (!transient) return ConnectVerdict::Refused;
  if (now >= s.connect_deadline) return ConnectVerdict::TimedOut;
  push(i, std::min(now + connection_retry_pause(polls_.interval), s.connect_deadline));
  return ConnectVerdict::TryAgain;
}

Duration::rep Watcher::spread() const {
  return std::clamp<Duration::rep>(static_cast<Duration::rep>(groups_.size() / 25), 1, 4);
}

Duration Watcher::quiet_pause(const Slot& s) const {
  if (spread() == 1) return Duration(0);
  auto quiet = quiet_for_.find(s.group);
  return quiet == quiet_for_.end() ? 2 * polls_.interval : quiet->second;
}

Duration Watcher::pause(const Slot& s) const {
  const Duration waited = std::chrono::duration_cast<Duration>(clock_.now() - s.start);
  const Duration usual = std::max(polls_.after(waited), quiet_pause(s));
  if (!forecast_applies(s)) return usual;  // updates, deletes, settles, adoptions: as ever
  if (auto f = forecasts_.find(s.kind); f != forecasts_.end() && f->second.known()) {
    auto due = f->second.pause(last_create_.at(s.group), clock_.now(), s.looked);
    return due ? std::min(usual, *due) : usual;
  }
  if (!probing(s.kind)) return usual;
  // The probe is looked at closely; the others' creates wait for what it learns.
  if (is_probe(s)) return polls_.after(std::chrono::duration_cast<Duration>(clock_.now() - s.start)) / 4;
  return std::max(usual, 2 * spread() * polls_.interval);
}

bool Watcher::probing(ResourceKind kind) const {
  auto f = forecasts_.find(kind);
  return probe_.count(kind) && (f == forecasts_.end() || !f->second.known());
}

bool Watcher::is_probe(const Slot& s) const {
  auto p = probe_.find(s.kind);
  return p != probe_.end() && p->second == s.group && probing(s.kind);
}

void Watcher::retime(const std::function<bool(size_t)>& watching) {
  for (size_t i = 0; i < slots_.size(); ++i) {
    const Slot& s = slots_[i];
    if (!s.timer_live || s.polling || s.connecting || !watching(i) || !forecast_applies(s)) continue;
    const auto at = std::min(clock_.now() + pause(s), s.deadline);
    if (at < s.timer_at) push(i, at);
  }
}

}  // namespace dbform::scheduling
