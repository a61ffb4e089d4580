#include "state/pg_store.h"

#include "util/text.h"

#include <libpq-fe.h>

#include <algorithm>
#include <cctype>

#include "state/codec.h"
#include "state/pg_secrets.h"
#include "util/json_limits.h"

namespace dbform {

namespace {

// Both tables in one implicit transaction (a multi-statement query without BEGIN). The
// transaction-scoped advisory lock serialises clients creating them at the same moment: two
// concurrent CREATE TABLE IF NOT EXISTS can both pass the existence check and one then fails on a
// catalog index. The key is arbitrary but fixed ("dbform" in ASCII).
constexpr const char* kCreateTables = R"sql(
SELECT pg_advisory_xact_lock(110373788152429);
CREATE TABLE IF NOT EXISTS dbform_states (
  workspace  text PRIMARY KEY,
  lineage    text NOT NULL,
  serial     bigint NOT NULL,
  document   text NOT NULL,
  updated_at timestamptz NOT NULL DEFAULT now()
);
CREATE TABLE IF NOT EXISTS dbform_journal (
  workspace text NOT NULL,
  serial    bigint NOT NULL,
  entry     text NOT NULL,
  PRIMARY KEY (workspace, serial)
);
CREATE TABLE IF NOT EXISTS dbform_locks (
  workspace   text PRIMARY KEY,
  pid         bigint NOT NULL,
  host        text NOT NULL,
  operation   text NOT NULL,
  since       timestamptz NOT NULL,
  backend_pid integer NOT NULL
);
CREATE TABLE IF NOT EXISTS dbform_secrets (
  workspace   text NOT NULL,
  kind        text NOT NULL,
  project_id  text NOT NULL,
  resource_id text NOT NULL,
  field       text NOT NULL,
  value       text NOT NULL,
  PRIMARY KEY (workspace, kind, project_id, resource_id, field)
);
)sql";

// Rows of dbform_secrets as a JSON array of objects, as jsonb_to_recordset reads them.
nlohmann::json secret_rows_json(const std::vector<pg_secrets::Row>& rows) {
  nlohmann::json list = nlohmann::json::array();
  for (const auto& [key, value] : rows) {
    const auto& [kind, project, id, field] = key;
    list.push_back({{"kind", kind}, {"project_id", project}, {"resource_id", id}, {"field", field}, {"value", value}});
  }
  return list;
}

std::string without_password(std::string text, const std::string& secret) {
  if (secret.size() < 3) return text;  // shorter ones would mangle ordinary words
  for (size_t at = text.find(secret); at != std::string::npos; at = text.find(secret, at))
    text.replace(at, secret.size(), "***");
  return text;
}

std::string conninfo_value(PGconn* conn, const char* keyword) {
  std::string value;
  PQconninfoOption* options = PQconninfo(conn);
  for (PQconninfoOption* o = options; o && o->keyword; ++o)
    if (std::string(o->keyword) == keyword && o->val) value = o->val;
  PQconninfoFree(options);
  return value;
}

void ignore_notice(void*, const char*) {}

// The server's own words without the "ERROR:" prefix and the echoed query; its hint when it has one.
std::string result_error(PGconn* conn, PGresult* res) {
  if (!res) return PQerrorMessage(conn);
  const char* primary = PQresultErrorField(res, PG_DIAG_MESSAGE_PRIMARY);
  if (!primary) return PQresultErrorMessage(res)[0] ? PQresultErrorMessage(res) : PQerrorMessage(conn);
  std::string text = primary;
  if (const char* hint = PQresultErrorField(res, PG_DIAG_MESSAGE_HINT)) text += " (" + std::string(hint) + ")";
  return text;
}

}  // namespace

bool is_postgres_url(const std::string& where) {
  return where.rfind("postgres://", 0) == 0 || where.rfind("postgresql://", 0) == 0;
}

namespace {

// libpq's own reading of a connection string (URL or keyword form); nullptr when it cannot read it.
using Conninfo = std::unique_ptr<PQconninfoOption, void (*)(PQconninfoOption*)>;
Conninfo parse_conninfo(const std::string& where) {
  char* error = nullptr;  // never shown: it may quote a part of the string, the password included
  PQconninfoOption* options = PQconninfoParse(where.c_str(), &error);
  if (error) PQfreemem(error);
  return Conninfo(options, PQconninfoFree);
}

bool is_secret_option(const std::string& keyword) { return keyword == "password" || keyword == "sslpassword"; }

}  // namespace

