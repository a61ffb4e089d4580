#include "engine/poll_schedule.h"

#include <algorithm>

namespace dbform {

Duration PollSchedule::after(Duration waited) const {
  constexpr Duration kFirstMinute = std::chrono::minutes(1);
  if (waited < kFirstMinute || interval >= max) return std::min(interval, max);
  // One more second of pause for every 20 s of waiting beyond the first minute.
  return std::min(max, interval + (waited - kFirstMinute) / 20);
}

}  // namespace dbform
