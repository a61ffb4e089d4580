#pragma once
// The apply engine's run of one plan (ApplyRun), shared by the files that hold its parts:
// engine/apply_run.cpp (the loop, dispatch, saving, reporting and the failure rule),
// engine/steps.cpp (the table of operation steps: what each journals, sends, and records of its
// answer), engine/status_checks.cpp (watching: polls, lists, timers, connection waits) and
// engine/apply_guards.cpp (what is recorded and refused before the first call). Internal to the
// engine: its public face is engine/apply.h.
#include <deque>
#include <limits>
#include <optional>
#include <queue>
#include <set>
#include <string>
#include <unordered_map>
#include <vector>

#include "engine/apply.h"
#include "engine/jobs.h"
#include "engine/operations.h"
#include "engine/work_queue.h"
#include "plan/kinds.h"

namespace dbform::scheduling {

// Hands an event to a renderer, which can never throw into the engine: its output is lost (a closed
// pipe, a full disk), the run goes on recording. False when the renderer failed.
bool deliver(EventSink& sink, const Event& event);

inline constexpr size_t kNone = std::numeric_limits<size_t>::max();

// One resource of the plan: its operations run one after another and share its watch.
struct Item {
  const PlannedAction* action = nullptr;
  std::vector<size_t> ops;  // its operations, in the order they run
  size_t watched = kNone;   // the operation its status checks answer to
  Clock::TimePoint watch_start{}, deadline{};
  std::optional<Clock::TimePoint> first_call;  // when this run sent its first call for it
  bool counted_update = false;                 // counted once in ApplyResult::updated, however many calls
  int polls = 0;
  int timer_generation = 0;  // a timer of an older generation was cancelled
  bool timer_live = false;   // a timer of the current generation is queued
  bool polling = false;      // a status check of it is in flight
  bool get_next = false;     // the last list did not show it (lists lag): ask for it by id next
  bool failed = false;       // an operation of it failed (reported)
  // --no-wait: its last call was answered, not watched, or it was left for the next apply: no READY
  // to report.
  bool unconfirmed = false;
  bool password_set = false;  // this run set a new password on it
  // READY, and waited for until it accepts connections (engine/connectable.h): its timer's checks
  // are connection attempts until `connect_deadline`; `connected` once one was accepted.
  bool connecting = false, connected = false;
  Clock::TimePoint connect_deadline{};
  bool created_here = false;  // created (not adopted) by this run: its wait teaches the forecast
  Clock::TimePoint timer_at{};  // when its live timer is due
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

// Polls have their own workers, so that creates, however many, cannot hold them up; and where
// several services of a project are waited for, one list answers for all of them.
inline constexpr int kPollLane = 4;
inline constexpr size_t kListAtLeast = 3;

class ApplyRun;

// What one step of engine/operations.h (OpType) does in a run: one row each (ApplyRun::row, in
// engine/steps.cpp). The loop runs every step through the same journal, send and answer.
struct StepRow {
  // Whether it sends a call now.
  bool (ApplyRun::*needs_call)(size_t o);
  // What it does when it needs no call (watched until READY, a change recorded as shown, done).
  void (ApplyRun::*without_call)(size_t o);
  // What it records before its call is sent (a create's intent, a pending call). False: it cannot
  // be sent (and failed or was left).
  bool (ApplyRun::*journal)(size_t o);
  // Undoes the journal of a call that was never sent because the journal could not be saved.
  void (ApplyRun::*unjournal)(size_t o);
  // Hands its call to a worker.
  void (ApplyRun::*send)(WorkQueue<Outcome>& workers, size_t o);
  // Checks the call's answer and records what it learned.
  void (ApplyRun::*handle)(size_t o, const Outcome& out);
};

// One execution of a plan: one ready queue over its operations (engine/operations.h), one
// dispatch that journals every call before it is sent, one row of steps per operation type, one
// failure rule (a failed operation fails what depends on it and nothing else). The only writer of
// the state.
class ApplyRun {
 public:
  ApplyRun(ApiClient& api, StateStore& store, Clock& clock, EventSink& events, const ApplyOptions& options,
           const std::map<std::string, ProjectKey>& keys, State& state)
      : api_(api), store_(store), clock_(clock), events_(events), options_(options), keys_(keys), state_(state) {}
  // `settled`: records the caller changed before the run (ApplyEngine::apply), saved with its first write.
  ApplyResult execute(const Plan& plan, const std::vector<std::string>& settled = {});

 private:
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
  void handle(const Outcome& out);
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
  // Why an operation cannot go: `need` failed.
  std::string blocked_reason(size_t o, size_t need);
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

