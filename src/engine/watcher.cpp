// The watching of one apply run (engine/watcher.h): timers, the lane, lists and connections.
#include "engine/watcher.h"

#include <algorithm>
#include <utility>

#include "engine/connectable.h"

namespace dbform::scheduling {

void Watcher::add(const std::string& group, ResourceKind kind, bool listed) {
  if (listed) {
    auto [slots, fresh] = groups_.try_emplace(group);
    if (fresh) pacing_.add_group();
    slots->second.push_back(slots_.size());
  }
  timers_.add_slot();
  Slot& s = slots_.emplace_back();
  s.wait.group = group;
  s.wait.kind = kind;
}

void Watcher::start(size_t i, Clock::TimePoint at, WaitFor what) {
  Slot& s = slots_[i];
  if (what == WaitFor::Connection) {
    s.connecting = true;
    s.connect_deadline = s.deadline > at ? s.deadline : at + wait_timeout_;
    push(i, at);
    return;
  }
  s.wait.start = at;
  s.deadline = at + wait_timeout_;
  s.wait.of_create = what == WaitFor::Create;
}

Duration Watcher::elapsed(size_t i) const {
  return std::chrono::duration_cast<Duration>(clock_.now() - slots_[i].wait.start);
}

void Watcher::learn(size_t i, Lesson lesson) {
  Wait& w = slots_[i].wait;
  switch (lesson) {
    case Lesson::CreatedReady:
    case Lesson::Created:
      w.created_here = true;
      pacing_.created(w, lesson == Lesson::CreatedReady);
      break;
    case Lesson::SawReady: pacing_.saw_ready(w); break;
    case Lesson::CreateFailed: pacing_.create_failed(w); break;
  }
}

void Watcher::check_later(size_t i, Clock::TimePoint now) {
  push(i, std::min(now + pacing_.pause(slots_[i].wait), slots_[i].deadline));
}

void Watcher::check_now(size_t i) { push(i, clock_.now()); }

void Watcher::cancel(size_t i) { timers_.cancel(i); }

std::optional<Clock::TimePoint> Watcher::next_due() {
  const std::optional<size_t> first = timers_.first();
  if (in_flight_ >= kPollLane || !first) return std::nullopt;
  return timers_.at(*first);
}

std::vector<Check> Watcher::due(const std::function<bool(size_t)>& watching) {
  std::vector<Check> checks;
  if (pacing_.take_sooner()) retime(watching);
  for (std::optional<size_t> next = timers_.first();
       in_flight_ < kPollLane && next && timers_.at(*next) <= clock_.now(); next = timers_.first()) {
    const size_t first = *next;
    cancel(first);
    ++in_flight_;
    if (slots_[first].connecting) {
      mark_sent(slots_[first]);
      checks.push_back({Check::Kind::Connect, {first}});
      continue;
    }
    std::vector<size_t> round = {first};
    if (!slots_[first].get_next)
      for (size_t j : groups_[slots_[first].wait.group]) {
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
  }
  return checks;
}

void Watcher::mark_sent(Slot& s) {
  s.polling = true;
  s.wait.looked = clock_.now();
}

void Watcher::answered(size_t i) {
  --in_flight_;
  Slot& s = slots_[i];
  s.polling = false;
  s.get_next = false;  // asked by id: the next rounds may use the list again
}

void Watcher::listed(const std::vector<size_t>& slots, bool quiet) {
  --in_flight_;
  pacing_.listed(slots_[slots.front()].wait, quiet);
  for (size_t i : slots) slots_[i].polling = false;
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

void Watcher::retime(const std::function<bool(size_t)>& watching) {
  for (size_t i = 0; i < slots_.size(); ++i) {
    const Slot& s = slots_[i];
    if (!timers_.live(i) || s.polling || s.connecting || !watching(i) || !Pacing::forecast_applies(s.wait)) continue;
    const auto at = std::min(clock_.now() + pacing_.pause(s.wait), s.deadline);
    if (at < timers_.at(i)) push(i, at);
  }
}

}  // namespace dbform::scheduling
