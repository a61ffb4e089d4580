#pragma once
#include <iostream>
#include <string>

#include "cli/context.h"

namespace dbform::cli {

struct ApplyFlowOptions {
  ManifestOptions manifests;
  // -f, --target, --prune, --max-deletes or --no-refresh on the command line: refused with a plan
  // file, which was made with its own.
  std::vector<std::string> planning_flags_given;
  StateOptions state;
  std::string plan_file;  // a plan saved by `plan --out`: applied exactly as saved, without asking
  bool json = false;      // one JSON object per line on stdout (render_events.h)
  bool auto_approve = false;
  WaitOptions wait;
  bool no_wait = false;
  bool wait_connectable = false;  // after READY, until each changed service accepts connections
  PlanningOptions planning;  // without a plan file: how the plan is made
  PolicyOptions policy;      // the rules the plan is checked against (a saved plan: the same rules)
};

// Plan (or load and check a saved plan), confirm, preflight, apply, report. Returns the exit code
// (0 done, 1 failures or conflicts, 130 stopped by a signal); throws Error for anything that
// stopped it before the first create.
int run_apply(const ApplyFlowOptions& opts, std::ostream& out);

}  // namespace dbform::cli
