#pragma once
// The plan is plain data: a pure function of (manifest, state). Renderers print it, the apply
// engine executes it, so plan and apply cannot disagree.
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "manifest/model.h"

namespace dbform {

enum class Action {
  Create,    // declared, not recorded
  NoOp,      // declared, recorded, same settings, ready
  Wait,      // declared, recorded, created but not yet READY
  Adopt,     // recorded intent whose create outcome is unknown: look up by name, else create
  Conflict,  // declared and recorded with different settings: nothing is applied
  Orphan,    // recorded, no longer declared: reported, kept
};

const char* action_name(Action a);  // "create", "no-op", "wait", "adopt", "conflict", "orphan"

struct FieldChange {
  std::string field;
  nlohmann::json before;  // null when absent
  nlohmann::json after;   // null when absent
};

struct PlannedAction {
  Action action = Action::NoOp;
  ResourceKind kind = ResourceKind::Service;
  std::string address;
  std::string project_id;
  std::string name;
  std::string resource_id;  // recorded id (wait, no-op, conflict, orphan)
  std::string status;       // recorded status
  nlohmann::json before;    // recorded settings; null when not recorded
  nlohmann::json after;     // declared settings; null for orphans
  std::vector<FieldChange> changes;  // conflicts: every differing field
  std::string reason;       // why: conflicts and orphans say how to resolve
  Location location;        // where it is declared (none for orphans)
};

// Resources that exist in the API under a declared name although the state does not record them
// (a wrong --state path, a lost state, a `state rm`): address -> their ids. Found by a refresh; a
// declared resource with a namesake is never created beside it.
using Namesakes = std::map<std::string, std::vector<std::string>>;

struct PlanSummary {
  int create = 0, wait = 0, adopt = 0, noop = 0, conflict = 0, orphan = 0;
  bool has_changes() const { return create + wait + adopt > 0; }
};

// The counts of each action.
PlanSummary summarize(const std::vector<PlannedAction>& actions);

struct Plan {
  // Per project in manifest order; within a project VPCs before services; orphans last.
  std::vector<PlannedAction> actions;
  PlanSummary summary;
  std::string state_lineage;
  long long state_serial = 0;
  std::string manifest_digest;
};

}  // namespace dbform
