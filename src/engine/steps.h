#pragma once
// The operation steps of a run (engine/apply_run.h): one row per type of operation (OpType), each
// saying whether it needs a call, what it journals before the call, what it sends, how its answer
// is checked and recorded, and what it means when its resource is READY. Pulumi's step executor
// has the shape (one struct per step with its own Apply): the run's one loop takes every step
// through the same journal, send and answer, and what differs lives in the row, so that a new step
// is a row, not a case in five switches. The rows act on the run through its parts (RunContext).
#include <array>
#include <memory>
#include <string>

#include <nlohmann/json.hpp>

#include "engine/jobs.h"
#include "engine/run_context.h"
#include "engine/work_queue.h"

namespace dbform::scheduling {

// What the loop, the failure rule and the guards ask of a type of step without knowing which it is.
struct StepTraits {
  bool creates = false;  // it makes the resource: its wait teaches the forecast, the name guard checks it
  bool deletes = false;  // it takes the resource away: the state forgets it, no READY follows
  // Done during a stop when it needs no call (a settle needs a watch, which a stop does not start).
  bool runs_while_stopping = true;
  // Whether it needs a call is asked only once a worker is free for it (reading a call's effect
  // from the record for every waiting call at every round cost minutes on 30,000 calls).
  bool waits_for_room = false;
};

// What an operation claims of the API's names, which the name guard checks before it is sent.
enum class NameClaim { None, Create, Rename };

class Step {
 public:
  Step(RunContext& run, StepTraits traits) : traits(traits), run_(run) {}
  virtual ~Step() = default;
  Step(const Step&) = delete;
  Step& operator=(const Step&) = delete;

  const StepTraits traits;

  // --- What the dispatch asks of a ready operation ----------------------------------------------

  // Whether it sends a call now.
  virtual bool needs_call(size_t o) = 0;
  // What it does when it needs no call (watched until READY, a change recorded as shown, done).
  virtual void without_call(size_t o);
  // What it records before its call is sent (a create's intent, a pending call). False: it cannot
  // be sent (and failed or was left).
  virtual bool journal(size_t) { return true; }
  // Undoes the journal of a call that was never sent because the journal could not be saved.
  virtual void unjournal(size_t) {}
  // Hands its call to a worker.
  virtual void send(WorkQueue<Outcome>&, size_t) {}
  // Checks the call's answer and records what it learned.
  virtual void handle(size_t, const Outcome&) {}

  // --- What the watch asks of it ----------------------------------------------------------------

  // Its resource is READY (or PAUSED where that is expected): done, unless its change must show.
  virtual void on_ready(size_t o);
  // Whether PAUSED is what the operation may find: the service is declared paused, or the plan
  // starts it (a start, and the watch before it).
  virtual bool expects_pause(size_t o);

  // --- What the failure rule, --no-wait and the guards ask of it ---------------------------------

  // Why it cannot go: `need`, an operation of another resource, failed.
  virtual std::string blocked_reason(size_t o, size_t need);
  // Why it is left for the next apply: `left`, an operation of another resource, was (--no-wait).
  virtual std::string left_reason(size_t o, size_t left);
  // How messages name it ("its password", "`resize`").
  virtual std::string label(size_t) { return "it"; }
  // --no-wait answered an earlier step of its resource without watching it: whether it is done
  // all the same (it has nothing to send); otherwise it is left for the next apply.
  virtual bool done_unconfirmed(size_t) { return false; }
  virtual NameClaim claims_name(size_t) const { return NameClaim::None; }

 protected:
  // Why it is not created (`call` empty) or `call` is not sent: its dependency `need` failed.
  std::string needs_failed(size_t o, size_t need, const std::string& call);
  // Hands `job` to a worker; its outcome answers operation `o`.
  template <typename Job>
  static void submit(WorkQueue<Outcome>& workers, size_t o, Job job) {
    workers.submit([o, job = std::move(job)] {
      Outcome out = job();
      out.item = o;
      return out;
    });
  }

  RunContext& run_;
};

// One row per OpType, in its order.
class StepTable {
 public:
  explicit StepTable(RunContext& run);
  Step& of(size_t o) { return *rows_[static_cast<size_t>(run_.graph.ops[o].what.type)]; }

 private:
  RunContext& run_;
  std::array<std::unique_ptr<Step>, static_cast<size_t>(OpType::Barrier) + 1> rows_;
};

// The rows whose answers need more than a few lines (engine/create_step.cpp, engine/call_step.cpp).
std::unique_ptr<Step> create_step(RunContext& run);
std::unique_ptr<Step> call_step(RunContext& run);
std::unique_ptr<Step> objects_step(RunContext& run);  // engine/objects_step.cpp

}  // namespace dbform::scheduling