bool names_postgres_state(const std::string& where, const std::string& source) {
  if (is_postgres_url(where)) return true;
  std::string head = where.substr(0, std::min<size_t>(where.size(), 12));
  std::transform(head.begin(), head.end(), head.begin(), [](unsigned char c) { return std::tolower(c); });
  // A URL of another form (POSTGRES://, postgresql:user@host, https://...) taken for a file name
  // would put its password into one, and into every message that names the state.
  if (where.find("://") != std::string::npos || head.rfind("postgres:", 0) == 0 || head.rfind("postgresql:", 0) == 0)
    throw Error(source + " looks like a URL, but not one dbform reads: a state is a file path, a postgres:// or "
                "postgresql:// URL (in lower case), or libpq keywords (host=... dbname=...). Nothing was read or "
                "written; the value is not shown, since it may hold a password");
  if (where.find('=') == std::string::npos) return false;
  if (!parse_conninfo(where))
    throw Error(source + " holds `=` like a PostgreSQL connection string (host=... dbname=...), but libpq cannot "
                "read it: check its keywords and quoting. Nothing was read or written; the string is not shown, "
                "since it may hold a password (a state file's name may not hold `=`)");
  return true;
}

std::string redacted_conninfo(const std::string& where) {
  if (is_postgres_url(where)) return redact_url(where);
  Conninfo options = parse_conninfo(where);
  if (!options) return "(a PostgreSQL connection string)";
  std::vector<std::string> kept;
  for (const PQconninfoOption* o = options.get(); o->keyword; ++o) {
    if (!o->val || is_secret_option(o->keyword)) continue;
    std::string value = o->val;
    if (value.empty() || value.find_first_of(" '\\") != std::string::npos) {
      std::string quoted = "'";
      for (char c : value) quoted += (c == '\'' || c == '\\') ? std::string("\\") + c : std::string(1, c);
      value = quoted + "'";
    }
    kept.push_back(std::string(o->keyword) + "=" + value);
  }
  return join(kept, " ");
}


// FNV-1a, 64 bits: stable across clients, builds and platforms.
long long pg_workspace_lock_key(const std::string& workspace) {
  unsigned long long h = 14695981039346656037ULL;
  for (unsigned char c : "dbform-state:" + workspace) {
    h ^= c;
    h *= 1099511628211ULL;
  }
  return static_cast<long long>(h);
}

bool valid_workspace_name(const std::string& name) {
  if (name.empty() || name.size() > 128 || !std::isalnum(static_cast<unsigned char>(name[0]))) return false;
  return std::all_of(name.begin(), name.end(), [](unsigned char c) {
    return std::isalnum(c) || c == '_' || c == '-' || c == '.';
  });
}

// ---------------------------------------------------------------------------------------------
// PgConnection

PgConnection::PgConnection(const std::string& url) {
  // Defaults first: anything the URL says (it is expanded from dbname) overrides them.
  const char* keys[] = {"connect_timeout", "fallback_application_name", "dbname", nullptr};
  const char* values[] = {"10", "dbform", url.c_str(), nullptr};
  conn_ = PQconnectdbParams(keys, values, 1);
  if (!conn_) throw Error("cannot connect to PostgreSQL: out of memory");
  PQsetNoticeProcessor(conn_, ignore_notice, nullptr);  // e.g. "relation already exists, skipping"
  password_ = conninfo_value(conn_, "password");
  remember_secret(password_);
  const std::string host = PQhost(conn_) ? PQhost(conn_) : "";
  const std::string port = PQport(conn_) ? PQport(conn_) : "";
  where_ = "database " + std::string(PQdb(conn_) ? PQdb(conn_) : "?") + " on " + (host.empty() ? "localhost" : host) +
           (port.empty() ? "" : ":" + port) + " as " + (PQuser(conn_) ? PQuser(conn_) : "?");
  if (PQstatus(conn_) != CONNECTION_OK) {
    std::string detail = PQerrorMessage(conn_);
    PQfinish(conn_);
    conn_ = nullptr;
    throw Error(without_password("cannot connect to the PostgreSQL state (" + where_ + "): " + one_line(detail), password_));
  }
}

PgConnection::~PgConnection() {
  if (conn_) PQfinish(conn_);
}

