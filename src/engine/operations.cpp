#include "engine/operations.h"

#include <algorithm>
#include <functional>
#include <map>
#include <string>

#include "plan/database_objects.h"
#include "plan/kinds.h"

namespace dbform {

namespace {

constexpr size_t kNoCall = kBeforeCreate - 1;  // an operation no dependency names (settle, password)

bool has_work(const PlannedAction& a, bool wait) {
  switch (a.action) {
    case Action::Create:
    case Action::Adopt:
    case Action::Update:
    case Action::Delete:
    case Action::Replace: return true;
    case Action::Wait: return wait;
    default: return false;
  }
}

// The first operation of a resource's chain.
OpType first_of(const PlannedAction& a, const State& state) {
  if (a.action == Action::Create || a.action == Action::Replace || a.action == Action::Adopt) return OpType::Create;
  if (a.action == Action::Delete) return OpType::Delete;
  // An update of a READY resource with no call left unanswered starts with its calls; anything
  // else (not READY, or a call of an earlier run whose answer is unknown) is watched until READY
  // first, and a call whose change shows by then is not sent again.
  const ResourceRecord* rec = state.find(a.address);
  const bool settled = a.action == Action::Update && rec && rec->is_settled() && rec->pending_call.is_null();
  return settled ? OpType::Password : OpType::Settle;
}

// The actions with what each needs first before it (a circle, which the manifest's checks refuse,
// keeps its order).
std::vector<size_t> dependencies_first(const Plan& plan, const std::vector<size_t>& actions) {
  std::map<std::string, size_t> position;
  for (size_t i : actions) position[plan.actions[i].address] = i;
  std::vector<size_t> out;
  std::map<size_t, int> state;  // 1: being placed, 2: placed
  std::function<void(size_t)> place = [&](size_t i) {
    if (state[i]) return;
    state[i] = 1;
    const PlannedAction& a = plan.actions[i];
    for (const Dependency& d : type_of(a.kind).needs(a))
      if (auto found = position.find(d.address); found != position.end()) place(found->second);
    state[i] = 2;
    out.push_back(i);
  };
  for (size_t i : actions) place(i);
  return out;
}

// How many kinds' deletes go before this kind's (ResourceType::deleted_after), at most.
size_t delete_depth(ResourceKind kind) {
  size_t depth = 0;
  for (ResourceKind before : type_of(kind).deleted_after) depth = std::max(depth, 1 + delete_depth(before));
  return depth;
}

}  // namespace

OperationGraph operations_of(const Plan& plan, const State& state, bool wait) {
  OperationGraph graph;
  auto& ops = graph.ops;
  auto add = [&](OpType type, size_t action, size_t call, std::vector<size_t> needs) {
    ops.push_back({type, action, call, std::move(needs)});
    return ops.size() - 1;
  };
  std::vector<size_t> changes, deletes;
  // A service's objects: every action on them (a no-op's object is made as declared in the same
  // transaction, which reads the catalogs first), one operation when any of them has work.
  std::map<std::string, std::vector<size_t>> objects;  // service address -> its objects' actions
  std::map<std::string, bool> objects_work;
  for (size_t i = 0; i < plan.actions.size(); ++i) {
    const PlannedAction& a = plan.actions[i];
    if (!kind_form(a.kind).in_database) continue;
    const std::string service = service_address_of(a);
    if (a.action == Action::Create || a.action == Action::Update || a.action == Action::Delete ||
        a.action == Action::NoOp)
      objects[service].push_back(i);
    if (a.action == Action::Create || a.action == Action::Update || a.action == Action::Delete)
      objects_work[service] = true;
  }
  std::erase_if(objects, [&](const auto& entry) { return !objects_work.count(entry.first); });
  for (size_t i = 0; i < plan.actions.size(); ++i) {
    const PlannedAction& a = plan.actions[i];
    if (kind_form(a.kind).in_database) {
      auto group = objects.find(service_address_of(a));
      if (group != objects.end() && group->second.front() == i) graph.actions.push_back(i);
      continue;
    }
    if (!has_work(a, wait)) continue;
    graph.actions.push_back(i);
    (a.action == Action::Delete ? deletes : changes).push_back(i);
  }
  auto add_objects = [&](const std::vector<size_t>& group, std::vector<size_t> needs) {
    const size_t op = add(OpType::Objects, group.front(), 0, std::move(needs));
    ops[op].group = group;
    return op;
  };
  std::map<std::string, size_t> created, last;  // address -> its create, its last operation
  // A call after which the resource is not READY goes after everything that needs it READY.
  struct Unready {
    size_t action, call;
    std::vector<size_t> needs;
  };
  std::map<std::string, Unready> unready;  // address -> its unready call, not yet added
  for (size_t i : dependencies_first(plan, changes)) {
    const PlannedAction& a = plan.actions[i];
    const ResourceType& type = type_of(a.kind);
    const std::vector<Dependency> deps = type.needs(a);
    std::vector<size_t> needs;
    auto wait_for = [&](size_t call) {
      for (const Dependency& d : deps) {
        const auto& done = d.settled ? last : created;
        if (auto found = done.find(d.address); d.call == call && found != done.end()) needs.push_back(found->second);
      }
    };
    // Once added, an operation that needs another resource READY holds back that one's unready call.
    auto added = [&](OpType op_type, size_t call) {
      const size_t op = add(op_type, i, op_type == OpType::Call ? call : 0, std::move(needs));
      for (const Dependency& d : deps)
        if (auto later = unready.find(d.address); d.settled && d.call == call && later != unready.end())
          later->second.needs.push_back(op);
      needs = {op};
      return op;
    };
    if (a.action == Action::Replace) added(OpType::Delete, kNoCall);  // then created again
    if (const OpType first = first_of(a, state); first != OpType::Password) {
      if (first == OpType::Create) wait_for(kBeforeCreate);
      const size_t op = added(first, first == OpType::Create ? kBeforeCreate : kNoCall);
      if (first == OpType::Create) created[a.address] = op;
    }
    if (type.has_password) added(OpType::Password, kNoCall);
    for (size_t c = 0; c < a.calls.size(); ++c) {
      if (a.calls[c].call == type.unready_call && c + 1 == a.calls.size()) {
        unready[a.address] = {i, c, needs};
        break;
      }
      wait_for(c);
      added(OpType::Call, c);
    }
    if (!needs.empty()) last[a.address] = needs.front();  // READY from here on
  }
  std::map<std::string, size_t> delete_of;  // service address -> the plan's delete of it
  for (size_t i : deletes) delete_of[plan.actions[i].address] = i;
  std::vector<const std::vector<size_t>*> after_deletes;  // the objects of services deleted
  for (const auto& [service, group] : objects) {
    if (delete_of.count(service)) {
      after_deletes.push_back(&group);
      continue;
    }
    std::vector<size_t> needs;
    if (auto found = last.find(service); found != last.end()) needs.push_back(found->second);
    const size_t op = add_objects(group, std::move(needs));
    if (auto later = unready.find(service); later != unready.end()) later->second.needs.push_back(op);
  }
  for (auto& [address, later] : unready) add(OpType::Call, later.action, later.call, std::move(later.needs));
  if (deletes.empty()) return graph;
  std::vector<size_t> everything(ops.size());
  for (size_t op = 0; op < ops.size(); ++op) everything[op] = op;
  const size_t barrier = add(OpType::Barrier, kNoAction, 0, std::move(everything));
  std::stable_sort(deletes.begin(), deletes.end(), [&](size_t x, size_t y) {
    return delete_depth(plan.actions[x].kind) < delete_depth(plan.actions[y].kind);
  });
  std::map<std::pair<std::string, ResourceKind>, std::vector<size_t>> deletes_of;  // project, kind -> deletes
  std::map<std::string, size_t> delete_op;  // address -> its delete
  for (size_t i : deletes) {
    const PlannedAction& a = plan.actions[i];
    std::vector<size_t> needs;
    for (ResourceKind before : type_of(a.kind).deleted_after) {
      const auto& first = deletes_of[{a.project_id, before}];
      needs.insert(needs.end(), first.begin(), first.end());
    }
    needs.push_back(barrier);
    deletes_of[{a.project_id, a.kind}].push_back(add(OpType::Delete, i, 0, std::move(needs)));
    delete_op[a.address] = ops.size() - 1;
  }
  for (const std::vector<size_t>* group : after_deletes) {
    add_objects(*group, {delete_op.at(service_address_of(plan.actions[group->front()]))});
  }
  return graph;
}

}  // namespace dbform
