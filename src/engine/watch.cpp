#include "engine/watch.h"

#include <algorithm>

#include "state/model.h"

namespace dbform {

StatusVerdict classify_status(const std::string& status) {
  if (status == "READY") return StatusVerdict::Ready;
  if (status == "PAUSED") return StatusVerdict::Paused;
  if (is_failed_status(status)) return StatusVerdict::Failed;
  return StatusVerdict::KeepWaiting;
}

Duration PollSchedule::after(Duration waited) const {
  constexpr Duration kFirstMinute = std::chrono::minutes(1);
  if (waited < kFirstMinute || interval >= max) return std::min(interval, max);
  // One more second of pause for every 20 s of waiting beyond the first minute.
  return std::min(max, interval + (waited - kFirstMinute) / 20);
}

}  // namespace dbform
