// How long a run waits before it looks at a resource again (engine/pacing.h).
#include "engine/pacing.h"

#include <algorithm>

namespace dbform::scheduling {

void Pacing::created(const Wait& wait, bool ready) {
  Clock::TimePoint& last = last_create_[wait.group];
  last = std::max(last, clock_.now());  // its answer is in: the API has made it
  if (spread() > 1) probe_.try_emplace(wait.kind, wait.group);
  if (ready) learn_ready(wait);  // READY in the create's answer
}

void Pacing::saw_ready(const Wait& wait) {
  if (forecast_applies(wait)) learn_ready(wait);
}

void Pacing::learn_ready(const Wait& wait) {
  const auto since_send = std::chrono::duration_cast<Duration>(clock_.now() - wait.start);
  sooner_ = forecasts_[wait.kind].ready_after(since_send) || sooner_;
}

void Pacing::create_failed(const Wait& wait) {
  if (!wait.created_here) return;
  auto p = probe_.find(wait.kind);
  // It taught nothing (READY would have): the others go back to their usual schedule.
  if (p != probe_.end() && p->second == wait.group && probing(p->first)) probe_.erase(p);
}

void Pacing::listed(const Wait& first, bool quiet) {
  if (quiet && spread() > 1) quiet_for_[first.group] = std::min(2 * quiet_pause(first), spread() * polls_.interval);
}

Duration::rep Pacing::spread() const {
  return std::clamp<Duration::rep>(static_cast<Duration::rep>(groups_ / 25), 1, 4);
}

Duration Pacing::quiet_pause(const Wait& wait) const {
  if (spread() == 1) return Duration(0);
  auto quiet = quiet_for_.find(wait.group);
  return quiet == quiet_for_.end() ? 2 * polls_.interval : quiet->second;
}

Duration Pacing::pause(const Wait& wait) const {
  const Duration waited = std::chrono::duration_cast<Duration>(clock_.now() - wait.start);
  const Duration usual = std::max(polls_.after(waited), quiet_pause(wait));
  if (!forecast_applies(wait)) return usual;  // updates, deletes, settles, adoptions: as ever
  if (auto f = forecasts_.find(wait.kind); f != forecasts_.end() && f->second.known()) {
    auto due = f->second.pause(last_create_.at(wait.group), clock_.now(), wait.looked);
    return due ? std::min(usual, *due) : usual;
  }
  if (!probing(wait.kind)) return usual;
  // The probe is looked at closely; the others' creates wait for what it learns.
  if (is_probe(wait)) return polls_.after(waited) / 4;
  return std::max(usual, 2 * spread() * polls_.interval);
}

bool Pacing::probing(ResourceKind kind) const {
  auto f = forecasts_.find(kind);
  return probe_.count(kind) && (f == forecasts_.end() || !f->second.known());
}

bool Pacing::is_probe(const Wait& wait) const {
  auto p = probe_.find(wait.kind);
  return p != probe_.end() && p->second == wait.group && probing(wait.kind);
}

}  // namespace dbform::scheduling
