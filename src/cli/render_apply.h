#pragma once
// What `apply` tells its user, in one of two forms: text for people (the plan, then the live view
// on a terminal or a line per event otherwise, then endpoints and a summary), or with `--json` one
// JSON object per line on stdout and nothing else.
#include <memory>
#include <ostream>
#include <string>

#include "cli/context.h"
#include "engine/apply.h"
#include "plan/model.h"
#include "state/model.h"

namespace dbform::cli {

class ApplyOutput {
 public:
  virtual ~ApplyOutput() = default;
  // `saved_from`: the plan file it came from, "" for a plan made now.
  virtual void plan(const Plan& plan, const std::string& saved_from) = 0;
  // A line for people above the plan (e.g. that there is no state yet); JSON output leaves it out.
  virtual void note(const std::string& text) = 0;
  virtual void conflicts(const Plan& plan) = 0;  // the run stops: nothing can be applied
  virtual void nothing_to_do() = 0;
  virtual void cancelled() = 0;
  // Before the first call: where the engine's events go from here on.
  virtual EventSink& start(const Plan& plan) = 0;
  virtual void result(const Plan& plan, const State& state, const ApplyResult& result, int exit_code) = 0;
  // An error that ends the run (it is also printed on stderr by main).
  virtual void error(const std::string& message) = 0;
};

std::unique_ptr<ApplyOutput> make_apply_output(bool json, const Terminal& term, std::ostream& out);

}  // namespace dbform::cli
