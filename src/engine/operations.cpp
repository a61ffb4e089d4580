#include "engine/operations.h"

#include <functional>
#include <map>
#include <string>

namespace dbform {

namespace {

bool has_work(const PlannedAction& a, bool wait) {
  switch (a.action) {
    case Action::Create:
    case Action::Adopt:
    case Action::Update:
    case Action::Delete: return true;
    case Action::Wait: return wait;
    default: return false;
  }
}

// The first operation of a resource's chain.
OpType first_of(const PlannedAction& a, const State& state) {
  if (a.action == Action::Create || a.action == Action::Adopt) return OpType::Create;
  if (a.action == Action::Delete) return OpType::Delete;
  // An update of a READY resource with no call left unanswered starts with its calls; anything
  // else (not READY, or a call of an earlier run whose answer is unknown) is watched until READY
  // first, and a call whose change shows by then is not sent again.
  const ResourceRecord* rec = state.find(a.address);
  const bool settled = a.action == Action::Update && rec && rec->is_settled() && rec->pending_call.is_null();
  return settled ? OpType::Password : OpType::Settle;
}

}  // namespace

std::string fork_source(const PlannedAction& a) {
  const nlohmann::json fork = a.after.is_object() ? a.after.value("fork", nlohmann::json()) : nlohmann::json();
  return fork.is_object() && fork.value("from", nlohmann::json()).is_string()
             ? resource_address(a.project_id, ResourceKind::Service, fork["from"].get<std::string>())
             : "";
}

namespace {

// The services' actions with the source of every fork before the fork (a circle, which the
// manifest's checks refuse, keeps its order).
std::vector<size_t> sources_first(const Plan& plan, const std::vector<size_t>& services) {
  std::map<std::string, size_t> position;
  for (size_t i : services) position[plan.actions[i].address] = i;
  std::vector<size_t> out;
  std::map<size_t, int> state;  // 1: being placed, 2: placed
  std::function<void(size_t)> place = [&](size_t i) {
    if (state[i]) return;
    state[i] = 1;
    if (auto source = position.find(fork_source(plan.actions[i])); source != position.end()) place(source->second);
    state[i] = 2;
    out.push_back(i);
  };
  for (size_t i : services) place(i);
  return out;
}

}  // namespace

OperationGraph operations_of(const Plan& plan, const State& state, bool wait) {
  OperationGraph graph;
  auto& ops = graph.ops;
  auto add = [&](OpType type, size_t action, size_t call, std::vector<size_t> needs) {
    ops.push_back({type, action, call, std::move(needs)});
    return ops.size() - 1;
  };
  std::map<std::string, size_t> vpc_creates;  // VPC address -> its create
  auto vpc_create = [&](const std::string& project_id, const std::string& vpc, std::vector<size_t>& needs) {
    auto found = vpc_creates.find(resource_address(project_id, ResourceKind::Vpc, vpc));
    if (found != vpc_creates.end()) needs.push_back(found->second);
  };
  // VPCs first, so that what waits for a VPC's create comes after it; deletes last.
  std::vector<size_t> order[3];
  for (size_t i = 0; i < plan.actions.size(); ++i) {
    const PlannedAction& a = plan.actions[i];
    if (!has_work(a, wait)) continue;
    graph.actions.push_back(i);
    order[a.action == Action::Delete ? 2 : a.kind == ResourceKind::Vpc ? 0 : 1].push_back(i);
  }
  for (size_t i : order[0]) {  // a VPC has no password; its calls follow its create
    const PlannedAction& a = plan.actions[i];
    const OpType first = first_of(a, state);
    std::vector<size_t> needs;
    if (first != OpType::Password) needs = {add(first, i, 0, {})};
    if (first == OpType::Create) vpc_creates[a.address] = needs.front();
    for (size_t c = 0; c < a.calls.size(); ++c) needs = {add(OpType::Call, i, c, std::move(needs))};
  }
  std::map<std::string, size_t> last_of;  // service address -> its last operation
  for (size_t i : sources_first(plan, order[1])) {
    const PlannedAction& a = plan.actions[i];
    std::vector<size_t> needs;
    const OpType first = first_of(a, state);
    if (first != OpType::Password) {
      if (first == OpType::Create && a.after.value("vpc", nlohmann::json()).is_string())
        vpc_create(a.project_id, a.after["vpc"].get<std::string>(), needs);
      if (const std::string source = fork_source(a); first == OpType::Create && !source.empty())
        if (auto found = last_of.find(source); found != last_of.end()) needs.push_back(found->second);
      needs = {add(first, i, 0, std::move(needs))};
    }
    needs = {add(OpType::Password, i, 0, std::move(needs))};
    for (size_t c = 0; c < a.calls.size(); ++c) {
      if (a.calls[c].call == "attachToVPC" && !a.calls[c].vpc.empty()) vpc_create(a.project_id, a.calls[c].vpc, needs);
      needs = {add(OpType::Call, i, c, std::move(needs))};
    }
    last_of[a.address] = needs.front();
  }
  if (order[2].empty()) return graph;
  std::vector<size_t> everything(ops.size());
  for (size_t op = 0; op < ops.size(); ++op) everything[op] = op;
  const size_t barrier = add(OpType::Barrier, kNoAction, 0, std::move(everything));
  std::map<std::string, std::vector<size_t>> service_deletes;  // project -> its service deletes
  for (size_t i : order[2])
    if (plan.actions[i].kind == ResourceKind::Service)
      service_deletes[plan.actions[i].project_id].push_back(add(OpType::Delete, i, 0, {barrier}));
  for (size_t i : order[2]) {
    if (plan.actions[i].kind != ResourceKind::Vpc) continue;
    std::vector<size_t> needs = service_deletes[plan.actions[i].project_id];
    needs.push_back(barrier);
    add(OpType::Delete, i, 0, std::move(needs));
  }
  return graph;
}

}  // namespace dbform
