#include "sql/migrate.h"

#include <algorithm>
#include <map>

#include "util/duration.h"
#include "util/error.h"
#include "util/escape.h"
#include "util/text.h"

namespace dbform {

namespace {

const std::string kLedger = std::string("public.") + kLedgerTable;

void require(const SqlResult& r, const std::string& doing) {
  if (!r.ok) throw Error(doing + ": " + r.error.message);
}

}  // namespace

std::vector<LedgerEntry> read_ledger(SqlSession& session) {
  SqlResult exists = session.exec("SELECT to_regclass('" + kLedger + "') IS NOT NULL");
  require(exists, "could not look for the ledger " + kLedger);
  if (exists.rows.empty() || exists.rows[0].empty() || exists.rows[0][0].value_or("f") != "t") return {};
  SqlResult rows = session.exec("SELECT name, sha256, applied_at::text FROM " + kLedger + " ORDER BY name");
  require(rows, "could not read the ledger " + kLedger);
  std::vector<LedgerEntry> ledger;
  for (const auto& row : rows.rows)
    if (row.size() == 3) ledger.push_back({row[0].value_or(""), row[1].value_or(""), row[2].value_or("")});
  return ledger;
}

std::vector<std::string> ledger_problems(const std::vector<MigrationFile>& files, const std::vector<LedgerEntry>& ledger) {
  std::map<std::string, const MigrationFile*> by_name;
  for (const auto& f : files) by_name[f.name] = &f;
  std::vector<std::string> problems;
  for (const auto& entry : ledger) {
    const auto file = by_name.find(entry.name);
    if (file == by_name.end())
      problems.push_back("`" + shown_text(entry.name) + "` was applied at " + entry.applied_at +
                         " and is no longer in the migrations directory");
    else if (file->second->sha256 != entry.sha256)
      problems.push_back(shown_text(file->second->path) + " changed after it was applied at " + entry.applied_at +
                         " (sha256 " + entry.sha256.substr(0, 12) + "... then, " + file->second->sha256.substr(0, 12) +
                         "... now)");
  }
  return problems;
}

std::vector<const MigrationFile*> pending_files(const std::vector<MigrationFile>& files,
                                                const std::vector<LedgerEntry>& ledger) {
  std::vector<const MigrationFile*> pending;
  for (const auto& f : files)
    if (std::none_of(ledger.begin(), ledger.end(), [&](const LedgerEntry& e) { return e.name == f.name; }))
      pending.push_back(&f);
  return pending;
}

std::string MigrationFailure::str() const {
  std::string s = statement.str() + ": " + server.message;
  std::vector<std::string> more;
  if (error) more.push_back("at " + std::to_string(error->line) + ":" + std::to_string(error->column));
  if (!server.detail.empty()) more.push_back(server.detail);
  if (!server.hint.empty()) more.push_back("hint: " + server.hint);
  if (!server.sqlstate.empty()) more.push_back("SQLSTATE " + server.sqlstate);
  if (!more.empty()) s += " (" + join(more, "; ") + ")";
  return s;
}

namespace {

// The failure of a statement of `file` that began at `offset`, `text` as sent.
MigrationFailure failure_of(const MigrationFile& file, Location statement, size_t offset, const std::string& text,
                            const SqlResult& r, const StatementLimit& limit) {
  MigrationFailure failure{file.path, std::move(statement), std::nullopt, r.error, r.cancelled};
  if (r.cancelled == Cancelled::TimedOut) {
    failure.server.message = "the statement ran longer than the migration timeout (" + format_duration(limit.timeout) +
                             ") and was cancelled; its file's transaction was rolled back";
    failure.server.position = 0;
    return failure;
  }
  if (r.error.position > 0) failure.error = file.at(offset + byte_of_character(text, r.error.position));
  return failure;
}

// The file's statements and its ledger row, inside the transaction the caller began.
std::optional<MigrationFailure> run_file(SqlSession& session, const MigrationFile& file, const StatementLimit& limit) {
  for (size_t i = 0; i < file.statements.size(); ++i) {
    const std::string text = file.statement_text(i);
    SqlResult r = session.exec_limited(text, limit);
    if (r.ok) continue;
    return failure_of(file, file.at(file.statements[i].first_token), file.statements[i].offset, text, r, limit);
  }
  SqlResult row = session.exec_params("INSERT INTO " + kLedger + " (name, sha256) VALUES ($1, $2)", {file.name, file.sha256});
  if (!row.ok) return MigrationFailure{file.path, Location{file.path}, std::nullopt, row.error};
  SqlResult commit = session.exec_limited("COMMIT", limit);  // deferred constraints are checked here
  if (!commit.ok) return failure_of(file, Location{file.path}, 0, "COMMIT", commit, limit);
  return std::nullopt;
}

}  // namespace

MigrationRun apply_pending(SqlSession& session, const std::vector<const MigrationFile*>& pending,
                           const std::function<bool(const MigrationFile&)>& before_each, const StatementLimit& limit) {
  MigrationRun run;
  for (const MigrationFile* file : pending) {
    if (before_each && !before_each(*file)) break;
    require(session.exec("BEGIN"), "could not begin the transaction of " + shown_text(file->path));
    if (limit.timeout.count() > 0)  // the server ends a statement past it; dbform cancels one that set its own
      require(session.exec("SET LOCAL statement_timeout = " + std::to_string(limit.timeout.count())),
              "could not set the statement timeout of " + shown_text(file->path));
    require(session.exec("CREATE TABLE IF NOT EXISTS " + kLedger +
                         " (name text PRIMARY KEY, sha256 text NOT NULL, applied_at timestamptz NOT NULL DEFAULT now())"),
            "could not create the ledger " + kLedger);
    if (auto failure = run_file(session, *file, limit)) {
      session.exec("ROLLBACK");  // after a failed COMMIT there is nothing to roll back: harmless
      if (failure->cancelled == Cancelled::Stopped) run.stopped_in = file->path;
      else run.failure = std::move(failure);
      return run;
    }
    run.applied.push_back(file->name);
  }
  return run;
}

}  // namespace dbform
