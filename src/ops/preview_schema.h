#pragma once
// A preview's schema (docs/previews.md) as operations: `preview up` applies the `previews:` block's
// migration files to each fork once it is READY with its own password, and `preview diff` (and up's
// markdown report) compares each fork's schema with its source's. The SQL goes through the
// SqlConnector seam (libpq for real, a fake in the tests); the CLI only renders the outcomes.
#include <atomic>
#include <optional>
#include <string>
#include <vector>

#include "sql/migrate.h"
#include "sql/migration_files.h"
#include "sql/schema_diff.h"
#include "sql/session.h"
#include "manifest/model.h"
#include "state/model.h"
#include "util/clock.h"

namespace dbform {

// The `previews:` block's migration files, read and parsed (before any call or connection), or
// none when the block has no `migrations:`. Throws UsageError listing every problem of every file.
std::vector<MigrationFile> preview_migration_files(const DesiredPreviews& block);

class MigrationReporter {
 public:
  virtual ~MigrationReporter() = default;
  // Before `file` runs on the fork at `address` (progress, on stderr).
  virtual void applying(const std::string& address, const std::string& fork_name, const MigrationFile& file) = 0;
};

struct MigrateRequest {
  const State& state;
  std::string project_id;
  std::string name;  // the preview's
  const std::vector<MigrationFile>& files;
  const SqlConnector& connector;
  const std::atomic<bool>* stop = nullptr;  // cancels the running statement (its file rolled back), and no more runs
  // The longest one statement of a migration may run (`preview up --migration-timeout`): the
  // server's statement_timeout, and dbform's own cancel of a statement that set its own.
  Duration statement_timeout{std::chrono::minutes(5)};
  // A fork reported READY may refuse connections for a moment (the real service now and then
  // does): connecting is tried again every half second within `connect_wait`, unless the login
  // itself is refused. No clock: one attempt.
  Clock* clock = nullptr;
  Duration connect_wait{std::chrono::minutes(1)};
};

struct ForkMigrations {
  std::string address;
  std::string fork_name;
  std::vector<std::string> applied;  // by this run, in order
  size_t before = 0;                 // files the ledger held already
  std::optional<MigrationFailure> failure;
  std::string stopped_in;  // the file a stop signal cancelled on this fork (rolled back), "" when none
};

struct MigrateOutcome {
  std::vector<ForkMigrations> forks;  // in the preview's order
  bool interrupted = false;
  bool failed() const;
};

// Connects to every fork of the preview and reads its ledger first: a fork that is not READY with
// its own password, one that cannot be connected to, or an applied file changed (or gone) since,
// throws Error naming it with nothing applied anywhere. Then applies each fork's pending files; a
// failing file stops that fork's migrations (reported in its ForkMigrations), not the others'.
MigrateOutcome migrate_preview(const MigrateRequest& request, MigrationReporter& reporter);

struct DiffRequest {
  const State& state;
  std::string project_id;  // "" for every project (of `among`, when it names some)
  std::string name;        // the preview's
  const SqlConnector& connector;
  Duration statement_timeout{std::chrono::seconds(30)};
  std::vector<std::string> among{};  // with project_id "": only these projects (the manifests'), none = every
};

struct ForkDiff {
  std::string project_id;
  std::string address;
  std::string fork_name;
  std::string source_address;
  std::string source_name;
  std::vector<SchemaChange> changes;
  std::string error;  // why it could not be compared ("" when it was)
};

struct DiffOutcome {
  std::vector<ForkDiff> forks;
  bool differs() const;
  size_t destructive() const;
  bool failed() const;
};

// Reads each fork's schema and its source's, each in a read-only session (every transaction READ
// ONLY from the login on) with a statement timeout, and compares them. A fork that cannot be read
// or compared carries the reason. Throws UsageError when no preview `name` is recorded.
DiffOutcome diff_preview(const DiffRequest& request);

}  // namespace dbform