int PgConnection::server_version() const { return PQserverVersion(conn_); }

void PgConnection::fail(const std::string& detail) const {
  if (PQstatus(conn_) == CONNECTION_BAD)
    throw Error(without_password("lost the connection to the PostgreSQL state (" + where_ + "): " + one_line(detail) +
                          ". A lock this run held went with it, so nothing more is written; run the command again",
                      password_));
  throw Error(without_password("PostgreSQL (" + where_ + "): " + one_line(detail), password_));
}

PgConnection::Result PgConnection::exec(const std::string& sql, const std::vector<Value>& params) {
  std::vector<const char*> values;
  for (const auto& p : params) values.push_back(p ? p->c_str() : nullptr);
  std::unique_ptr<PGresult, void (*)(PGresult*)> res(
      PQexecParams(conn_, sql.c_str(), static_cast<int>(values.size()), nullptr, values.data(), nullptr, nullptr, 0),
      PQclear);
  const ExecStatusType status = res ? PQresultStatus(res.get()) : PGRES_FATAL_ERROR;
  if (status != PGRES_COMMAND_OK && status != PGRES_TUPLES_OK) fail(result_error(conn_, res.get()));
  Result out;
  const int rows = PQntuples(res.get()), cols = PQnfields(res.get());
  for (int i = 0; i < rows; ++i) {
    Row row;
    for (int j = 0; j < cols; ++j)
      row.push_back(PQgetisnull(res.get(), i, j)
                        ? Value()
                        : Value(std::string(PQgetvalue(res.get(), i, j), PQgetlength(res.get(), i, j))));
    out.rows.push_back(std::move(row));
  }
  const std::string affected = PQcmdTuples(res.get());
  out.affected = affected.empty() ? 0 : std::stoll(affected);
  return out;
}

void PgConnection::exec_script(const std::string& sql) {
  std::unique_ptr<PGresult, void (*)(PGresult*)> res(PQexec(conn_, sql.c_str()), PQclear);
  const ExecStatusType status = res ? PQresultStatus(res.get()) : PGRES_FATAL_ERROR;
  if (status != PGRES_COMMAND_OK && status != PGRES_TUPLES_OK) fail(result_error(conn_, res.get()));
}

// ---------------------------------------------------------------------------------------------
// PgStateStore

// Checked before connecting: the name goes into messages and, as a parameter, into every query.
static std::string checked_workspace(std::string name) {
  if (!valid_workspace_name(name))
    throw Error("`" + name + "` is not a valid workspace name (1 to 128 letters, digits, '_', '-' and '.')");
  return name;
}

PgStateStore::PgStateStore(const std::string& url, std::string workspace, Clock* clock)
    : workspace_(checked_workspace(std::move(workspace))),
      describe_(redacted_conninfo(url) + " (workspace " + workspace_ + ")"),
      redacted_url_(redacted_conninfo(url)),
      conn_(url),
      clock_(clock ? *clock : system_clock_),
      lock_key_(pg_workspace_lock_key(workspace_)) {
  // The lock lives as long as this session: keep it open however long apply waits between writes,
  // and let the server notice a client whose host or network vanished (about two minutes) and
  // release its lock.
  conn_.exec_script("SET tcp_keepalives_idle = 60; SET tcp_keepalives_interval = 10; SET tcp_keepalives_count = 6");
  if (conn_.server_version() >= 140000) conn_.exec_script("SET idle_session_timeout = 0");
}

bool PgStateStore::has_table(const std::string& name) {
  return tables_ || conn_.exec("SELECT to_regclass($1) IS NOT NULL", {name}).rows.at(0).at(0) == "t";
}

void PgStateStore::ensure_tables() {
  // Looked for first so that a role allowed to use but not to create the tables works.
  if (tables_ || (has_table("dbform_states") && has_table("dbform_journal") && has_table("dbform_locks") &&
                  has_table(pg_secrets::kTable))) {
    tables_ = true;
    return;
  }
  try {
    conn_.exec_script(kCreateTables);
    tables_ = true;
  } catch (const Error& e) {
    throw Error(std::string(e.what()) +
                ". dbform creates its tables dbform_states, dbform_journal, dbform_locks and dbform_secrets on its first write: grant this user CREATE on "
                "the schema once, or have the owner create them (see docs/state.md, \"Team state on PostgreSQL\")");
  }
}

