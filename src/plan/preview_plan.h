#pragma once
// What previews (docs/previews.md: a database per pull request) do, decided from the manifest and
// the state alone, as a plan is: the forks `preview up` makes, the deletes of `down`, what `sweep`
// deletes, and every refusal that needs no call. The runner (ops/preview_runner.h) carries them
// out through the engine; the flow of the three commands is ops/preview.h.
#include <chrono>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "manifest/model.h"
#include "plan/model.h"
#include "state/previews.h"

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

// "preview `NAME` of project P", for messages.
std::string preview_words(const std::string& project_id, const std::string& name);

// The action on a fork's record: a service without a parent, created with the record's settings.
PlannedAction fork_action(Action action, const ResourceRecord& rec);

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
// "2d03h", "5h12m", "40m": how old a preview is, for messages and listings.
std::string preview_age(const std::string& created_at, WallTime now);

}  // namespace dbform
