#include "plan/targets.h"

#include <algorithm>
#include <set>
#include <unordered_map>

#include "plan/kinds.h"

namespace dbform {

void limit_to_targets(Plan& plan, const std::vector<std::string>& targets) {
  if (targets.empty()) return;
  std::unordered_map<std::string, const PlannedAction*> by_address;
  for (const auto& a : plan.actions) by_address.emplace(a.address, &a);
  std::set<std::string> kept;
  std::vector<std::string> todo = targets;
  while (!todo.empty()) {
    const std::string address = std::move(todo.back());
    todo.pop_back();
    auto found = by_address.find(address);
    if (found == by_address.end() || !kept.insert(address).second) continue;
    const PlannedAction& a = *found->second;
    for (const Dependency& d : type_of(a.kind).needs(a)) todo.push_back(d.address);
    if (const auto outer = parent_kind(a.kind))  // what it lives in, also when it goes
      todo.push_back(resource_address(a.project_id, *outer, a.parent));
    // What lives in it goes with it: its deletes first, and anything that refuses it (a protected
    // read replica set or peering) is kept to show why nothing is deleted.
    if (a.action == Action::Delete || a.action == Action::Conflict)
      for (const auto& child : plan.actions)
        if ((child.action == Action::Delete || child.action == Action::Conflict) && !child.parent.empty() && child.project_id == a.project_id &&
            parent_kind(child.kind) == a.kind && child.parent == a.name)
          todo.push_back(child.address);
    // An object inside a database takes along the deletes of those that name it (a role's grants,
    // a schema's), which the database would refuse to outlive it.
    if (a.action == Action::Delete && kind_form(a.kind).in_database)
      for (const auto& other : plan.actions)
        if (other.action == Action::Delete && kind_form(other.kind).in_database && other.parent == a.parent &&
            other.project_id == a.project_id)
          for (const Dependency& d : type_of(other.kind).needs(other))
            if (d.address == a.address) todo.push_back(other.address);
  }
  std::erase_if(plan.actions, [&](const PlannedAction& a) { return !kept.count(a.address); });
  plan.targets = targets;
  plan.summary = summarize(plan.actions);
}

}  // namespace dbform