std::vector<std::string> PgStateStore::workspaces() {
  std::lock_guard<std::mutex> guard(mu_);
  std::vector<std::string> names;
  if (!has_table("dbform_states")) return names;
  for (const auto& row : conn_.exec("SELECT workspace FROM dbform_states ORDER BY workspace").rows)
    names.push_back(row.at(0).value_or(""));
  return names;
}

std::optional<State> PgStateStore::read() {
  auto state = read_snapshot();
  if (!state) return state;
  return checked_unique(std::move(*state), describe_);
}

std::optional<State> PgStateStore::read_snapshot() {
  std::lock_guard<std::mutex> guard(mu_);
  if (!has_table("dbform_states")) return std::nullopt;  // nothing was ever written here
  // Asked before the transaction: a SELECT refused inside it would abort the read. A database made
  // before the secrets table keeps its passwords in the documents, which this role reads.
  const bool secrets_table = has_table(pg_secrets::kTable);
  secrets_readable_ = !secrets_table || conn_.exec("SELECT has_table_privilege(current_user, $1, 'SELECT')",
                                                   {std::string(pg_secrets::kTable)}).rows.at(0).at(0) == "t";
  // The row, its journal and its passwords as of one moment, whoever writes meanwhile.
  conn_.exec("BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY");
  try {
    auto r = conn_.exec("SELECT lineage, serial, document FROM dbform_states WHERE workspace = $1", {workspace_});
    if (r.rows.empty()) {
      conn_.exec("COMMIT");
      return std::nullopt;
    }
    const auto& row = r.rows.front();
    const std::string lineage = row[0].value_or(""), serial = row[1].value_or("");
    pg_secrets::Rows secrets;
    if (secrets_table && secrets_readable_)
      for (const auto& s : conn_.exec("SELECT kind, project_id, resource_id, field, value FROM dbform_secrets "
                                      "WHERE workspace = $1", {workspace_}).rows)
        secrets[{s[0].value_or(""), s[1].value_or(""), s[2].value_or(""), s[3].value_or("")}] = s[4].value_or("");
    inline_secrets_ = false;
    State state = parse_state(with_secrets(row[2].value_or(""), "resources", secrets), describe_, cipher(),
                              &document_key_id_);
    auto hand_edited = [&] {
      return StateError(describe_ + ": the document (lineage " + state.lineage + " serial " +
                        std::to_string(state.serial) + ", with its journal) does not match its row (lineage " + lineage +
                        " serial " + serial + "): it was edited by hand. Nothing was changed. Fix the row, or delete "
                        "it (DELETE FROM dbform_states WHERE workspace = '" + workspace_ + "') and `dbform state push` "
                        "a good copy");
    };
    const long long row_serial = std::stoll(serial);
    if (state.lineage != lineage || state.serial > row_serial) throw hand_edited();
    document_bytes_ = row[2].value_or("").size();
    journal_bytes_ = 0;
    if (state.serial != row_serial) {
      auto entries = conn_.exec(
          "SELECT serial, entry FROM dbform_journal WHERE workspace = $1 AND serial > $2 AND serial <= $3 "
          "ORDER BY serial",
          {workspace_, std::to_string(state.serial), serial});
      for (const auto& entry : entries.rows) {
        apply_journal_entry(state, with_secrets(entry[1].value_or(""), "upsert", secrets),
                            describe_ + " journal serial " + entry[0].value_or(""), cipher());
        journal_bytes_ += entry[1].value_or("").size();
      }
      if (state.serial != row_serial) throw hand_edited();
    }
    conn_.exec("COMMIT");
    return state;
  } catch (...) {
    try {
      conn_.exec("ROLLBACK");
    } catch (const Error&) {
    }
    throw;
  }
}

std::string PgStateStore::with_secrets(const std::string& text, const char* records, const pg_secrets::Rows& rows) {
  nlohmann::json doc = nlohmann::json::parse(text, nullptr, false);
  if (!doc.is_object() || !doc.contains(records)) return text;  // the codec says what is wrong with it
  inline_secrets_ = inline_secrets_ || pg_secrets::held_inline(doc[records]);
  if (!secrets_readable_) return text;  // the placeholders stay: passwords out of this role's reach
  try {
    pg_secrets::restore(doc[records], rows);
  } catch (const StateError& e) {
    throw StateError(describe_ + ": " + e.what() + "; nothing was changed");
  }
  return doc.dump();
}

