#pragma once
// How often a watcher asks for a resource's status (SPEC section 6).
#include "util/clock.h"

namespace dbform {

struct PollSchedule {
  // Every `interval` for the first minute of a wait, so that READY is seen within one interval;
  // after that the pause grows slowly to at most `max`, so that a service that takes long costs few
  // calls. A fixed --poll-interval sets both.
  Duration interval{1000};
  Duration max{10'000};
  // The pause before the next status check of a resource waited for `waited` so far.
  Duration after(Duration waited) const;
};

}  // namespace dbform
