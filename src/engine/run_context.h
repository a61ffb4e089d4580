#pragma once
// The parts of one apply run (engine/apply_run.h), as each of them reaches the others: the graph
// of its operations, the ledger (the one writer of its state), the watcher, the progress rules,
// the watch desk and the step rows, with what they share (the API, the clock, the options and the
// projects' keys). Each part holds this and nothing of the run's loop.
#include <map>
#include <string>

#include "api/client.h"
#include "api/project_key.h"
#include "engine/apply.h"
#include "engine/ledger.h"
#include "engine/run_graph.h"
#include "plan/kinds.h"

namespace dbform::scheduling {

class Watcher;
class Progress;
class WatchDesk;
class StepTable;

struct RunContext {
  ApiClient& api;
  Clock& clock;
  const ApplyOptions& options;
  const std::map<std::string, ProjectKey>& keys;
  RunGraph& graph;
  Ledger& ledger;
  Watcher& watcher;
  Progress& progress;
  WatchDesk& desk;
  StepTable& steps;

  // Where the action's resource lives, as its calls name it (its parent's id, once recorded).
  Scope scope_of(const PlannedAction& a) const {
    return dbform::scope_of(ledger.state(), a.project_id, a.kind, a.parent);
  }
  const std::string& key_of(const PlannedAction& a) const { return keys.at(a.project_id).key; }
  // The record of the resource operation `o` acts on.
  ResourceRecord& record_of(size_t o) const { return ledger.record(graph.action_of(o).address); }
  const PlannedCall& call_of(size_t o) const { return graph.action_of(o).calls[graph.ops[o].what.call]; }
};

}  // namespace dbform::scheduling
