#pragma once
// The apply engine's run of one plan (ApplyRun): engine/apply_run.cpp (the loop, dispatch, saving,
// reporting and the failure rule) and engine/status_checks.cpp (the checks its watcher says are due
// sent, and what they saw recorded). Its parts: the rows of the operation steps (engine/steps.h:
// what each journals, sends, and records of its answer), the guards before the first call
// (engine/apply_guards.h), and the Watcher (engine/watcher.h: when and how each resource is looked
// at: timers, wait timeouts, the forecast, the probe). Internal to the engine: its public face is
// engine/apply.h.
#include <deque>
#include <limits>
#include <optional>
#include <set>
#include <string>
#include <unordered_map>
#include <vector>

#include "engine/apply.h"
#include "engine/jobs.h"
#include "engine/operations.h"
#include "engine/steps.h"
#include "engine/watcher.h"
#include "engine/work_queue.h"
#include "plan/kinds.h"

namespace dbform::scheduling {

// Hands an event to a renderer, which can never throw into the engine: its output is lost (a closed
// pipe, a full disk), the run goes on recording. False when the renderer failed.
bool deliver(EventSink& sink, const Event& event);

inline constexpr size_t kNone = std::numeric_limits<size_t>::max();

// One resource of the plan: its operations run one after another and share its watch (its slot
// in the run's Watcher has the same index).
struct Item {
  const PlannedAction* action = nullptr;
  std::vector<size_t> ops;  // its operations, in the order they run
  size_t watched = kNone;   // the operation its status checks answer to
  std::optional<Clock::TimePoint> first_call;  // when this run sent its first call for it
  bool counted_update = false;                 // counted once in ApplyResult::updated, however many calls
  bool failed = false;       // an operation of it failed (reported)
  // --no-wait: its last call was answered, not watched, or it was left for the next apply: no READY
  // to report.
  bool unconfirmed = false;
  bool password_set = false;  // this run set a new password on it
  // READY, and a connection to it was accepted (engine/connectable.h).
  bool connected = false;
};

// Blocked: something it needs is not done. Ready: queued. Sent: its call is on the way. Watching:
// its resource is watched until it shows the operation's effect. Left: not sent, for the next apply
// (--no-wait did not wait for what it needs).
enum class OpStep { Blocked, Ready, Sent, Watching, Done, Failed, Left };

struct Op {
  Operation what;
  size_t item = kNone;  // kNone for a barrier
  OpStep step = OpStep::Blocked;
  size_t unmet = 0;  // needs not done yet
  std::vector<size_t> dependants;
  int sends = 0;  // a call's sends
  // A call answered with success: watched until its change shows. Unset while a call whose answer
  // did not come (or said busy) is checked: its change, once READY, decides whether it goes again.
  bool awaiting = false;
  bool deleting = false;  // a delete accepted: watched until gone
};

inline bool over(const Op& op) { return op.step == OpStep::Done || op.step == OpStep::Failed || op.step == OpStep::Left; }

// How often one call is sent when its answers say the service was busy (409) or did not come.
inline constexpr int kMaxCallSends = 3;

// One execution of a plan: one ready queue over its operations (engine/operations.h), one
// dispatch that journals every call before it is sent, one row of steps per operation type
// (Steps), one failure rule (a failed operation fails what depends on it and nothing else), and a
// Watcher that says when each resource is looked at. The only writer of the state.
class ApplyRun {
 public:
  ApplyRun(ApiClient& api, StateStore& store, Clock& clock, EventSink& events, const ApplyOptions& options,
           const std::map<std::string, ProjectKey>& keys, State& state)
      : api_(api),
        store_(store),
        clock_(clock),
        events_(events),
        options_(options),
        keys_(keys),
        state_(state),
        steps_(*this),
        watcher_(clock, options.polls, options.wait_timeout) {}
  // `settled`: records the caller changed before the run (ApplyEngine::apply), saved with its first write.
  ApplyResult execute(const Plan& plan, const std::vector<std::string>& settled = {});

 private:
  // The rows of the steps, and the guards before the first call, act on the run's records and call
  // its failure rule (and the steps its watch).
  friend class Steps;
  friend class Guards;

  // How long the main thread waits before looking at the stop flag again.
  static constexpr Duration kStopCheck{250};
  static constexpr std::optional<Duration> kForever{};

  // --- The loop (engine/apply_run.cpp) ---------------------------------------------------------

