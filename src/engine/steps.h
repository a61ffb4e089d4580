#pragma once
// The operation steps of a run (engine/apply_run.h): for each type of step (OpType), whether it
// needs a call, what it journals before the call, what it sends, and how its answer is checked and
// recorded. One row per type (Pulumi's step executor has the shape): the run's one loop takes
// every step through the same journal, send and answer, and what differs lives in the row, so
// that a new call is a row, not a case in five switches. The steps act on the run's records
// through the run (its only writer), and only when its dispatch or its watch says so.
#include <string>

#include <nlohmann/json.hpp>

#include "engine/jobs.h"
#include "engine/operations.h"
#include "engine/work_queue.h"

namespace dbform::scheduling {

class ApplyRun;

class Steps {
 public:
  explicit Steps(ApplyRun& run) : run_(run) {}

  // --- What the dispatch asks of a ready operation's row ---------------------------------------

  // Whether it sends a call now.
  bool needs_call(size_t o) { return (this->*row(o).needs_call)(o); }
  // What it does when it needs no call (watched until READY, a change recorded as shown, done).
  void without_call(size_t o) { (this->*row(o).without_call)(o); }
  // What it records before its call is sent (a create's intent, a pending call). False: it cannot
  // be sent (and failed or was left).
  bool journal(size_t o) {
    auto journal = row(o).journal;  // none: nothing more to record
    return !journal || (this->*journal)(o);
  }
  // Undoes the journal of a call that was never sent because the journal could not be saved.
  void unjournal(size_t o) {
    if (auto unjournal = row(o).unjournal) (this->*unjournal)(o);
  }
  // Hands its call to a worker.
  void send(WorkQueue<Outcome>& workers, size_t o) { (this->*row(o).send)(workers, o); }
  // Checks the call's answer and records what it learned.
  void handle(size_t o, const Outcome& out) { (this->*row(o).handle)(o, out); }

  // --- What the watch asks of a step ------------------------------------------------------------

  // Whether PAUSED is what the operation may find: the service is declared paused, or the plan
  // starts it (a start, and the watch before it), or this is its stop.
  bool expects_pause(size_t o);
  bool shows_change(size_t o, const ResourceRecord& rec);
  // A call's change is made: the settings it brings about are recorded as set (and as observed),
  // and it is pending no more.
  void record_call(size_t o);
  // Why an operation cannot go: `need` failed.
  std::string blocked_reason(size_t o, size_t need);

 private:
  struct Row {
    bool (Steps::*needs_call)(size_t o);
    void (Steps::*without_call)(size_t o);
    bool (Steps::*journal)(size_t o);
    void (Steps::*unjournal)(size_t o);
    void (Steps::*send)(WorkQueue<Outcome>& workers, size_t o);
    void (Steps::*handle)(size_t o, const Outcome& out);
  };
  const Row& row(size_t o) const;

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
  void complete(size_t o);
  bool journal_create(size_t o);
  bool journal_call(size_t o);
  bool journal_delete(size_t o);
  void drop_pending_call(size_t o);
  void send_create(WorkQueue<Outcome>& workers, size_t o);
  void send_password(WorkQueue<Outcome>& workers, size_t o);
  void send_call(WorkQueue<Outcome>& workers, size_t o);
  void send_delete(WorkQueue<Outcome>& workers, size_t o);
  void handle_create(size_t o, const Outcome& out);
  void handle_password(size_t o, const Outcome& out);
  // The answer to an update call: the service is then watched until READY with the change, which
  // the run's watch records; or its failure.
  void handle_call(size_t o, const Outcome& out);
  void handle_delete(size_t o, const Outcome& out);
  void record_intent(const PlannedAction& a);
  // The intent of a create that was never sent: a new record goes (nothing exists; a replaced one
  // is deleted by then), an adopt's record stays (its earlier create may have happened).
  void forget_unsent_intent(size_t o);
  // Whether what an adoption found differs from the create's declared fields.
  static bool differs_from_declared(const ResourceRecord& rec);
  // The body as sent: an attachment's VPC id, unknown when the plan was made, is the recorded one.
  nlohmann::json call_body(const PlannedAction& a, const PlannedCall& call) const;
  // --no-wait: an answered call ends its resource's part of the run. The rest of its chain needs it
  // READY, so it is left for the next apply, with what waits for it (the deletes, a fork of it).
  void end_unconfirmed(size_t o);
  const PlannedAction& action_of(size_t o) const;
  ResourceRecord& record_of(size_t o);
  const PlannedCall& call_of(size_t o) const;

  ApplyRun& run_;
};

}  // namespace dbform::scheduling
