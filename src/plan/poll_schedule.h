#pragma once
// How often a watcher asks for a resource's status: the pause between two
// checks (--poll-interval), and when a forecast says the next one is worth making. Beside the run's
// options (plan/run.h), which carry the schedule from the command line to the engine's watcher.
#include <optional>

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

// When a resource this run created is next worth looking at. Resources of one kind created in one
// run take about as long as each other to become READY, so the shortest time from a create's send
// to its READY seen so far (an upper bound of that one's provisioning time, above it by at most the
// pause before the look that saw it) tells when the others will be: a project whose last create's
// answer came back at A (after the API made it) is looked at A + that time, and not before unless
// its usual schedule says so. One that is not READY by then goes back to its usual schedule.
class ReadyForecast {
 public:
  // A resource created `since_send` ago was seen READY. True when that is the fastest yet.
  bool ready_after(Duration since_send);
  bool known() const { return fastest_.has_value(); }
  // The pause before looking at resources whose last create's answer came back at `last_answer`
  // and whose last status check was sent at `looked` (never: nothing): until that time, or none
  // when it has come and no check was sent since (a fresh forecast says they are due already, or
  // a check sent just before it came was answered after it); nothing while none has been seen
  // READY, or once a check was sent after it.
  std::optional<Duration> pause(Clock::TimePoint last_answer, Clock::TimePoint now,
                                std::optional<Clock::TimePoint> looked) const;
 private:
  std::optional<Duration> fastest_;
};

}  // namespace dbform
