#pragma once
// One execution of a plan, as its parts (ninja's Plan and Builder apart, Pulumi's SnapshotManager
// the one writer of the state):
//   engine/run_graph.h   the operations (engine/operations.h) and resources, and the ready queue;
//   engine/ledger.h      the one writer of the state: the round's one write, events after it, the
//                        journal floor, the fold, the result;
//   engine/steps.h       one row per type of operation: what it journals, sends and records;
//   engine/watch_desk.h  the status checks the Watcher (engine/watcher.h) says are due, and what
//                        a status means for the operation watched;
//   engine/progress.h    the one failure rule, and what is done, left or READY;
//   engine/apply_guards.h what is recorded and refused before the first call.
// What is left here is the loop: dispatch, wait, take in the answers. Internal to the engine: its
// public face is engine/apply.h.
#include <optional>
#include <string>
#include <vector>

#include "engine/apply.h"
#include "engine/jobs.h"
#include "engine/ledger.h"
#include "engine/progress.h"
#include "engine/run_context.h"
#include "engine/run_graph.h"
#include "engine/steps.h"
#include "engine/watch_desk.h"
#include "engine/watcher.h"
#include "engine/work_queue.h"

namespace dbform::scheduling {

class ApplyRun {
 public:
  ApplyRun(ApiClient& api, StateStore& store, Clock& clock, EventSink& events, const ApplyOptions& options,
           const std::map<std::string, ProjectKey>& keys, State& state)
      : clock_(clock),
        options_(options),
        keys_(keys),
        ledger_(store, state, events),
        watcher_(clock, options.polls, options.wait_timeout),
        run_{api, clock, options, keys, graph_, ledger_, watcher_, progress_, desk_, steps_},
        progress_(run_),
        desk_(run_),
        steps_(run_) {}
  ApplyRun(const ApplyRun&) = delete;
  ApplyRun& operator=(const ApplyRun&) = delete;
  // `settled`: records the caller changed before the run (ApplyEngine::apply), saved with its first write.
  ApplyResult execute(const Plan& plan, const std::vector<std::string>& settled = {});

 private:
  // How long the main thread waits before looking at the stop flag again.
  static constexpr Duration kStopCheck{250};
  static constexpr std::optional<Duration> kForever{};

  // The plan's operations and resources; every resource's project has a key (refused before
  // anything is sent, not as a crash half-way).
  void build(const Plan& plan);
  // Waits until a result arrives or the next poll is due. Results are awaited in real time, polls
  // in the clock's time: when a slice passes with no result the clock is moved to its end (a real
  // clock is there already; a fake one catches up, so tests neither hang nor sleep).
  void wait_for_progress(WorkQueue<Outcome>& workers);
  // Records what the workers learned, in memory: the loop saves it (see execute). A job that
  // failed outright (no memory for its result) stops the run as a signal would.
  void apply_outcomes(WorkQueue<Outcome>& workers, std::vector<Outcome> outcomes);
  // The one dispatch: starts every ready operation it can. One that needs no call starts at once
  // (a watch, a call whose change shows already); the calls, as many as workers are free for, are
  // journaled (a create's intent, a call or a delete as pending) in one write before any of them is
  // sent, and none is sent when that write fails. Unless `may_start` (a stop), only what needs
  // neither a call nor a watch is done.
  void dispatch(WorkQueue<Outcome>& workers, bool may_start = true);
  bool stopping() const;
  // After a job failed outright: what is unfinished fails with its reason. What was sent and not
  // recorded is what an interrupted run leaves: the next apply resolves it (creates by name).
  void fail_unfinished();
  // After a stop: lists what is unfinished. A stop that came when nothing was left changes nothing.
  void finish_interrupted();

  Clock& clock_;
  const ApplyOptions& options_;
  const std::map<std::string, ProjectKey>& keys_;
  RunGraph graph_;
  Ledger ledger_;
  Watcher watcher_;  // when each resource is looked at next, and how
  RunContext run_;   // the parts as each reaches the others (those below are made after it)
  Progress progress_;
  WatchDesk desk_;
  StepTable steps_;
  std::string worker_failure_;  // a job that failed outright: the run stops (see apply_outcomes)
  size_t sends_in_flight_ = 0;  // calls on the way (creates, updates, passwords, deletes), at most --parallelism
};

}  // namespace dbform::scheduling
