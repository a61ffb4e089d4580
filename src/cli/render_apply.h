#pragma once
// What `apply` tells its user, in one of two forms: text for people (the plan, then the live view
// on a terminal or a line per event otherwise, then endpoints and a summary), or with `--json` one
// JSON object per line on stdout and nothing else.
#include <memory>
#include <ostream>
#include <string>

#include "cli/context.h"
#include "ops/operation.h"
#include "plan/events.h"
#include "plan/model.h"
#include "plan/run.h"
#include "state/model.h"

namespace dbform::cli {

// The reporter of the apply operation (ops/operation.h), and what the command adds: the result and
// an error that ends the run.
class ApplyOutput : public ApplyReporter {
 public:
  // The refresh's warnings go to stderr in either form (scrubbed: they quote the API).
  void warning(const Diagnostic& warning) override;
  void no_state(const StateStore& store) override { note(no_state_note(store)); }
  // A line for people above the plan (e.g. that there is no state yet); JSON output leaves it out.
  virtual void note(const std::string& text) = 0;
  virtual void result(const Plan& plan, const State& state, const ApplyResult& result, int exit_code) = 0;
  // An error that ends the run (it is also printed on stderr by main).
  virtual void error(const std::string& message) = 0;
};

std::unique_ptr<ApplyOutput> make_apply_output(bool json, const Terminal& term, std::ostream& out);

}  // namespace dbform::cli
