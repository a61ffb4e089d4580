// The graph of one apply run (engine/run_graph.h): items, operations and the ready queue.
#include "engine/run_graph.h"

#include <algorithm>
#include <unordered_map>
#include <utility>

namespace dbform::scheduling {

void RunGraph::build(const Plan& plan, OperationGraph graph) {
  this->plan = &plan;
  std::unordered_map<size_t, size_t> item_at;  // action -> item
  items.reserve(graph.actions.size());
  for (size_t i : graph.actions) {
    item_at[i] = items.size();
    items.emplace_back().action = &plan.actions[i];
  }
  ops.reserve(graph.ops.size());
  for (auto& operation : graph.ops) {
    const size_t o = ops.size();
    Op op;
    op.what = std::move(operation);
    if (op.what.action != kNoAction) {
      op.item = item_at.at(op.what.action);
      items[op.item].ops.push_back(o);
    }
    op.unmet = op.what.needs.size();
    for (size_t need : op.what.needs) ops[need].dependants.push_back(o);
    ops.push_back(std::move(op));
  }
}

void RunGraph::make_ready(size_t o) {
  ops[o].step = OpStep::Ready;
  ready_.push_back(o);
}

void RunGraph::queue_unblocked() {
  for (size_t o = 0; o < ops.size(); ++o)
    if (ops[o].step == OpStep::Blocked && ops[o].unmet == 0) make_ready(o);
}

std::optional<size_t> RunGraph::next_ready() {
  if (ready_.empty()) return std::nullopt;
  const size_t o = ready_.front();
  ready_.pop_front();
  return o;
}

void RunGraph::requeue(std::deque<size_t> later) {
  later.insert(later.end(), ready_.begin(), ready_.end());
  ready_ = std::move(later);
}

void RunGraph::done(size_t o) {
  Op& op = ops[o];
  op.step = OpStep::Done;
  for (size_t d : op.dependants)
    if (ops[d].step == OpStep::Blocked && --ops[d].unmet == 0) make_ready(d);
  if (op.item != kNone && items[op.item].watched == o) items[op.item].watched = kNone;
}

bool RunGraph::unfinished(const Item& item) const {
  return std::any_of(item.ops.begin(), item.ops.end(), [&](size_t o) { return !over(ops[o]); });
}

}  // namespace dbform::scheduling
