#pragma once
// Applying a preview's migration files to one database (docs/previews.md): each file not applied
// there yet, in name order, in its own transaction together with its row in the ledger
// `public.dbform_migrations` (name, sha256, applied_at) that lives in the database itself, so a
// fork carries it and a second run applies only what is new.
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "sql/migration_files.h"
#include "sql/session.h"

namespace dbform {

inline constexpr const char* kLedgerTable = "dbform_migrations";

struct LedgerEntry {
  std::string name;
  std::string sha256;
  std::string applied_at;
};

// The ledger's rows in name order; none when the table does not exist yet (nothing is created).
// Throws Error naming what the server said.
std::vector<LedgerEntry> read_ledger(SqlSession& session);

// Why the files cannot be applied over this ledger: each applied file whose bytes changed since, or
// that is no longer in the directory ("" when none). Each names the file.
std::vector<std::string> ledger_problems(const std::vector<MigrationFile>& files, const std::vector<LedgerEntry>& ledger);

// The files the ledger does not hold, in name order.
std::vector<const MigrationFile*> pending_files(const std::vector<MigrationFile>& files,
                                                const std::vector<LedgerEntry>& ledger);

// Where and why a file failed: the server's message and the place in the file.
struct MigrationFailure {
  std::string file;               // its path
  Location statement;             // the failing statement's first token
  std::optional<Location> error;  // PostgreSQL's error position within it, when given
  SqlError server;                // what PostgreSQL said (or why dbform cancelled it)
  Cancelled cancelled = Cancelled::No;  // cancelled by dbform: past the migration timeout, or by a signal
  // "FILE:LINE: MESSAGE (at LINE:COL; SQLSTATE ...)", one line.
  std::string str() const;
};

struct MigrationRun {
  std::vector<std::string> applied;  // names, in order
  std::optional<MigrationFailure> failure;
  std::string stopped_in;  // the file whose statement a stop signal cancelled (rolled back); "" when none
};

// Applies `pending` in order, each in one transaction with its ledger row (the ledger is created in
// the first); stops at the first failure, whose transaction is rolled back. `before_each` is told
// each file's name before it runs and may return false to stop (a signal). Each transaction runs
// with `SET LOCAL statement_timeout` of `limit.timeout` (when not 0), and each statement of a file
// is cancelled on the server past it (a failure that says so) or once `limit.stop` is set (the
// file rolled back, named in `stopped_in`). Throws Error only when the connection itself fails.
MigrationRun apply_pending(SqlSession& session, const std::vector<const MigrationFile*>& pending,
                           const std::function<bool(const MigrationFile&)>& before_each = {},
                           const StatementLimit& limit = {});

}  // namespace dbform
