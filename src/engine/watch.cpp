#include "engine/watch.h"

#include <algorithm>

#include "state/model.h"

namespace dbform {

StatusVerdict classify_status(const std::string& status) {
  if (status == "READY") return StatusVerdict::Ready;
  if (is_failed_status(status)) return StatusVerdict::Failed;
  return StatusVerdict::KeepWaiting;
}

Duration PollSchedule::after(int polls_done) const {
  double d = static_cast<double>(initial.count());
  for (int i = 0; i < polls_done && d < static_cast<double>(max.count()); ++i) d *= 1.5;
  return std::min(max, Duration(static_cast<long long>(d)));
}

}  // namespace dbform