std::string PgStateStore::without_secrets(const std::string& text, const char* records,
                                          std::vector<pg_secrets::Row>& rows) {
  nlohmann::json doc = nlohmann::json::parse(text);
  rows = pg_secrets::take(doc[records]);
  return std::string(records) == "resources" ? dump_json(doc, 2) + "\n" : dump_json(doc);
}

void PgStateStore::refuse_without_secrets() const {
  if (secrets_readable_) return;
  throw StateError(describe_ + ": this role may not read the table dbform_secrets, which holds the state's "
                   "passwords, so it never writes the state (it could not carry them). Run this with a role granted "
                   "SELECT, INSERT, UPDATE and DELETE on dbform_states, dbform_journal, dbform_locks and "
                   "dbform_secrets (see docs/state.md); nothing was written");
}

void PgStateStore::put_secrets(const std::vector<pg_secrets::Row>& rows) {
  if (rows.empty()) return;
  // One statement for every row (a whole write of thousands of services is one round trip, not
  // thousands); the rows travel as JSON, so that no SQL text is made of them.
  conn_.exec("INSERT INTO dbform_secrets (workspace, kind, project_id, resource_id, field, value) "
             "SELECT $1, n.kind, n.project_id, n.resource_id, n.field, n.value FROM jsonb_to_recordset($2::jsonb) "
             "AS n(kind text, project_id text, resource_id text, field text, value text)",
             {workspace_, secret_rows_json(rows).dump()});
}

bool PgStateStore::in_transaction(const std::function<bool()>& body) {
  conn_.exec("BEGIN");
  bool committed = false;
  try {
    committed = body();
    conn_.exec(committed ? "COMMIT" : "ROLLBACK");
  } catch (...) {
    try {
      conn_.exec("ROLLBACK");
    } catch (const Error&) {
    }
    throw;
  }
  return committed;
}

void PgStateStore::write(State& state) {
  std::lock_guard<std::mutex> guard(mu_);
  refuse_unless_writer();  // done by the lock already: a write without it (a test's) asks too
  const std::string expected = std::to_string(state.serial);
  const std::string next = std::to_string(state.serial + 1);
  ++state.serial;  // the document carries the serial it is stored with
  std::string document;
  try {
    document = serialize_state(state, cipher());
  } catch (...) {
    --state.serial;
    throw;
  }
  --state.serial;
  std::vector<pg_secrets::Row> secrets;
  document = without_secrets(document, "resources", secrets);
  // Compare-and-swap: only the row this state was read from is replaced, in one committed
  // transaction with the journal the new document holds (dropped) and the state's passwords (all
  // rewritten: a document that still held its own is moved to the table in the same transaction).
  const bool swapped = in_transaction([&] {
    auto updated = conn_.exec(
        "WITH up AS (UPDATE dbform_states SET serial = $4, document = $5, updated_at = now() "
        "            WHERE workspace = $1 AND lineage = $2 AND serial = $3 RETURNING workspace), "
        "     folded AS (DELETE FROM dbform_journal WHERE workspace IN (SELECT workspace FROM up)) "
        "SELECT count(*) FROM up",
        {workspace_, state.lineage, expected, next, document});
    if (updated.rows.at(0).at(0) != "1") {
      // No row of that lineage and serial: either the workspace is new, or someone else wrote. A new
      // workspace starts without journal (one left by a row deleted by hand goes with it).
      auto inserted = conn_.exec(
          "WITH ins AS (INSERT INTO dbform_states (workspace, lineage, serial, document) VALUES ($1, $2, $3, $4) "
          "             ON CONFLICT (workspace) DO NOTHING RETURNING workspace), "
          "     stale AS (DELETE FROM dbform_journal WHERE workspace IN (SELECT workspace FROM ins)) "
          "SELECT count(*) FROM ins",
          {workspace_, state.lineage, next, document});
      if (inserted.rows.at(0).at(0) != "1") return false;
    }
    conn_.exec("DELETE FROM dbform_secrets WHERE workspace = $1", {workspace_});
    put_secrets(secrets);
    return true;
  });
  if (!swapped) refuse_write(state);
  inline_secrets_ = false;
  ++state.serial;
  document_bytes_ = document.size();
  document_key_id_ = written_key_id(state, cipher());
  state.secrets_key_id = document_key_id_;
  state.sealed_whole = false;
  journal_bytes_ = 0;
}

