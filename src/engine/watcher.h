#pragma once
// The watching of one apply run (engine/apply_run.h): when each resource the run waits for is
// looked at next, and how (a GET, a list that answers for several, a connection attempt). It holds
// the timers, the wait timeouts, the pauses of quiet projects, the READY forecast and the probe;
// it never calls the API and never touches the state: the run sends the checks it names, records
// what they saw, and tells it what that was.
#include <functional>
#include <optional>
#include <queue>
#include <string>
#include <unordered_map>
#include <vector>

#include "engine/pacing.h"
#include "plan/poll_schedule.h"
#include "engine/timer_queue.h"
#include "plan/kinds.h"
#include "util/clock.h"

namespace dbform::scheduling {

// Status checks have their own workers, so that creates, however many, cannot hold them up; and
// where several resources of a kind in one project are waited for, one list answers for all of them.
inline constexpr int kPollLane = 4;
inline constexpr size_t kListAtLeast = 3;

// One check that is due: a connection attempt or a GET of one resource, or a list of its kind
// in its project that answers for every resource in `slots`.
struct Check {
  enum class Kind { Connect, Get, List };
  Kind kind = Kind::Get;
  std::vector<size_t> slots;  // the first is the one whose timer was due
};

// What an operation's wait is for.
enum class WaitFor { Status, Create, Connection };

// What a create or a status check taught the forecast and the probe: this run's create of it was
// answered (not adopted), READY in that answer or not; a status check saw it READY; a create of it
// failed (a probe that taught nothing ends probing).
enum class Lesson { CreatedReady, Created, SawReady, CreateFailed };

// What a connection attempt's answer means for the wait.
enum class ConnectVerdict { Accepted, Refused, TimedOut, TryAgain };

// The pauses between checks (quiet projects, the probe, the READY forecast): engine/pacing.h.
class Watcher {
 public:
  Watcher(Clock& clock, PollSchedule polls, Duration wait_timeout)
      : clock_(clock), polls_(polls), wait_timeout_(wait_timeout), pacing_(clock, polls) {}

  // One slot per resource of the run, in the run's order. `group`: the resources one list answers
  // for (one kind in one project, in one parent); `listed`: its kind has statuses to wait for.
  void add(const std::string& group, ResourceKind kind, bool listed);

  // --- The wait of one operation ----------------------------------------------------------------

  // An operation's wait begins (a create's or a delete's call, an update's answer, a settle): its
  // wait timeout counts from `at`; a wait for a create the forecast may tell. A wait for
  // connections (engine/connectable.h) begins once it is READY: checked at once, then again after
  // each refusal until its wait timeout (or a full one, counted from now, when that has passed).
  void start(size_t i, Clock::TimePoint at, WaitFor what);
  Clock::TimePoint deadline(size_t i) const { return slots_[i].deadline; }
  // How long the current wait has lasted.
  Duration elapsed(size_t i) const;

  // --- What the forecast and the probe learn ----------------------------------------------------

  void learn(size_t i, Lesson lesson);

  // --- Timers -----------------------------------------------------------------------------------

  // Checked again after its pause (never past its deadline); `now` is the moment the last check's
  // answer was taken in.
  void check_later(size_t i, Clock::TimePoint now);
  void check_now(size_t i);
  // Its queued timer, if any, no longer counts (it is dropped when it reaches the top).
  void cancel(size_t i);
  // No check is queued: nothing left to watch.
  bool idle() const { return timers_.idle(); }
  // When the next check is due, or nothing when none can be sent (none queued, or the lane full).
  std::optional<Clock::TimePoint> next_due();
  // The checks that are due now, as many as the lane has room for; each is counted in flight until
  // its answer is taken in. `watching`: whether a slot is still waited for (the run's operations
  // say): only those ride along in a list, and only those are brought forward to the forecast.
  std::vector<Check> due(const std::function<bool(size_t)>& watching);

  // --- Answers ----------------------------------------------------------------------------------

  // A GET of it came back.
  void answered(size_t i);
  // A list came back for `slots`; `quiet`: it showed none of them in a new status.
  void listed(const std::vector<size_t>& slots, bool quiet);
  // The last list did not show it (lists lag behind writes): its next check is a GET by id.
  void ask_by_id(size_t i) { slots_[i].get_next = true; }

  // --- Connections (engine/connectable.h) -------------------------------------------------------

  ConnectVerdict connection_answered(size_t i, bool accepted, bool transient);
  bool connecting(size_t i) const { return slots_[i].connecting; }

 private:
  struct Slot {
    Wait wait;  // what the pacing knows of its current wait
    Clock::TimePoint deadline{};
    bool polling = false;         // a check of it is in flight
    bool get_next = false;        // the last list did not show it: ask for it by id next
    // Checks are connection attempts until `connect_deadline`.
    bool connecting = false;
    Clock::TimePoint connect_deadline{};
  };
  // Its check is due at `at` (the timer it had is replaced).
  void push(size_t i, Clock::TimePoint at) { timers_.set(i, at); }
  // A status check of it is sent now.
  void mark_sent(Slot& s);
  // The forecast became sooner: timers due later than it are brought forward.
  void retime(const std::function<bool(size_t)>& watching);

  Clock& clock_;
  const PollSchedule polls_;
  const Duration wait_timeout_;
  std::vector<Slot> slots_;
  TimerQueue timers_;
  int in_flight_ = 0;  // checks sent and not answered, at most kPollLane
  // The slots of one group, watched by one list when several are.
  std::unordered_map<std::string, std::vector<size_t>> groups_;
  Pacing pacing_;
};

}  // namespace dbform::scheduling
