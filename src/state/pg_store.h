#pragma once
// The team backend: states kept in PostgreSQL through libpq, one row per workspace, so several
// people and pipelines can plan and apply against the same projects.
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "state/pg_secrets.h"
#include "state/store.h"

typedef struct pg_conn PGconn;

namespace dbform {

// True for the URLs that select this backend: postgres://... and postgresql://...
bool is_postgres_url(const std::string& where);
// Whether a state location (`source` names where it came from: --state, DBFORM_STATE) selects this
// backend: such a URL, or libpq's keyword form ("host=db dbname=states user=ci"), as libpq's own
// parser reads it. A location holding `=` that libpq cannot read is refused (Error, quoting none of
// it): taken for a file name, it could put a password into one.
bool names_postgres_state(const std::string& where, const std::string& source);
// The location fit to show: a URL as redact_url shows it, the keyword form rebuilt by libpq's
// parser without password or sslpassword.
std::string redacted_conninfo(const std::string& where);

// The key of a workspace's session-level advisory lock (pg_try_advisory_lock(bigint)), the same
// in every client.
long long pg_workspace_lock_key(const std::string& workspace);

// Workspace names: 1 to 128 letters, digits, '_', '-' and '.', starting with a letter or digit.
bool valid_workspace_name(const std::string& name);

// One libpq connection, used from one thread at a time. Every statement runs in its own
// transaction (autocommit). Errors throw Error naming the server and database, never the password.
class PgConnection {
 public:
  using Value = std::optional<std::string>;  // nullopt is SQL NULL
  using Row = std::vector<Value>;
  struct Result {
    std::vector<Row> rows;
    long long affected = 0;  // rows changed by INSERT, UPDATE or DELETE
  };

  explicit PgConnection(const std::string& url);
  ~PgConnection();
  PgConnection(const PgConnection&) = delete;
  PgConnection& operator=(const PgConnection&) = delete;

  // One parameterised statement ($1, $2, ...), sent as text.
  Result exec(const std::string& sql, const std::vector<Value>& params = {});
  // Several statements without parameters, in one implicit transaction.
  void exec_script(const std::string& sql);
  // "database D on HOST:PORT as USER": what a person needs to find the server.
  const std::string& where() const { return where_; }
  int server_version() const;  // e.g. 150004

 private:
  [[noreturn]] void fail(const std::string& detail) const;
  PGconn* conn_ = nullptr;
  std::string where_;
  std::string password_;  // scrubbed from every message, in case a server ever echoes it
};

// A state per workspace in the table dbform_states (workspace, lineage, serial, document,
// updated_at); tables are created on the first write or lock. Writes are compare-and-swap on
// serial and lineage, each its own committed transaction. Changes are rows of dbform_journal (workspace, serial, entry)
// appended with the row's serial, so a write costs what changed; reading replays them onto the
// document, and a whole write (at the end of an apply, or when the journal outgrows the document and
// journal_floor()) folds them in. Every password is a row of dbform_secrets (pg_secrets.h), written in the same
// transaction as the document or journal line that changes it, so a role without SELECT on that
// table reads everything else (and never writes). The lock is a session-level advisory lock on this store's
// connection (the server drops it when the process or the connection dies); while held, the
// holder's pid, host, operation and start time are in dbform_locks for refused runs to print.
class PgStateStore : public StateStore {
 public:
  // `clock` paces --lock-timeout polling (tests pass their own); nullptr is the system clock.
  PgStateStore(const std::string& url, std::string workspace, Clock* clock = nullptr);
  std::optional<State> read() override;
  void write(State& state) override;
  void write_changes(State& state, const std::vector<std::string>& changed) override;
  void compact(State& state) override;
  std::unique_ptr<StateLock> lock(const std::string& operation, Duration timeout) override;
  std::optional<LockInfo> lock_holder() override;
  std::string sealed_by() const override { return document_key_id_; }
  std::string describe() const override { return describe_; }
  std::vector<std::string> workspaces() override;
  std::string command_line_args() const override;

 private:
  friend class PgStateLock;
  // Whether the table exists (true without asking once ensure_tables made or found all three).
  // Each read asks only for the table it reads: a database made before one of them still reads.
  bool has_table(const std::string& name);
  // Creates them on the first write or lock: reading creates nothing, so that a plan (read-only,
  // perhaps under a role that may only read) leaves an empty database as it found it.
  void ensure_tables();
  std::optional<State> read_snapshot();  // the row with its journal replayed, not yet checked
  bool try_lock(const LockInfo& me);
  // A role that may not write the state is told so before it takes the lock (the planner's role of
  // docs/state.md reads every table but dbform_secrets and writes none), and before any table is
  // made; then the tables are made: asked once per store.
  void refuse_unless_writer();
  // Refuses a dbform_secrets that a role that may not write the state could read: owned or granted
  // to one, with triggers, rules or policies, or (the server asked for every role that may log in)
  // readable through a group, a column grant, a predefined role, a view over it or a SECURITY
  // DEFINER function (state/pg_exposure.cpp).
  void refuse_exposed_secrets();
  void unlock() noexcept;
  std::string holder_description();
  [[noreturn]] void refuse_write(const State& state);
  // The document or journal entry `text` with the placeholders of its `records` array given their
  // passwords from `rows` (when this role may read them); notes a password held inline.
  std::string with_secrets(const std::string& text, const char* records, const pg_secrets::Rows& rows);
  // `text` (as the codec wrote it) with its records' passwords moved out to `rows`.
  std::string without_secrets(const std::string& text, const char* records, std::vector<pg_secrets::Row>& rows);
  void put_secrets(const std::vector<pg_secrets::Row>& rows);
  // A role that may not read the passwords never writes: it could not carry them.
  void refuse_without_secrets() const;
  // `body` in one transaction, committed when it returns true, rolled back otherwise or on a throw.
  bool in_transaction(const std::function<bool()>& body);

  std::mutex mu_;  // the engine may write from several threads; libpq connections are not shared
  bool tables_ = false;
  bool writer_ = false;  // refuse_unless_writer found this role may write
  std::string workspace_;
  std::string describe_;
  std::string redacted_url_;
  PgConnection conn_;
  SystemClock system_clock_;
  Clock& clock_;
  long long lock_key_;
  size_t document_bytes_ = 0;  // the stored document's size, and the journal's since it was written
  size_t journal_bytes_ = 0;
  std::string document_key_id_;  // of the key the stored document is sealed with; "" when plain
  // Whether the last read's role may read dbform_secrets (true without that table: a database made
  // before it keeps the passwords in its documents).
  bool secrets_readable_ = true;
  // Whether the stored document or journal still holds passwords itself (written before the table):
  // the next write is a whole one, which moves them to the table.
  bool inline_secrets_ = false;
};

}  // namespace dbform
