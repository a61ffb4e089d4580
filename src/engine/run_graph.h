#pragma once
// The graph of one apply run (ninja's Plan beside its Builder): the plan's resources (items), the
// operations that act on them, each waiting for what it needs, and the queue of those whose needs
// are done. It never calls the API and never touches the state: the run asks it what may go and
// tells it what is over.
#include <cstddef>
#include <deque>
#include <limits>
#include <optional>
#include <vector>

#include "engine/operations.h"
#include "util/clock.h"

namespace dbform::scheduling {

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

class RunGraph {
 public:
  // The operations of `graph` (operations_of the plan), and the resources they act on.
  void build(const Plan& plan, OperationGraph graph);

  std::vector<Item> items;
  std::vector<Op> ops;
  const Plan* plan = nullptr;  // the plan built from

  Item& item_of(size_t o) { return items[ops[o].item]; }
  const PlannedAction& action_of(size_t o) const { return *items[ops[o].item].action; }
  size_t slot_of(const Item& item) const { return static_cast<size_t>(&item - items.data()); }

  // Queued: its needs are done (or it needs nothing).
  void make_ready(size_t o);
  // Queues every operation that needs nothing.
  void queue_unblocked();
  // The first queued operation; none when the queue is empty.
  std::optional<size_t> next_ready();
  // Queued again, in front of what becomes ready later (no worker was free for their calls).
  void requeue(std::deque<size_t> later);
  bool has_ready() const { return !ready_.empty(); }
  // Done: what waited only for it is queued, and its resource's watch answers to it no more.
  void done(size_t o);
  bool unfinished(const Item& item) const;

 private:
  std::deque<size_t> ready_;  // operations whose needs are done, in the order they became so
};

}  // namespace dbform::scheduling
