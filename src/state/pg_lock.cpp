// The PostgreSQL state's lock: a session-level advisory lock per workspace, which PostgreSQL lets
// go when the holder's session ends however it ends, and a row in dbform_locks that says who holds
// it. Part of PgStateStore (state/pg_store.h).
#include <unistd.h>

#include "state/codec.h"
#include "state/pg_store.h"
#include "util/clock.h"
#include "util/host.h"
#include "util/text.h"

namespace dbform {

namespace {

// A lock held by a live session is the truth; the row only says who took it. A row left by a
// holder that died is ignored: its backend no longer holds the advisory lock.
constexpr const char* kHolderQuery = R"sql(
SELECT l.pid, l.host, l.operation, to_char(l.since AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS"Z"'),
       EXISTS (SELECT 1 FROM pg_locks k
               WHERE k.locktype = 'advisory' AND k.granted AND k.pid = l.backend_pid
                 AND k.database = (SELECT oid FROM pg_database WHERE datname = current_database())
                 AND k.classid = $2::oid AND k.objid = $3::oid AND k.objsubid = 1)
FROM dbform_locks l WHERE l.workspace = $1
)sql";

}  // namespace

class PgStateLock : public StateLock {
 public:
  explicit PgStateLock(PgStateStore& store) : store_(store) {}
  ~PgStateLock() override { store_.unlock(); }

 private:
  PgStateStore& store_;
};

std::unique_ptr<StateLock> PgStateStore::lock(const std::string& operation, Duration timeout) {
  LockInfo me{static_cast<long long>(::getpid()), hostname(), operation,
              format_utc(std::chrono::system_clock::now())};
  const auto deadline = clock_.now() + timeout;
  for (;;) {
    if (try_lock(me)) return std::make_unique<PgStateLock>(*this);
    const auto now = clock_.now();
    if (now >= deadline) break;
    clock_.sleep_until(std::min(deadline, now + Duration(100)));
  }
  throw LockError("the state " + describe_ + " is locked by " + holder_description() + lock_refused_advice(timeout));
}

bool PgStateStore::try_lock(const LockInfo& me) {
  std::lock_guard<std::mutex> guard(mu_);
  refuse_unless_writer();  // makes the tables, once it knows this role may write
  const std::string key = std::to_string(lock_key_);
  auto r = conn_.exec("SELECT pg_try_advisory_lock($1::bigint)", {key});
  if (r.rows.at(0).at(0) != "t") return false;
  try {
    conn_.exec(
        "INSERT INTO dbform_locks (workspace, pid, host, operation, since, backend_pid) "
        "VALUES ($1, $2, $3, $4, $5::timestamptz, pg_backend_pid()) "
        "ON CONFLICT (workspace) DO UPDATE SET pid = EXCLUDED.pid, host = EXCLUDED.host, "
        "operation = EXCLUDED.operation, since = EXCLUDED.since, backend_pid = EXCLUDED.backend_pid",
        {workspace_, std::to_string(me.pid), me.host, me.operation, me.since});
  } catch (const Error&) {
    conn_.exec("SELECT pg_advisory_unlock($1::bigint)", {key});
    throw;
  }
  return true;
}

void PgStateStore::refuse_unless_writer() {
  if (writer_) return;
  // Of the tables there are (an older database lacks dbform_secrets, a new one has none): may this
  // role read the passwords and write what a run writes. Asked before anything is created: a table
  // a reader made would be the reader's.
  constexpr const char* kMay = R"sql(
SELECT CASE WHEN to_regclass('dbform_secrets') IS NULL THEN true
            ELSE has_table_privilege(current_user, 'dbform_secrets', 'SELECT') END,
       CASE WHEN to_regclass('dbform_states') IS NULL THEN true
            ELSE has_table_privilege(current_user, 'dbform_states', 'UPDATE') END
        AND CASE WHEN to_regclass('dbform_locks') IS NULL THEN true
                 ELSE has_table_privilege(current_user, 'dbform_locks', 'INSERT') END
        AND CASE WHEN to_regclass('dbform_journal') IS NULL THEN true
                 ELSE has_table_privilege(current_user, 'dbform_journal', 'INSERT') END
        AND CASE WHEN to_regclass('dbform_secrets') IS NULL THEN true
                 ELSE has_table_privilege(current_user, 'dbform_secrets', 'INSERT') END
)sql";
  const auto may = conn_.exec(kMay).rows.at(0);
  secrets_readable_ = may.at(0) == "t";
  refuse_without_secrets();
  if (may.at(1) != "t")
    throw StateError(describe_ + ": this role may not write the state (it may not update dbform_states, or insert "
                     "into dbform_locks, dbform_journal or dbform_secrets). Run this with a role granted SELECT, "
                     "INSERT, UPDATE and DELETE on dbform_states, dbform_journal, dbform_locks and dbform_secrets (see "
                     "docs/state.md); nothing was written");
  ensure_tables();
  refuse_exposed_secrets();
  writer_ = true;
}

void PgStateStore::unlock() noexcept {
  std::lock_guard<std::mutex> guard(mu_);
  try {
    // The holder row goes first, so nobody reads a stale holder after we let go.
    conn_.exec("DELETE FROM dbform_locks WHERE workspace = $1 AND backend_pid = pg_backend_pid()", {workspace_});
    conn_.exec("SELECT pg_advisory_unlock($1::bigint)", {std::to_string(lock_key_)});
  } catch (const Error&) {
    // The connection is gone, and the server dropped the lock with it.
  }
}

std::optional<LockInfo> PgStateStore::lock_holder() {
  std::lock_guard<std::mutex> guard(mu_);
  if (!has_table("dbform_locks")) return std::nullopt;  // nobody ever locked it
  const auto key = static_cast<unsigned long long>(lock_key_);
  // pg_locks shows a bigint advisory key as classid (high 32 bits) and objid (low 32 bits).
  auto r = conn_.exec(kHolderQuery, {workspace_, std::to_string(key >> 32), std::to_string(key & 0xffffffffULL)});
  if (r.rows.empty() || r.rows[0][4] != "t") return std::nullopt;
  const auto& row = r.rows[0];
  return LockInfo{std::stoll(row[0].value_or("0")), row[1].value_or(""), row[2].value_or(""), row[3].value_or("")};
}

std::string PgStateStore::holder_description() {
  return lock_holder().value_or(LockInfo{}).str();
}

}  // namespace dbform
