// The timers of a run's Watcher (engine/timer_queue.h).
#include "engine/timer_queue.h"

namespace dbform::scheduling {

void TimerQueue::set(size_t slot, Clock::TimePoint at) {
  cancel(slot);
  Slot& s = slots_[slot];
  s.live = true;
  s.at = at;
  ++live_;
  heap_.push({at, slot, s.generation});
}

void TimerQueue::cancel(size_t slot) {
  Slot& s = slots_[slot];
  ++s.generation;
  if (s.live) --live_;
  s.live = false;
}

std::optional<size_t> TimerQueue::first() {
  while (!heap_.empty() && heap_.top().generation != slots_[heap_.top().slot].generation) heap_.pop();
  if (heap_.empty()) return std::nullopt;
  return heap_.top().slot;
}

}  // namespace dbform::scheduling
