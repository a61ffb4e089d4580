#include <catch2/catch.hpp>

#include "engine/operations.h"

using namespace dbform;
using nlohmann::json;

namespace {

PlannedAction action(Action what, ResourceKind kind, const std::string& project, const std::string& name,
                     json after = json::object()) {
  PlannedAction a;
  a.action = what;
  a.kind = kind;
  a.project_id = project;
  a.name = name;
  a.address = resource_address(project, kind, name);
  a.after = std::move(after);
  return a;
}

ResourceRecord ready_service(const std::string& project, const std::string& name) {
  ResourceRecord r;
  r.kind = ResourceKind::Service;
  r.project_id = project;
  r.name = name;
  r.address = resource_address(project, ResourceKind::Service, name);
  r.id = "svc-" + name;
  r.status = "READY";
  return r;
}

// The operation of `type` acting on the plan's action `action` (and call `call`).
size_t find(const OperationGraph& g, OpType type, size_t action, size_t call = 0) {
  for (size_t o = 0; o < g.ops.size(); ++o)
    if (g.ops[o].type == type && g.ops[o].action == action && g.ops[o].call == call) return o;
  FAIL("no such operation");
  return 0;
}

}  // namespace

TEST_CASE("operations: a service waits for the create of its own VPC only, and its chain is create, password, calls") {
  Plan plan;
  plan.actions.push_back(action(Action::Create, ResourceKind::Vpc, "p1", "main"));
  plan.actions.push_back(action(Action::Create, ResourceKind::Service, "p1", "inside", {{"vpc", "main"}}));
  plan.actions[1].calls.push_back({"attachToVPC", {{"vpc_id", nullptr}}, "main", {{"vpc", "main"}}});
  plan.actions.push_back(action(Action::Create, ResourceKind::Service, "p1", "outside"));
  plan.actions.push_back(action(Action::Create, ResourceKind::Service, "p2", "other", {{"vpc", "main"}}));
  const OperationGraph g = operations_of(plan, new_state(), true);

  CHECK(g.actions == std::vector<size_t>{0, 1, 2, 3});
  const size_t vpc = find(g, OpType::Create, 0);
  const size_t inside = find(g, OpType::Create, 1);
  CHECK(g.ops[vpc].needs.empty());
  CHECK(g.ops[inside].needs == std::vector<size_t>{vpc});
  CHECK(g.ops[find(g, OpType::Password, 1)].needs == std::vector<size_t>{inside});
  CHECK(g.ops[find(g, OpType::Call, 1)].needs == std::vector<size_t>{find(g, OpType::Password, 1), vpc});
  CHECK(g.ops[find(g, OpType::Create, 2)].needs.empty());  // not in the VPC: it does not wait
  CHECK(g.ops[find(g, OpType::Create, 3)].needs.empty());  // another project's `main` is another VPC
  for (size_t o = 0; o < g.ops.size(); ++o)
    for (size_t need : g.ops[o].needs) CHECK(need < o);
}

TEST_CASE("operations: an update of a READY service starts with its calls, one not READY is watched first") {
  Plan plan;
  plan.actions.push_back(action(Action::Update, ResourceKind::Service, "p1", "ready"));
  plan.actions[0].calls.push_back({"setEnvironment", {{"environment", "PROD"}}, "", {{"environment_tag", "PROD"}}});
  plan.actions.push_back(action(Action::Update, ResourceKind::Service, "p1", "busy"));
  plan.actions.push_back(action(Action::Wait, ResourceKind::Service, "p1", "waited"));
  plan.actions.push_back(action(Action::NoOp, ResourceKind::Service, "p1", "same"));
  State state = new_state();
  state.upsert(ready_service("p1", "ready"));
  ResourceRecord busy = ready_service("p1", "busy");
  busy.pending_call = {{"call", "resize"}};  // an earlier run's call, answer unknown
  state.upsert(busy);

  const OperationGraph g = operations_of(plan, state, true);
  CHECK(g.actions == std::vector<size_t>{0, 1, 2});
  CHECK(g.ops[find(g, OpType::Password, 0)].needs.empty());
  CHECK(g.ops[find(g, OpType::Password, 1)].needs == std::vector<size_t>{find(g, OpType::Settle, 1)});
  CHECK(g.ops[find(g, OpType::Password, 2)].needs == std::vector<size_t>{find(g, OpType::Settle, 2)});
  // --no-wait: nothing is waited for.
  CHECK(operations_of(plan, state, false).actions == std::vector<size_t>{0, 1});
}