  // The plan's operations, and the resources they act on.
  void build(const Plan& plan);
  // Waits until a result arrives or the next poll is due. Results are awaited in real time, polls
  // in the clock's time: when a slice passes with no result the clock is moved to its end (a real
  // clock is there already; a fake one catches up, so tests neither hang nor sleep).
  void wait_for_progress(WorkQueue<Outcome>& workers);
  // Records what the workers learned, in memory: the loop saves it (see execute). A job that
  // failed outright (no memory for its result) stops the run as a signal would.
  void apply_outcomes(WorkQueue<Outcome>& workers, std::vector<Outcome> outcomes);
  // An answer to its handler: a step's to its row, a status check's to the watch.
  void handle(Outcome& out);  // takes what it keeps out of `out`
  void make_ready(size_t o);
  // The one dispatch: starts every ready operation it can. One that needs no call starts at once
  // (a watch, a call whose change shows already); the calls, as many as workers are free for, are
  // journaled (a create's intent, a call or a delete as pending) in one write before any of them is
  // sent, and none is sent when that write fails. Unless `may_start` (a stop), only what needs
  // neither a call nor a watch is done.
  void dispatch(WorkQueue<Outcome>& workers, bool may_start = true);
  // Results reach the renderers only once they are saved (or the save failed and the caller keeps
  // them in a recovery file): a renderer that fails can never cost a record. A renderer's
  // exception never reaches the engine either: the output is lost, the recording goes on.
  void emit(Event event) { unreported_.push_back(std::move(event)); }
  void flush_events();
  bool stopping() const;
  // Done: what waited for it may go; a resource whose every operation is done is READY.
  void complete(size_t o);
  // Not sent, and not failed: left for the next apply, with what depends on it. `why` is reported
  // when not empty.
  void leave(size_t o, const std::string& why);
  // The one failure rule: a failed operation fails what depends on it (the rest of its resource's
  // chain, and what waited for it elsewhere), and nothing else. `why` is reported when not empty.
  void fail_op(size_t o, const std::string& why);
  void report_failure(Item& item, const std::string& why);
  bool unfinished(const Item& item) const;
  void ready(Item& item, const ResourceRecord& rec);
  // Gone: the state forgets it.
  void forget(size_t o);
  // After a job failed outright: what is unfinished fails with its reason. What was sent and not
  // recorded is what an interrupted run leaves: the next apply resolves it (creates by name).
  void fail_unfinished();
  // After a stop: lists what is unfinished. A stop that came when nothing was left changes nothing.
  void finish_interrupted();
  // A state that cannot be written stops the run like a signal: nothing new is started (above all
  // no call whose journal is not on disk); what is in flight is recorded in memory for the caller.
  void save();
  // Everything journaled so far folded into one document (and the polls' last answers with it).
  void compact();

  // --- Watching (engine/status_checks.cpp) -----------------------------------------------------

  // Sends the checks the watcher says are due.
  void send_checks(WorkQueue<Outcome>& workers);
  bool watching(const Item& item) const { return item.watched != kNone && ops_[item.watched].step == OpStep::Watching; }
  // READY, and now to be waited for until it accepts connections: checked at once, then again
  // after each refusal until the service's wait timeout.
  void start_connection_wait(Item& item, const ResourceRecord& rec);
  void handle_connection(size_t i, const Outcome& out);
  void handle_poll(size_t i, Outcome& out);
  void handle_poll_list(Outcome& out);
  void poll_failed(size_t i, const Outcome& out);
  // What a status check saw of the resource.
  void seen(size_t i, Shown&& shown);  // its raw answer moved into the record
  // What the status of the watched resource means for the operation it is watched for.
  void after_status(size_t i, ResourceRecord& rec);
  // Checked again after its pause, unless its wait timed out.
  void schedule_poll(size_t i, const ResourceRecord& rec);
  void watch_now(size_t i);
  void start_watch(size_t o, Clock::TimePoint at);
  // What events report: the time since this run's first call for the resource (0 without one).
  Duration since_first_call(const Item& item) const;

  // --- Shared -------------------------------------------------------------------------------

  // Where the action's resource lives, as its calls name it (its parent's id, once recorded).
  Scope scope_of(const PlannedAction& a) const { return dbform::scope_of(state_, a.project_id, a.kind, a.parent); }
  const std::string& key_of(const PlannedAction& a) const { return keys_.at(a.project_id).key; }
  Item& item_of(size_t o) { return items_[ops_[o].item]; }

  ApiClient& api_;
  StateStore& store_;
  Clock& clock_;
  EventSink& events_;
  const ApplyOptions& options_;
  const std::map<std::string, ProjectKey>& keys_;
  State& state_;

  std::vector<Item> items_;
  std::vector<Op> ops_;
  std::deque<size_t> ready_;    // operations whose needs are done, in the order they became so
  std::string worker_failure_;  // a job that failed outright: the run stops (see apply_outcomes)
  size_t sends_in_flight_ = 0;  // calls on the way (creates, updates, passwords, deletes), at most --parallelism
  Steps steps_;                 // what each type of operation journals, sends and records
  Watcher watcher_;             // when each resource is looked at next, and how
  std::set<std::string> changed_;  // addresses changed in memory since the last save
  std::vector<Event> unreported_;  // waiting for the save that records what they tell
  ApplyResult result_;
};

}  // namespace dbform::scheduling
