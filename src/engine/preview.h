#pragma once
// Previews (docs/previews.md): a database per pull request. `preview up` forks the services of a
// project's `previews:` block through the apply engine (intent first, never twice, watched until
// READY) and then gives each fork a password of its own; `down` and `sweep` delete them through
// the engine too. Every refusal (the guards) comes before any API call. The CLI parses, locks,
// resolves keys and renders; the flow is here.
#include <atomic>
#include <chrono>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "api/client.h"
#include "api/project_key.h"
#include "engine/apply.h"
#include "manifest/model.h"
#include "plan/model.h"
#include "state/previews.h"
#include "state/store.h"

namespace dbform {

using WallTime = std::chrono::system_clock::time_point;

// What `preview up NAME` does in one project, decided from the manifest and the state alone.
struct PreviewUpPlan {
  std::string project_id;
  std::string name;
  std::vector<std::string> addresses;  // each fork's, in the block's order
  Plan reset;  // --reset: the deletes of the forks recorded now (made first)
  Plan forks;  // the creates, adopts and waits of the forks; none when the preview stands
  // Whether `up` has a call to make: --reset's deletes, forks to make, adopt or wait for, or a
  // fork's password to rotate (forks_to_rotate). None for a preview that stands.
  bool needs_calls(const State& state) const;
};

// A preview name (1-32 of a-z, 0-9 and '-'), else UsageError saying so.
void require_preview_name(const std::string& name);

// The guards that need no call, as UsageError: a name that would exceed `max`
// (naming the previews and their ages), a listed service not recorded or not READY, a fork name
// that the project declares or records already. A project without a `previews:` block is refused.
PreviewUpPlan plan_preview_up(const DesiredProject& project, const std::string& name, const State& state,
                              WallTime now, bool reset);

// The preview's READY forks whose password is not yet their own (the fork's answer carries one that
// the source's snapshot may share), a fork of a service since dropped from the block included:
// after the engine's run.
std::vector<std::string> forks_to_rotate(const PreviewUpPlan& up, const State& state);

// The deletes of the forks of preview `name` of the project (empty when none is recorded). A fork
// whose create's outcome is unknown has no id to delete: `unsettled` receives its address.
Plan plan_preview_delete(const State& state, const std::vector<const ResourceRecord*>& forks,
                         std::vector<std::string>* unsettled = nullptr);

// A preview `preview sweep` deletes: expired, or (with `keep` given) not kept.
struct SweepItem {
  std::string project_id;
  std::string where;               // PROJECT/previews/NAME
  std::string why;                 // "expired 2026-...", "not kept"
  std::vector<std::string> forks;  // their addresses
};
struct SweepChoice {
  std::vector<SweepItem> due;     // oldest first across every project
  std::vector<std::string> kept;  // "PROJECT/previews/NAME: why", not due
};
SweepChoice choose_sweep(const State& state, const std::string& project_id, const std::set<std::string>& keep,
                         WallTime now);
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

// "2d03h", "5h12m", "40m": how old a preview is, for messages and listings.
std::string preview_age(const std::string& created_at, WallTime now);

}  // namespace dbform
