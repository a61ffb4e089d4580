#pragma once
// How long a run's Watcher (engine/watcher.h) waits before it looks at a resource again: the usual
// schedule (PollSchedule), the longer pauses of quiet projects when many are watched, the probe and
// the READY forecast (ReadyForecast). It holds what the run's creates have taught and never looks at
// timers or the API: the watcher asks it for a pause and tells it what the checks saw.
//
// Polling scales with the projects (and parents) watched: with a few, each resource is checked
// every interval, so READY is seen within one. With more, every 25 of them allow one more interval
// between a project's rounds (up to 4): its first round comes after 2 intervals, and each round that
// shows no resource of it in a new status doubles the pause (a round that shows a change keeps it).
// Most rounds of many projects whose resources are still being made see nothing new, and each costs
// a call. PollSchedule's pause wins when it is longer.
//
// With 50 or more (a spread above 1), the first project to have a service created is the probe:
// until a service of that kind is seen READY it is looked at every quarter interval, and the
// others' creates wait (at least twice their longest pause); a probe whose create fails ends
// probing. From then on, the forecast says when a project's last create so far will be READY, and
// its round comes then if that is sooner than its usual one (a project still sending creates moves
// it on). Only creates sent by this run teach or use it.
#include <optional>
#include <string>
#include <unordered_map>
#include <utility>

#include "plan/poll_schedule.h"
#include "plan/kinds.h"
#include "util/clock.h"

namespace dbform::scheduling {

// One resource's current wait, as the pacing needs to know it.
struct Wait {
  std::string group;  // the resources one list answers for (one kind in one project, in one parent)
  ResourceKind kind{};
  Clock::TimePoint start{};   // the wait began (its call was sent, or its watch started)
  bool of_create = false;     // it waits for a create
  bool created_here = false;  // created (not adopted) by this run: its wait teaches the forecast
  // When its last status check was sent: what that check's answer shows is no older.
  std::optional<Clock::TimePoint> looked;
};

class Pacing {
 public:
  Pacing(Clock& clock, PollSchedule polls) : clock_(clock), polls_(polls) {}

  // A group of resources is watched (the spread grows with their number).
  void add_group() { ++groups_; }
  // The pause before the next status check of a resource in `wait`.
  Duration pause(const Wait& wait) const;
  // Whether the forecast tells of this wait (a create this run sent).
  static bool forecast_applies(const Wait& wait) { return wait.created_here && wait.of_create; }

  // This run's create was answered (not adopted); `ready`: READY in that answer.
  void created(const Wait& wait, bool ready);
  // A status check saw it READY.
  void saw_ready(const Wait& wait);
  // A create failed: a probe that taught nothing ends probing.
  void create_failed(const Wait& wait);
  // A list of the group came back; `quiet`: it showed none of them in a new status.
  void listed(const Wait& first, bool quiet);
  // Whether the forecast became sooner since the last call (timers due later are then brought forward).
  bool take_sooner() { return std::exchange(sooner_, false); }

 private:
  Duration::rep spread() const;
  Duration quiet_pause(const Wait& wait) const;
  bool probing(ResourceKind kind) const;
  bool is_probe(const Wait& wait) const;
  void learn_ready(const Wait& wait);

  Clock& clock_;
  const PollSchedule polls_;
  size_t groups_ = 0;
  std::unordered_map<std::string, Duration> quiet_for_;  // group -> the pause of a quiet project
  std::unordered_map<ResourceKind, ReadyForecast> forecasts_;
  std::unordered_map<std::string, Clock::TimePoint> last_create_;  // group -> its last create's answer
  std::unordered_map<ResourceKind, std::string> probe_;           // the probe's group, by kind
  bool sooner_ = false;
};

}  // namespace dbform::scheduling
