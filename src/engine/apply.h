#pragma once
// The apply engine: executes a plan against the API, recording every step in the state.
//
// Safety rules (docs/safety.md): an intent (create_pending) is written before each create call and
// the result right after it; only the engine's main thread touches the state, workers only talk to
// the API. A create whose outcome is unknown is resolved by listing the project's resources by name
// before anything is sent again.
#include <atomic>
#include <map>
#include <string>
#include <vector>

#include "api/client.h"
#include "api/project_key.h"
#include "engine/connectable.h"
#include "engine/events.h"
#include "engine/poll_schedule.h"
#include "plan/model.h"
#include "state/store.h"

namespace dbform {

// The most API calls at once that --parallelism may ask for (docs/commands.md): each is a thread.
constexpr int kMaxParallelism = 64;

struct ApplyOptions {
  int parallelism = 10;  // 1 to kMaxParallelism
  Duration wait_timeout = std::chrono::minutes(30);  // per service, from its create (or the run's start)
  bool wait = true;                                  // false: record the create and move on
  PollSchedule polls;
  Duration settle_window = std::chrono::seconds(30);  // lookups after an unknown create outcome (--settle-window)
  // The plan was made by this run from a refresh under the lock it still holds, and nothing waited
  // since (no prompt): the refresh's listing was the name guard (a declared name it found is a
  // conflict), so it is not listed again.
  bool names_checked = false;
  // After READY, wait until these services accept connections (--wait-connectable).
  ConnectableOptions connectable;
  // At the end, everything journaled is folded into one document (StateStore::compact); a run of
  // one small change (rotate-password) leaves it appended, for the next apply to fold.
  bool fold_journal = true;
  // Set (e.g. by a signal): start nothing new, end every wait at once, record what is in flight.
  const std::atomic<bool>* stop = nullptr;
};

struct ApplyResult {
  int created = 0;
  int adopted = 0;
  int updated = 0;  // resources changed in place (however many calls each took)
  int deleted = 0;
  int imported = 0;   // records made from existing resources (`import_id`)
  int forgotten = 0;  // records dropped (`removed:`), the resources left alone
  int ready = 0;   // done as declared: READY (active), recorded, or PAUSED where declared
  int paused = 0;  // of those, PAUSED
  std::vector<std::string> failures;  // "ADDRESS: why", one per failed resource
  std::vector<std::string> pending;   // addresses left unfinished by a stop or a state that cannot be saved
  std::vector<std::string> left;      // "ADDRESS: why", what --no-wait left for the next apply
  bool interrupted = false;
  // Set when the state could not be written: the run stopped creating at once, and `state` (the
  // caller's) holds everything learned, which the caller must keep elsewhere (a recovery file).
  std::string save_error;
  bool unsaved_changes = false;  // the last write failed too: `state` holds more than the store
};

struct PreflightPass {
  std::string project;
  std::string message;  // "project P: key `NAME` from VARIABLE"
};

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
