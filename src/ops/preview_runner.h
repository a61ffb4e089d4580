#pragma once
// What carries out a preview's plan (plan/preview_plan.h): the guards that need a live list, the
// engine's runs of the forks' creates and deletes, and the forks' own passwords. The operations
// of `preview up | down | sweep` (ops/preview.h) call it under the state's lock.
#include <map>
#include <set>
#include <string>
#include <vector>

#include "plan/events.h"
#include "plan/preview_plan.h"
#include "plan/run.h"
#include "state/store.h"

namespace dbform {

class ApiClient;   // api/client.h
struct ProjectKey;  // api/project_key.h

// What a sweep did.
struct SweepReport {
  std::vector<std::string> tried;  // the forks it deleted or tried to (those still recorded failed)
  std::vector<std::string> left;   // "PROJECT/previews/NAME: why", due but not (all) deleted
  ApplyResult result;
};

// Runs the guards that need a live list and the engine. Keys must hold every project of the plans.
class PreviewRunner {
 public:
  PreviewRunner(ApiClient& api, StateStore& store, Clock& clock, EventSink& events, ApplyOptions options)
      : api_(api), store_(store), clock_(clock), events_(events), options_(std::move(options)) {}

  // The guards that need a live list, for a plan that forks: a fork name taken by a live service
  // (other than the preview's own forks, which --reset deletes first), a source not READY now.
  // Throws UsageError (nothing sent but reads). Run for every project before any up().
  void check_live(const PreviewUpPlan& up, const std::map<std::string, ProjectKey>& keys, const State& state);
  // Preflight, --reset's deletes, the forks, then their passwords (check_live first). Throws Error
  // for what stopped it; returns the engine's result (failures are in it).
  ApplyResult up(const PreviewUpPlan& up, const std::map<std::string, ProjectKey>& keys, State& state);
  // Deletes through the engine and forgets. A fork whose create's outcome is unknown is looked up
  // by name across the settle window first (as the engine does before a create is sent again):
  // deleted when found and provably the fork, refused when a namesake is not provably it, forgotten
  // when no lookup of the window found it.
  ApplyResult remove(const std::vector<std::string>& forks, const std::map<std::string, ProjectKey>& keys,
                     State& state);
  // The due previews, oldest first, deleted as remove() does, at most `max_deletes` services: a
  // preview whose deletes fail costs the budget only what it deleted, so the next ones are tried;
  // a project whose key is missing (`key_problems`, project -> why) or rejected is reported in
  // `left` and skipped while the others are swept.
  SweepReport sweep(const SweepChoice& choice, int max_deletes, const std::map<std::string, ProjectKey>& keys,
                    const std::map<std::string, std::string>& key_problems, State& state);

 private:
  ApplyResult delete_forks(const std::vector<std::string>& forks, const std::map<std::string, ProjectKey>& keys,
                           State& state);
  void settle_unknown(const std::vector<std::string>& addresses, const std::map<std::string, ProjectKey>& keys,
                      State& state, ApplyResult& result, std::vector<std::string>& settled);
  ApiClient& api_;
  StateStore& store_;
  Clock& clock_;
  EventSink& events_;
  ApplyOptions options_;
};

}  // namespace dbform