TEST_CASE("operations: deletes wait for everything else, and a VPC's delete for its project's service deletes") {
  Plan plan;
  plan.actions.push_back(action(Action::Create, ResourceKind::Service, "p1", "new"));
  plan.actions.push_back(action(Action::Delete, ResourceKind::Vpc, "p1", "old-net"));
  plan.actions.push_back(action(Action::Delete, ResourceKind::Service, "p1", "old"));
  plan.actions.push_back(action(Action::Delete, ResourceKind::Service, "p2", "elsewhere"));
  const OperationGraph g = operations_of(plan, new_state(), true);

  size_t barrier = g.ops.size();
  for (size_t o = 0; o < g.ops.size(); ++o)
    if (g.ops[o].type == OpType::Barrier) barrier = o;
  REQUIRE(barrier < g.ops.size());
  CHECK(g.ops[barrier].needs == std::vector<size_t>{find(g, OpType::Create, 0), find(g, OpType::Password, 0)});
  const size_t old = find(g, OpType::Delete, 2);
  CHECK(g.ops[old].needs == std::vector<size_t>{barrier});
  CHECK(g.ops[find(g, OpType::Delete, 3)].needs == std::vector<size_t>{barrier});
  CHECK(g.ops[find(g, OpType::Delete, 1)].needs == std::vector<size_t>{old, barrier});
}

TEST_CASE("operations: a fork waits for its source READY, and the source's stop waits for the fork") {
  Plan plan;
  plan.actions.push_back(action(Action::Create, ResourceKind::Service, "p1", "fork",
                                {{"fork", {{"from", "source"}, {"strategy", "NOW"}}}}));
  plan.actions.push_back(action(Action::Update, ResourceKind::Service, "p1", "source"));
  plan.actions[1].calls.push_back({"resize", {{"cpu_millis", "2000"}}, "", json::object()});
  plan.actions[1].calls.push_back({"stop", json(), "", {{"paused", true}}});
  State state = new_state();
  state.upsert(ready_service("p1", "source"));
  const OperationGraph g = operations_of(plan, state, true);

  const size_t resize = find(g, OpType::Call, 1, 0), fork = find(g, OpType::Create, 0), stop = find(g, OpType::Call, 1, 1);
  CHECK(g.ops[fork].needs == std::vector<size_t>{resize});
  CHECK(g.ops[stop].needs == std::vector<size_t>{resize, fork});
  for (size_t o = 0; o < g.ops.size(); ++o)
    for (size_t need : g.ops[o].needs) CHECK(need < o);
}

TEST_CASE("operations: a read replica set waits for its service READY, and deletes go set, service, peering, VPC") {
  Plan plan;
  plan.actions.push_back(action(Action::Create, ResourceKind::ReplicaSet, "p1", "reporting"));
  plan.actions[0].parent = "orders";
  plan.actions[0].address = resource_address("p1", ResourceKind::ReplicaSet, "reporting", "orders");
  plan.actions.push_back(action(Action::Create, ResourceKind::Service, "p1", "orders"));
  plan.actions.push_back(action(Action::Delete, ResourceKind::Vpc, "p1", "old-net"));
  plan.actions.push_back(action(Action::Delete, ResourceKind::Peering, "p1", "vpc-0abc"));
  plan.actions[3].parent = "old-net";
  plan.actions.push_back(action(Action::Delete, ResourceKind::Service, "p1", "old"));
  plan.actions.push_back(action(Action::Delete, ResourceKind::ReplicaSet, "p1", "old-set"));
  plan.actions[5].parent = "old";
  const OperationGraph g = operations_of(plan, new_state(), true);

  CHECK(g.ops[find(g, OpType::Create, 0)].needs == std::vector<size_t>{find(g, OpType::Password, 1)});
  const size_t set = find(g, OpType::Delete, 5), service = find(g, OpType::Delete, 4),
               peering = find(g, OpType::Delete, 3), vpc = find(g, OpType::Delete, 2);
  auto needs = [&](size_t o, size_t need) {
    const auto& n = g.ops[o].needs;
    return std::find(n.begin(), n.end(), need) != n.end();
  };
  CHECK(needs(service, set));
  CHECK(needs(vpc, service));
  CHECK(needs(vpc, peering));
  CHECK_FALSE(needs(peering, service));
  for (size_t o = 0; o < g.ops.size(); ++o)
    for (size_t need : g.ops[o].needs) CHECK(need < o);
}
