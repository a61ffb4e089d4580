#pragma once
// A plan as the engine runs it: a graph of operations, each acting on one resource and waiting for
// what it needs (a service its VPC, a fork its source, a set its service, the delete of a VPC the
// deletes of what is in it). A pure function of the plan and the state it was made
// from, so that plan and apply cannot disagree; the engine keeps one ready queue over it (ninja's
// edges whose inputs are ready, Terraform's graph walk).
#include <cstddef>
#include <limits>
#include <string>
#include <vector>

#include "plan/model.h"
#include "state/model.h"

namespace dbform {

// The steps an operation can be; what each does in a run is its row in engine/steps.cpp.
enum class OpType {
  Settle,    // watch a recorded resource until READY (an earlier run stopped while it was changing)
  Create,    // create (or adopt by name) the resource; watched until READY
  Password,  // set a recorded pending password (nothing when none is recorded by then)
  Call,      // one update call of the plan (PlannedAction::calls[call]); watched until its change shows
  Delete,    // delete it (--prune); watched until gone
  // make a service's roles, schemas, extensions and grants (Operation::group) in one transaction
  // as its admin, once it is READY with its password recorded; no API call
  Objects,
  Barrier,   // acts on nothing: done when everything it needs is (the deletes wait for the rest)
};

constexpr size_t kNoAction = std::numeric_limits<size_t>::max();

struct Operation {
  OpType type = OpType::Settle;
  size_t action = kNoAction;  // index in Plan::actions; kNoAction for a barrier
  size_t call = 0;            // Call: index in the action's calls
  std::vector<size_t> needs;  // operations that must be done first (indices in the same list)
  // Objects: every action of the plan on the service's objects (declared, deleted; indices in
  // Plan::actions), `action` the first of them.
  std::vector<size_t> group;
};

struct OperationGraph {
  std::vector<size_t> actions;  // the plan's actions with work (indices in Plan::actions), in plan order
  std::vector<Operation> ops;
};

// The operations of the plan's create, adopt, update, delete and (when `wait`) wait actions: per
// resource a chain (settle or create, then its password where its kind has one, then its calls, one
// at a time); across resources, what its kind says it needs (ResourceType::needs: a service's
// create and attachment wait for its VPC's create, a fork's create for its source to be READY, and a
// call after which a resource is not READY (a stop) for what needs it READY);
// deletes wait for every other operation, and for the deletes of the kinds that go first in the
// same project (ResourceType::deleted_after). The objects inside a service's database are one
// operation per service (OpType::Objects), after the service's own (and before a stop of it);
// with the service deleted, after its delete (they go with it). Every `needs` index is smaller
// than the operation's own.
OperationGraph operations_of(const Plan& plan, const State& state, bool wait);

}  // namespace dbform
