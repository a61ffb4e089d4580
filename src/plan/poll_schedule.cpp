#include "plan/poll_schedule.h"

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

std::optional<Duration> ReadyForecast::pause(Clock::TimePoint last_answer, Clock::TimePoint now,
                                            std::optional<Clock::TimePoint> looked) const {
  if (!fastest_) return std::nullopt;
  // The API made the last create before its answer came back, and the fastest is no shorter than
  // its own provisioning: no margin is needed for creates that reached the API a little apart (an
  // eighth of the interval was added here, and the last READY of a run was seen that much late).
  const Clock::TimePoint due = last_answer + *fastest_;
  if (due > now) return std::chrono::duration_cast<Duration>(due - now);
  if (!looked || *looked < due) return Duration(0);
  return std::nullopt;  // looked at since, and slower than the fastest: its usual schedule
}

}  // namespace dbform
