#pragma once
// The timers of a run's Watcher (engine/watcher.h): at most one per slot. Set again, a slot's timer
// replaces the one before; cancelled, it never comes due. The earliest live timer is found without
// walking the slots (a heap, whose replaced entries are dropped when they reach its top).
#include <cstddef>
#include <functional>
#include <optional>
#include <queue>
#include <vector>

#include "util/clock.h"

namespace dbform::scheduling {

class TimerQueue {
 public:
  void add_slot() { slots_.emplace_back(); }
  void set(size_t slot, Clock::TimePoint at);
  void cancel(size_t slot);
  bool live(size_t slot) const { return slots_[slot].live; }
  // When its live timer is due.
  Clock::TimePoint at(size_t slot) const { return slots_[slot].at; }
  bool idle() const { return live_ == 0; }
  // The slot whose live timer is due first; none when no timer is live.
  std::optional<size_t> first();

 private:
  struct Slot {
    int generation = 0;  // an entry of an older generation was replaced or cancelled
    bool live = false;   // an entry of the current generation is queued
    Clock::TimePoint at{};
  };
  struct Entry {
    Clock::TimePoint at;
    size_t slot;
    int generation;
    bool operator>(const Entry& other) const { return at > other.at; }
  };

  std::vector<Slot> slots_;
  std::priority_queue<Entry, std::vector<Entry>, std::greater<>> heap_;
  int live_ = 0;
};

}  // namespace dbform::scheduling
