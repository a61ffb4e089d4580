#pragma once
// Plans, and with a refresh first reads what exists: every recorded resource is taken as the API
// shows it, and a declared resource the state does not record but whose name exists is planned as
// a conflict, never as a second create. A refresh changes the caller's copy of the state only: `plan`
// writes nothing, and `apply` hands what it read (RefreshedPlan::changed) to its run, which saves it
// with its first write.
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "manifest/model.h"
#include "plan/model.h"
#include "plan/run.h"
#include "state/model.h"
#include "sql/session.h"
#include "state/store.h"
#include "util/diagnostics.h"
#include "util/env.h"

namespace dbform {

class ApiClient;  // api/client.h: the .cpp calls it

struct RefreshedPlan {
  Plan plan;
  // The keys' preflight, made before the lists (so that a wrong key is named as such); unset when
  // nothing was refreshed.
  std::optional<std::vector<PreflightPass>> preflight;
  // Declared resources with live namesakes that no record holds (duplicates), at their declarations.
  std::vector<Diagnostic> warnings;
  // The addresses whose record the refresh changed (in the caller's copy of the state).
  std::vector<std::string> changed;
  // Service address -> when the refresh read its objects from its catalogs: recorded with the
  // refresh's stamp (RefreshStamp::catalogs) by the run that saves what it read.
  std::map<std::string, std::string> catalogs_read;
  // What it read of each unrecorded `import_id`: apply records these (record_imports) once the
  // plan is confirmed, never before.
  Imports imports;
};

struct PlanSettings {
  bool refresh = false;
  bool prune = false;  // unprotected orphans are deletes (their projects are refreshed too)
  Duration settle_window = std::chrono::seconds(30);  // how far lists may lag behind a create
  int max_deletes = kDefaultMaxDeletes;  // the blast radius: beyond it, deletes are conflicts
  std::vector<std::string> targets;      // --target, as given: "" for every resource
  // Where a refresh reads the objects inside the services' databases from their catalogs
  // (read/catalogs.h); null: they are planned from their records.
  const SqlConnector* catalogs = nullptr;
};

// The plan of the manifests against `state` as it is (with `namesakes` found by a refresh), with
// the settings' targets and blast radius. Throws UsageError for a target it does not have.
Plan plan_of(const Manifest& manifest, const State& state, const PlanSettings& settings,
             const Namesakes* namesakes = nullptr, const Imports* imports = nullptr);

// A refresh's first reads (each project's key check, then its services and VPCs), begun in the
// background for the manifests' projects (those of --target when given) as soon as the manifests
// are loaded, so that they overlap the state's read and the first plan: plan_refreshed() takes
// what it needs of them and reads the rest itself. Reads only, so none is ever wasted on a write.
class EarlyReads {
 public:
  // The keys, the preflight's passes and the lists read (read/namesakes.h's), or the reads'
  // failure: complete in the .cpp, the one reader of it (plan_refreshed).
  struct Done;

  // Keys are read through `env`, which must outlive the reads. The client's stop flag
  // (ApiClient::stop_waits_on) is the reads' own while they live, so this is for a plan's client,
  // not for apply's, whose waits a signal ends.
  // `state`: the state the plan is made from (which kinds each project has).
  EarlyReads(const Manifest& manifest, const State& state, const PlanSettings& settings, ApiClient& api,
             const EnvLookup& env, int parallelism);
  // Ends the reads' retry waits, and waits for them (a plan stopped by another error).
  ~EarlyReads();
  EarlyReads(const EarlyReads&) = delete;
  EarlyReads& operator=(const EarlyReads&) = delete;

  // What was read, once every read is done; null once taken (or never begun). Once only.
  std::unique_ptr<Done> take();

 private:
  struct Reads;  // the reads in the background, and their stop flag
  ApiClient& api_;
  std::unique_ptr<Reads> reads_;
};

// Without `refresh`, plan_of the state alone. Otherwise the keys of the planned projects (and with
// `prune` those of the orphans; read through `env`) are preflighted, each project is listed (one call per kind), what
// it shows is taken into `state` (the caller's copy: nothing is written), and the plan is made
// against it. Throws Error when a key or a read fails.
// `early`: reads begun for this plan, used where they cover its projects.
// `reread`: the state read again, for a caller that does not hold the state's lock (a plan while an
// apply runs): called when the lists show a declared name the state does not record, and the plan
// is then made against what it returns (into `state`).
using StateReader = std::function<State()>;
RefreshedPlan plan_refreshed(const Manifest& manifest, State& state, PlanSettings settings, ApiClient& api,
                             Clock& clock, const EnvLookup& env, int parallelism = 10, EarlyReads* early = nullptr,
                             const StateReader& reread = {});

// The records of the plan's imports, put into `state` (the engine saves them with its first write,
// before any call): once the plan is confirmed.
void record_imports(const Plan& plan, const Imports& imports, State& state);

}  // namespace dbform