  // --- Before the first call (engine/apply_guards.cpp) -----------------------------------------

  // The records of renames move to their new addresses, as the plan was made (saved with the first
  // write, before any call).
  void move_renamed(const Plan& plan);
  // Imports (their records put in the state by the caller from what its refresh read) and records
  // forgotten (`removed:`) are saved with the first write, before any call; neither calls the API.
  void record_imports_and_forgets(const Plan& plan);
  // Declared deletion protection, recorded at every apply (SPEC section 3): whatever else the run
  // did, every declared resource the state records carries it.
  void record_protection(const Plan& plan);
  // The name guard: a planned create or rename whose name exists unrecorded in the API is not sent.
  void guard_names(const Plan& plan);
  // A delete of an id that a declared resource's record holds too (a hand-edited state) is refused
  // before anything is sent: the state's reader refuses such a state, and this holds whatever
  // state the engine is given.
  void guard_deletes(const Plan& plan);
  // The address of what a delete of `a` would take with it that is protected: the resource itself
  // (its record, or its declaration in a replacement) or a resource living in it; "" for none.
  std::string protected_in(const PlannedAction& a) const;
  static std::string id_key(const ResourceRecord& r);

  // --- The steps (engine/steps.cpp) ------------------------------------------------------------

  static const StepRow& row(OpType type);
  const StepRow& step_of(size_t o) const { return row(ops_[o].what.type); }
  bool needs_call(size_t o) { return (this->*step_of(o).needs_call)(o); }
  template <typename Job>
  void submit(WorkQueue<Outcome>& workers, size_t o, Job job) {
    workers.submit([o, job = std::move(job)] {
      Outcome out = job();
      out.item = o;
      return out;
    });
  }
  // The rows' parts.
  bool always(size_t o);
  bool never(size_t o);
  bool password_pending(size_t o);
  bool call_not_shown(size_t o);
  void start_watching(size_t o);
  void record_shown_call(size_t o);
  bool journal_create(size_t o);
  bool journal_password(size_t o);
  bool journal_call(size_t o);
  bool journal_delete(size_t o);
  void forget_unsent_intent_of(size_t o);
  void keep_journal(size_t o);
  void drop_pending_call(size_t o);
  void send_create(WorkQueue<Outcome>& workers, size_t o);
  void send_password(WorkQueue<Outcome>& workers, size_t o);
  void send_call(WorkQueue<Outcome>& workers, size_t o);
  void send_delete(WorkQueue<Outcome>& workers, size_t o);
  void handle_create(size_t o, const Outcome& out);
  void handle_password(size_t o, const Outcome& out);
  // The answer to an update call: the service is then watched until READY with the change, which
  // after_status records; or its failure.
  void handle_call(size_t o, const Outcome& out);
  void handle_delete(size_t o, const Outcome& out);
  void record_intent(const PlannedAction& a);
  // The intent of a create that was never sent: a new record goes (nothing exists; a replaced one
  // is deleted by then), an adopt's record stays (its earlier create may have happened).
  void forget_unsent_intent(const PlannedAction& a);
  // Whether what an adoption found differs from the create's declared fields.
  static bool differs_from_declared(const ResourceRecord& rec);
  // Whether PAUSED is what the operation may find (SPEC section 6): the service is declared paused,
  // or the plan starts it (a start, and the watch before it), or this is its stop.
  bool expects_pause(size_t o);
  // A call's change is made: the settings it brings about are recorded as set (and as observed),
  // and it is pending no more.
  void record_call(size_t o);
  // The body as sent: an attachment's VPC id, unknown when the plan was made, is the recorded one.
  nlohmann::json call_body(const PlannedAction& a, const PlannedCall& call) const;
  bool shows_change(size_t o, const ResourceRecord& rec);
  // --no-wait: an answered call ends its resource's part of the run. The rest of its chain needs it
  // READY, so it is left for the next apply, with what waits for it (the deletes, a fork of it).
  void end_unconfirmed(size_t o);

  // --- Watching (engine/status_checks.cpp) -----------------------------------------------------