void PgStateStore::write_changes(State& state, const std::vector<std::string>& changed) {
  // A journal is in the form of its document: one in another form (plain, another key, sealed
  // whole) is rewritten whole first; so is the first state of a database without the tables yet.
  if (std::unique_lock<std::mutex> guard(mu_);
      document_key_id_ == written_key_id(state, cipher()) && !state.sealed_whole && !inline_secrets_ &&
      has_table("dbform_journal") && has_table(pg_secrets::kTable)) {
    refuse_without_secrets();
    const std::string next = std::to_string(state.serial + 1);
    std::vector<pg_secrets::Row> secrets;
    const std::string entry = without_secrets(journal_entry(state, changed, cipher()), "upsert", secrets);
    // One statement, so one round trip and atomic without BEGIN and COMMIT: the row's serial moves
    // on only with its journal entry and the changed records' passwords (each changed record's rows
    // replaced: a cleared one goes). The records and rows travel as JSON, read by
    // jsonb_to_recordset, so that no SQL text is made of them.
    nlohmann::json records = nlohmann::json::array();
    for (const auto& address : changed)
      if (const ResourceRecord* r = state.find(address))
        records.push_back({{"kind", kind_name(r->kind)},
                           {"project_id", r->project_id},
                           {"resource_id", r->id.empty() ? r->address : r->id}});
    const nlohmann::json rows = secret_rows_json(secrets);
    auto up = conn_.exec(
        "WITH up AS (UPDATE dbform_states SET serial = $4, updated_at = now() "
        "            WHERE workspace = $1 AND lineage = $2 AND serial = $3 RETURNING workspace), "
        "     logged AS (INSERT INTO dbform_journal (workspace, serial, entry) SELECT workspace, $4, $5 FROM up), "
        "     fresh AS (SELECT * FROM jsonb_to_recordset($7::jsonb) "
        "               AS n(kind text, project_id text, resource_id text, field text, value text)), "
        "     cleared AS (DELETE FROM dbform_secrets s USING jsonb_to_recordset($6::jsonb) "
        "                 AS c(kind text, project_id text, resource_id text) "
        "                 WHERE s.workspace IN (SELECT workspace FROM up) AND s.kind = c.kind "
        "                   AND s.project_id = c.project_id AND s.resource_id = c.resource_id "
        "                   AND NOT EXISTS (SELECT 1 FROM fresh n WHERE n.kind = s.kind AND n.project_id = s.project_id "
        "                                   AND n.resource_id = s.resource_id AND n.field = s.field)), "
        "     put AS (INSERT INTO dbform_secrets (workspace, kind, project_id, resource_id, field, value) "
        "             SELECT up.workspace, n.kind, n.project_id, n.resource_id, n.field, n.value FROM up, fresh n "
        "             ON CONFLICT (workspace, kind, project_id, resource_id, field) DO UPDATE SET value = EXCLUDED.value) "
        "SELECT count(*) FROM up",
        {workspace_, state.lineage, std::to_string(state.serial), next, entry, records.dump(), rows.dump()});
    const bool appended = up.rows.at(0).at(0) == "1";
    if (appended) {
      ++state.serial;
      journal_bytes_ += entry.size();
      if (!journal_outgrew(journal_bytes_, document_bytes_, journal_floor())) return;
    }
  }
  // A new workspace (no row to append to), a lost race (refused there), or a journal grown larger
  // than its document: a whole write.
  write(state);
}

void PgStateStore::compact(State& state) {
  if (journal_bytes_ > 0) write(state);
}

void PgStateStore::refuse_write(const State& state) {
  auto now = conn_.exec("SELECT lineage, serial FROM dbform_states WHERE workspace = $1", {workspace_});
  std::string found = now.rows.empty() ? "no state"
                                       : "lineage " + now.rows[0][0].value_or("") + " serial " + now.rows[0][1].value_or("");
  throw StateError(describe_ + " changed since it was read (now " + found + ", expected lineage " + state.lineage +
                   " serial " + std::to_string(state.serial) + "); nothing was overwritten. Run the command again");
}

std::string PgStateStore::command_line_args() const {
  return "--state " + shell_quote(redacted_url_) + " --workspace " + workspace_;
}

}  // namespace dbform
