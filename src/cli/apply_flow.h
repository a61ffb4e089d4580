#pragma once
#include <iostream>
#include <string>

#include "cli/context.h"

namespace dbform::cli {

struct ApplyFlowOptions {
  ManifestOptions manifests;
  StateOptions state;
  bool auto_approve = false;
  int parallelism = 10;
  std::string wait_timeout = "30m";
  std::string poll_interval = "10s";
  bool no_wait = false;
};

// Plan, confirm, preflight, apply, report. Returns the exit code (0 done, 1 failures, 130 stopped
// by a signal); throws Error for anything that stopped it before the first create.
int run_apply(const ApplyFlowOptions& opts, std::ostream& out);

}  // namespace dbform::cli
