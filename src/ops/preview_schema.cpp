#include "ops/preview_schema.h"

#include <algorithm>
#include <memory>

#include "engine/connectable.h"
#include "plan/database_objects.h"
#include "plan/kinds.h"
#include "state/previews.h"
#include "util/error.h"
#include "util/text.h"

namespace dbform {

std::vector<MigrationFile> preview_migration_files(const DesiredPreviews& block) {
  if (!block.migrations) return {};
  return load_migrations(*block.migrations, block.migrations_location);
}

bool MigrateOutcome::failed() const {
  for (const auto& f : forks)
    if (f.failure) return true;
  return false;
}

bool DiffOutcome::differs() const {
  for (const auto& f : forks)
    if (!f.changes.empty()) return true;
  return false;
}

size_t DiffOutcome::destructive() const {
  size_t n = 0;
  for (const auto& f : forks)
    for (const auto& c : f.changes) n += c.destructive ? 1 : 0;
  return n;
}

bool DiffOutcome::failed() const {
  for (const auto& f : forks)
    if (!f.error.empty()) return true;
  return false;
}

namespace {

std::vector<const ResourceRecord*> forks_of(const State& state, const std::string& project_id, const std::string& name) {
  std::vector<const ResourceRecord*> forks;
  for (const auto& p : recorded_previews(state, project_id))
    if (p.name == name) forks.insert(forks.end(), p.forks.begin(), p.forks.end());
  return forks;
}

// Why dbform cannot log in to `rec` ("" when it can): no endpoint, no known password, a fork whose
// password is still its source's.
std::string login_problem(const ResourceRecord& rec) {
  if (const std::string unrotated = unrotated_fork_problem(rec); !unrotated.empty()) return unrotated;
  if (is_paused_status(rec.status)) return rec.address + " is " + rec.status + ": it refuses connections";
  if (auto problem = connection_problem(rec)) return rec.address + " is " + *problem;
  return "";
}

std::unique_ptr<SqlSession> connect_when_ready(const MigrateRequest& r, const ConnectTarget& target) {
  const auto deadline = r.clock ? r.clock->now() + r.connect_wait : Clock::TimePoint{};
  for (;;) {
    try {
      return r.connector.connect(target, {});
    } catch (const Error& e) {
      if (!r.clock || login_refused(e.what()) || r.clock->now() >= deadline) throw;
      if (!r.clock->sleep_for_unless(Duration(500), r.stop)) throw;
    }
  }
}

struct OpenFork {
  const ResourceRecord* rec;
  std::unique_ptr<SqlSession> session;
  std::vector<LedgerEntry> ledger;
};

}  // namespace

MigrateOutcome migrate_preview(const MigrateRequest& request, MigrationReporter& reporter) {
  const std::string nothing = "; no migration was applied to any fork of preview " + request.name;
  std::vector<OpenFork> open;
  std::vector<std::string> problems;
  for (const ResourceRecord* rec : forks_of(request.state, request.project_id, request.name)) {
    if (const std::string why = login_problem(*rec); !why.empty()) throw Error(why + nothing);
    OpenFork fork{rec, nullptr, {}};
    try {
      fork.session = connect_when_ready(request, admin_target(*rec));
      fork.ledger = read_ledger(*fork.session);
    } catch (const Error& e) {
      throw Error(rec->address + " (" + rec->name + "): " + e.what() + nothing +
                  ". `dbform preview up " + request.name + "` again applies them");
    }
    for (const auto& problem : ledger_problems(request.files, fork.ledger))
      problems.push_back(rec->name + ": " + problem);
    open.push_back(std::move(fork));
  }
  if (!problems.empty())
    throw UsageError("the migrations of preview " + request.name + " do not match what its forks applied: " +
                     join(problems, "; ") + nothing + ". A file applied to a preview is never changed: add a new "
                     "file, or make the preview afresh with `dbform preview up " + request.name + " --reset`");
  MigrateOutcome outcome;
  for (auto& fork : open) {
    ForkMigrations done{fork.rec->address, fork.rec->name, {}, fork.ledger.size(), std::nullopt, ""};
    MigrationRun run;
    const StatementLimit limit{request.stop, request.statement_timeout};
    try {
      run = apply_pending(
          *fork.session, pending_files(request.files, fork.ledger),
          [&](const MigrationFile& file) {
            if (request.stop && request.stop->load()) return false;
            reporter.applying(fork.rec->address, fork.rec->name, file);
            return true;
          },
          limit);
      if (run.failure && run.failure->cancelled == Cancelled::TimedOut)
        run.failure->server.hint = "`dbform preview up --migration-timeout` gives each statement longer";
    } catch (const Error& e) {  // the connection itself failed: the file's transaction did not commit
      SqlError lost;
      lost.message = e.what();
      run.failure = MigrationFailure{fork.rec->address, Location{fork.rec->name}, std::nullopt, lost};
    }
    done.applied = std::move(run.applied);
    done.failure = std::move(run.failure);
    done.stopped_in = std::move(run.stopped_in);
    outcome.forks.push_back(std::move(done));
    if (request.stop && request.stop->load()) {
      outcome.interrupted = true;
      break;
    }
  }
  return outcome;
}

DiffOutcome diff_preview(const DiffRequest& request) {
  auto forks = forks_of(request.state, request.project_id, request.name);
  const bool among = request.project_id.empty() && !request.among.empty();
  if (among)
    std::erase_if(forks, [&](const ResourceRecord* rec) {
      return std::find(request.among.begin(), request.among.end(), rec->project_id) == request.among.end();
    });
  if (forks.empty())
    throw UsageError("no preview `" + request.name + "` is recorded" +
                     (!request.project_id.empty() ? " in project " + request.project_id
                      : among ? " in the manifests' project(s) " + join(request.among, ", ")
                              : "") +
                     ": `dbform preview list` shows those that are");
  SqlSessionOptions read_only;
  read_only.read_only = true;
  read_only.statement_timeout = request.statement_timeout;
  auto snapshot = [&](const ResourceRecord& rec) {
    if (const std::string why = login_problem(rec); !why.empty()) throw Error(why);
    try {
      auto session = request.connector.connect(admin_target(rec), read_only);
      return read_schema(*session);
    } catch (const Error& e) {
      throw Error(rec.address + " (" + rec.name + "): " + e.what());
    }
  };
  DiffOutcome outcome;
  for (const ResourceRecord* rec : forks) {
    ForkDiff diff{rec->project_id, rec->address, rec->name, "", "", {}, ""};
    const auto mark = preview_mark(*rec);
    const ResourceRecord* source =
        mark ? request.state.find(resource_address(rec->project_id, ResourceKind::Service, mark->service)) : nullptr;
    try {
      if (!source) throw Error("its source " + (mark ? "service `" + mark->service + "`" : std::string("service")) +
                               " is no longer recorded: there is nothing to compare it with");
      diff.source_address = source->address;
      diff.source_name = source->name;
      const SchemaSnapshot was = snapshot(*source);
      diff.changes = diff_schemas(was, snapshot(*rec));
    } catch (const Error& e) {
      diff.error = e.what();
    }
    outcome.forks.push_back(std::move(diff));
  }
  return outcome;
}

}  // namespace dbform
