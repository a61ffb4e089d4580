#pragma once
// `preview up | down | sweep` as operations of the core: the command line parses flags, opens the
// store, makes the reporter and calls one of these; each runs in the state's lock
// (ops/locked_state.h), with the guards, the engine's runs, the passwords and (for up) the
// migrations here, and hands back what the command prints.
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "manifest/model.h"
#include "ops/locked_state.h"
#include "ops/preview_runner.h"
#include "ops/preview_schema.h"
#include "plan/events.h"
#include "plan/run.h"
#include "policy/rules.h"
#include "sql/session.h"
#include "state/previews.h"

namespace dbform {

class ApiClient;  // api/client.h: the requests hold it, the .cpp calls it

// The API, made on its first use: a run with nothing to call never builds it (nor fails on its
// settings).
using ApiSource = std::function<ApiClient&()>;

// What the preview operations tell as they go: the command line renders it on stderr.
class PreviewReporter : public MigrationReporter {
 public:
  // A rule of kind `preview` broken that is advisory (a mandatory one refuses before any call).
  virtual void advisory(const PolicyViolation& violation) = 0;
  // Where the engine's events go; asked before the first call.
  virtual EventSink& events() = 0;
  // What a run left undone, "ADDRESS: why", as it comes (a fork's failed migrations too).
  virtual void failed(const std::string& what) = 0;
};

// What the three share: the lock and the store, the API and the engine.
struct PreviewContext {
  StateAccess access;
  ApiSource api;
  Clock& clock;
  ApplyOptions engine;  // its `stop` ends the runs and the migrations
};

struct PreviewUpRequest {
  PreviewContext context;
  const Manifest& manifest;
  std::string project;  // "" = every project with a `previews:` block
  std::string name;
  bool reset = false;
  const PolicySet& policies;  // the rules of kind `preview` its forks must keep
  const SqlConnector& connector;  // the migrations' and the diff's connections to the forks
  bool diff_schemas = false;      // each fork's schema diffed against its source's (a pull request's comment)
  Duration migration_timeout{std::chrono::minutes(5)};  // the longest one migration statement may run
};

// What `up` adds to a preview's report when its block has `migrations:`.
struct SchemaReport {
  std::optional<MigrateOutcome> migrations;
  std::optional<DiffOutcome> diff;
};

struct PreviewUpOutcome {
  bool interrupted = false;  // stopped by a signal: nothing more was done
  bool failed = false;       // a fork failed: reported, and the preview is not reported whole
  State state;               // as recorded at the end, with the preview's forks
  std::vector<std::string> projects;  // the preview's projects, in the manifests' order
  std::string clear_warning;  // its passwords were recorded in clear (no key): why and how to seal them
  std::map<std::string, SchemaReport> schema;  // project -> its migrations (and diff), when it has any
};

// Every guard of every project (names, sources, the rules of kind `preview`, the migration files,
// then a live list) before any call; then per project --reset's deletes, the forks and their own
// passwords, through the engine; then, once every fork is whole, the migrations. Throws UsageError
// for a guard, Error for what stopped it (a save that failed: naming the recovery file).
PreviewUpOutcome preview_up_operation(const PreviewUpRequest& request, PreviewReporter& reporter);

struct PreviewDownRequest {
  PreviewContext context;
  const Manifest& manifest;  // the keys' variables (and declarations, when there are any)
  std::string project;       // "" = every project
  std::string name;
};

struct PreviewDownOutcome {
  bool recorded = false;  // false: no such preview, nothing was done
  ApplyResult result;
};

// Deletes every fork of the preview through the engine (a fork whose create's outcome is unknown
// is settled by name first) and forgets it.
PreviewDownOutcome preview_down_operation(const PreviewDownRequest& request, PreviewReporter& reporter);

struct PreviewSweepRequest {
  PreviewContext context;
  const Manifest& manifest;
  std::string project;  // "" = every project
  std::set<std::string> keep;
  int max_deletes = 3;
};

struct PreviewSweepOutcome {
  SweepChoice choice;
  SweepReport report;
  State state;  // as recorded at the end: a fork tried and still recorded was not deleted
};

// The due previews deleted, oldest first, at most `max_deletes` services; a project without a key
// is left for the next sweep, not the whole sweep.
PreviewSweepOutcome preview_sweep_operation(const PreviewSweepRequest& request, PreviewReporter& reporter);

}  // namespace dbform
