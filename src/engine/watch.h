#pragma once
// What a service status means to a watcher (SPEC section 6), and how often to ask.
#include <string>

#include "util/clock.h"

namespace dbform {

enum class StatusVerdict { Ready, KeepWaiting, Failed };

// READY is done; DELETING, DELETED, PAUSING and PAUSED fail; everything else (QUEUED, CONFIGURING,
// UNSTABLE, RESUMING, UPGRADING, OPTIMIZING, unknown or missing) keeps waiting.
StatusVerdict classify_status(const std::string& status);

struct PollSchedule {
  Duration initial{1000};
  Duration max{10'000};
  // Grows by half each poll from `initial` up to `max`: quick feedback for fast services, little
  // load for slow ones.
  Duration after(int polls_done) const;
};

}  // namespace dbform
