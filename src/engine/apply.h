#pragma once
// The apply engine: executes a plan against the API, recording every step in the state. What it is
// told and gives back (ApplyOptions, ApplyResult) and what it reports (events) are plan/run.h's and
// plan/events.h's.
//
// Safety rules (docs/safety.md): an intent (create_pending) is written before each create call and
// the result right after it; only the engine's main thread touches the state, workers only talk to
// the API. A create whose outcome is unknown is resolved by listing the project's resources by name
// before anything is sent again.
#include <map>
#include <string>
#include <vector>

#include "api/client.h"
#include "api/project_key.h"
#include "plan/events.h"
#include "plan/model.h"
#include "plan/run.h"
#include "state/store.h"

namespace dbform {

// GET /auth/info once per project, with that project's key, `parallelism` projects at a time.
// Throws Error listing every rejected key and every key that belongs to another project (in the
// projects' order); returns the passes.
std::vector<PreflightPass> preflight_keys(ApiClient& api, const std::vector<std::string>& projects,
                                          const std::map<std::string, ProjectKey>& keys, int parallelism);

class ApplyEngine {
 public:
  ApplyEngine(ApiClient& api, StateStore& store, Clock& clock, EventSink& events, ApplyOptions options);

  // preflight_keys() of the projects with work, each pass reported as an event.
  void preflight(const Plan& plan, const std::map<std::string, ProjectKey>& keys);
  // Reports the passes of a preflight made earlier in the run (before a refresh).
  void report_preflight(const std::vector<PreflightPass>& passed);

  // Runs the plan's create, adopt and wait actions; conflicts must have been refused before.
  // `state` is the state the plan was made from; it is written through `store` after every step,
  // and every result is saved before `events` hears of it. Before the first create in a project,
  // its resources are listed: a create whose name exists unrecorded fails by name, unsent.
  // `settled`: records the caller changed in `state` from what it read before the run (an unknown
  // create settled by name: adopted as found, or forgotten), saved with the run's first write, as
  // its imports are, so that the run stays the one writer of the state.
  ApplyResult apply(const Plan& plan, const std::map<std::string, ProjectKey>& keys, State& state,
                    const std::vector<std::string>& settled = {});

 private:
  ApiClient& api_;
  StateStore& store_;
  Clock& clock_;
  EventSink& events_;
  ApplyOptions options_;
};

// The projects a plan needs to call (those with create, adopt, wait or update actions), in plan order.
std::vector<std::string> projects_with_work(const Plan& plan);

}  // namespace dbform