  // The due status checks: a list of the project when it answers for several services waited for
  // there (every one of them rides along, due or not), a GET by id otherwise.
  void dispatch_due_polls(WorkQueue<Outcome>& workers);
  bool watching(const Item& item) const { return item.watched != kNone && ops_[item.watched].step == OpStep::Watching; }
  void submit_connection_check(WorkQueue<Outcome>& workers, size_t i);
  // READY, and now to be waited for until it accepts connections: checked at once, then again
  // after each refusal until the service's wait timeout.
  void start_connection_wait(Item& item, const ResourceRecord& rec);
  void handle_connection(size_t i, const Outcome& out);
  void push_timer(size_t i, Clock::TimePoint at);
  // Its queued timer, if any, no longer counts (it is dropped when it reaches the top).
  void cancel_timer(size_t i);
  void drop_stale_timers();
  void handle_poll(size_t i, const Outcome& out);
  void handle_poll_list(const Outcome& out);
  // Polling that scales with the projects (and parents) watched: with a few, each resource is
  // checked every interval, so READY is seen within one. With more, every 25 of them allow one more
  // interval between a project's rounds (up to 4): its first round comes after 2 intervals, and each
  // round that shows no resource of it in a new status doubles the pause (a round that shows a
  // change keeps it). Most rounds of many projects whose resources are still being made see
  // nothing new, and each costs a call. PollSchedule's pause wins when it is longer.
  //
  // With 50 or more (a spread above 1), the first project to have a service created is the probe:
  // until a service of that kind is seen READY it is looked at every quarter interval, and the
  // others' creates wait (at least twice their longest pause); a probe whose create fails ends
  // probing. From then on, the forecast (ReadyForecast) says when a project's last create so far
  // will be READY, and its round comes then if that is sooner than its usual one (a project still
  // sending creates moves it on). Only creates sent by this run teach or use it.
  Duration::rep spread() const;
  Duration quiet_pause(const PlannedAction& a) const;
  // The pause before the next status check of a watched resource.
  Duration poll_pause(const Item& item) const;
  // Whether it waits for the create this run sent: what the forecast learns from and tells.
  bool forecast_applies(const Item& item) const;
  bool probing(ResourceKind kind) const;
  bool is_probe(const PlannedAction& a) const;
  void watch_created(size_t o);
  // A create of the probe failed before any READY was seen: probing ends.
  void end_probe_if_failed(size_t o);
  // The forecast became sooner: timers due later than it are brought forward.
  void retime_to_forecast();
  void back_off_if_quiet(const std::vector<size_t>& round,
                         const std::unordered_map<std::string, const Shown*>& listed);
  void poll_failed(size_t i, const Outcome& out);
  // What a status check saw of the resource.
  void seen(size_t i, const Shown& shown);
  // What the status of the watched resource means for the operation it is watched for.
  void after_status(size_t i, ResourceRecord& rec);
  void schedule_poll(size_t i, const ResourceRecord& rec);
  void watch_now(size_t i);
  void start_watch(size_t o, Clock::TimePoint at);
  // What events report: the time since this run's first call for the resource (0 without one).
  Duration since_first_call(const Item& item) const;
  Duration elapsed(const Item& item) const;

  // --- Shared -------------------------------------------------------------------------------

  // The resources one list answers for: one kind in one project (in one parent, for the kinds that
  // live in another).
  static std::string together(const PlannedAction& a);
  // Where the action's resource lives, as its calls name it (its parent's id, once recorded).
  Scope scope_of(const PlannedAction& a) const { return dbform::scope_of(state_, a.project_id, a.kind, a.parent); }
  const std::string& key_of(const PlannedAction& a) const { return keys_.at(a.project_id).key; }
  Item& item_of(size_t o) { return items_[ops_[o].item]; }
  ResourceRecord& record_of(size_t o) { return *state_.find(item_of(o).action->address); }
  const PlannedCall& call_of(size_t o) { return item_of(o).action->calls[ops_[o].what.call]; }

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
  struct Timer {
    Clock::TimePoint at;
    size_t item;
    int generation;
    bool operator>(const Timer& other) const { return at > other.at; }
  };
  std::priority_queue<Timer, std::vector<Timer>, std::greater<>> timers_;
  int live_timers_ = 0;
  size_t sends_in_flight_ = 0;  // calls on the way (creates, updates, passwords, deletes), at most --parallelism
  int polls_in_flight_ = 0;     // status checks, at most kPollLane
  // Resources of one kind in one project, watched by one list when several are (see together()).
  std::unordered_map<std::string, std::vector<size_t>> watched_together_;
  std::unordered_map<std::string, Duration> quiet_for_;  // together() -> the pause of a quiet project
  std::unordered_map<ResourceKind, ReadyForecast> forecasts_;
  std::unordered_map<std::string, Clock::TimePoint> last_create_;  // together() -> its last create's send
  std::unordered_map<ResourceKind, std::string> probe_;           // together() of the probe, by kind
  bool forecast_changed_ = false;
  std::set<std::string> changed_;  // addresses changed in memory since the last save
  std::vector<Event> unreported_;  // waiting for the save that records what they tell
  ApplyResult result_;
};

}  // namespace dbform::scheduling
