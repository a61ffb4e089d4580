#pragma once
// What a service status means to a watcher (SPEC section 6), and how often to ask.
#include <string>

#include "util/clock.h"

namespace dbform {

enum class StatusVerdict { Ready, Paused, KeepWaiting, Failed };

// READY is done; PAUSED is done where a pause is expected (the watcher decides); DELETING and
// DELETED fail; everything else (QUEUED, CONFIGURING, UNSTABLE, PAUSING, RESUMING, UPGRADING,
// OPTIMIZING, unknown or missing) keeps waiting.
StatusVerdict classify_status(const std::string& status);

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
