#include "engine/poll_schedule.h"

#include <algorithm>

namespace dbform {

Duration PollSchedule::after(Duration waited) const {
  constexpr Duration kFirstMinute = std::chrono::minutes(1);
  if (waited < kFirstMinute || interval >= max) return std::min(interval, max);
  // One more second of pause for every 20 s of waiting beyond the first minute.
  return std::min(max, interval + (waited - kFirstMinute) / 20);
}

bool ReadyForecast::ready_after(Duration since_send) {
  if (fastest_ && *fastest_ <= since_send) return false;
  fastest_ = since_send;
  return true;
}

std::optional<Duration> ReadyForecast::pause(Clock::TimePoint last_send, Clock::TimePoint now, Duration interval) const {
  if (!fastest_) return std::nullopt;
  // Creates sent together reach the API a little apart: an eighth of the interval later, so that
  // the look finds the last ones READY too.
  const Clock::TimePoint due = last_send + *fastest_ + interval / 8;
  if (due > now) return std::chrono::duration_cast<Duration>(due - now);
  return std::nullopt;  // slower than the fastest: its usual schedule
}

}  // namespace dbform
