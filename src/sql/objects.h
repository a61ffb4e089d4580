#pragma once
// The objects dbform keeps inside a service's database (roles, schemas, extensions, grants), in
// PostgreSQL's own terms: what a manifest declares once the layers above have converted it, and
// what the catalogs show of the same names. Plain values; the SQL that makes one into the other is
// a pure function (statements_for) and runs in one transaction (apply_objects).
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "util/clock.h"
#include "util/privileges.h"

#include "sql/session.h"

namespace dbform {

struct DbRole {
  std::string name;
  bool login = false;
  long connection_limit = -1;                   // -1: none
  std::vector<std::string> member_of;           // sorted
  std::map<std::string, std::string> settings;  // ALTER ROLE ... SET, for every database (the role's own)
  bool operator==(const DbRole&) const = default;
};

struct DbSchema {
  std::string name;
  std::string owner;  // always filled (the caller's default is the admin)
  bool operator==(const DbSchema&) const = default;
};

struct DbExtension {
  std::string name;
  std::string version;  // as read: informational, not compared
  bool operator==(const DbExtension& o) const { return name == o.name; }
};

struct DbGrant {
  enum class On { Schema, AllTables, AllSequences, Table, Sequence };
  std::string role;
  std::string schema;
  On on = On::Schema;
  std::string object;                   // the table's or sequence's name for Table and Sequence
  std::vector<std::string> privileges;  // upper case, sorted, ALL expanded
  // For `all` grants as read: the privileges of the relations now in the schema and those the
  // default privileges give the ones made later, each counted as `privileges` is (a declared one
  // only when held everywhere, an undeclared one when held anywhere). statements_for grants each
  // part only where it is missing. Not compared: `privileges` says both at once.
  std::optional<std::vector<std::string>> existing, future;
  // Of `privileges`, those held WITH GRANT OPTION (as read: on any of an `all` grant's relations or
  // default privileges), which let the role give them on; none is ever declared, so any is drift.
  std::vector<std::string> grant_option;
  bool operator==(const DbGrant& o) const {
    return role == o.role && schema == o.schema && on == o.on && object == o.object && privileges == o.privileges &&
           grant_option == o.grant_option;
  }
};

// Something a role owns or holds privileges on, as the catalogs describe it.
struct DbHeld {
  std::string type;         // "schema", "table", "sequence", "default tables", "default sequences", "other"
  std::string schema;       // the schema of a schema, relation or default privileges; "" otherwise
  std::string name;         // a relation's name
  std::string description;  // pg_describe_object(): `table orders.items`
  bool operator==(const DbHeld&) const = default;
};

// What the catalogs say beyond the objects themselves: what blocks a delete (PostgreSQL refuses
// to drop a role that owns or holds, a schema with contents, an extension others use, and dbform
// never cascades), and what the plan needs to address owners and the admin.
struct DbCatalogFacts {
  std::map<std::string, std::vector<DbHeld>> owned_by;       // role -> what it owns here (or cluster-wide)
  std::map<std::string, std::vector<DbHeld>> privileges_of;  // role -> what it holds privileges on
  std::map<std::string, std::vector<std::string>> schema_contents;       // schema -> its objects (at most 10, then "N more")
  std::map<std::string, std::vector<std::string>> extension_dependents;  // extension -> objects using it
  std::vector<std::string> builtin_roles;    // of the names asked: superusers and PostgreSQL's own
  std::map<std::string, std::string> schema_owners;  // every schema asked (declared or named by a grant)
  std::vector<std::string> admin_member_of;  // of the roles asked: those whose privileges the admin has
  std::string admin;                         // current_user
  bool operator==(const DbCatalogFacts&) const = default;
};

struct DbObjects {
  std::vector<DbRole> roles;
  std::vector<DbSchema> schemas;
  std::vector<DbExtension> extensions;
  std::vector<DbGrant> grants;
  DbCatalogFacts facts;  // as read only; not compared (a declaration has none)
  bool operator==(const DbObjects& o) const {
    return roles == o.roles && schemas == o.schemas && extensions == o.extensions && grants == o.grants;
  }
};

// --- privileges -----------------------------------------------------------------------------

// PostgreSQL 17 added MAINTAIN on tables (and in ALL): what ALL means depends on the server
// (util/privileges.h knows which privilege came when).
GrantTarget grant_target(DbGrant::On on);
// The privileges GRANT accepts on the object type at that server_version_num (0: the newest).
std::vector<std::string> privileges_for(DbGrant::On on, int server_version_num);
// What ALL means there: the same list.
std::vector<std::string> expand_all(DbGrant::On on, int server_version_num);
// "" when `privilege` (any case, ALL included) is one of the type's, else a message naming the
// allowed ones ("TRUNCATE is not a privilege on schemas: allowed are USAGE, CREATE or ALL").
std::string privilege_error(DbGrant::On on, const std::string& privilege, int server_version_num);
// Upper case, ALL expanded, sorted, without repeats; throws Error with privilege_error's message.
std::vector<std::string> normalize_privileges(DbGrant::On on, const std::vector<std::string>& privileges,
                                              int server_version_num);
// "schemas", "tables", "sequences", "table", "sequence": as messages and addresses say them.
std::string on_word(DbGrant::On on);

// --- names ----------------------------------------------------------------------------------

// The one place SQL text is made from names and values (as PostgreSQL's quote_ident and
// quote_literal, always quoted): nothing else concatenates a name into a statement. A NUL, which
// PostgreSQL cannot store, is refused (Error).
std::string quote_ident(const std::string& name);
std::string quote_literal(const std::string& value);
// A text[] parameter's literal ({"a","b\"c"}): names go to the catalogs' queries as parameters.
std::string text_array(const std::vector<std::string>& values);

// A role's settings as PostgreSQL keeps them. Parameter names are alike whatever their case, and a
// built-in one is stored in its own spelling (timezone as TimeZone). A list parameter's value
// (search_path, temp_tablespaces, the preload libraries) is a list of names, written as in
// postgresql.conf ("$user", orders): sent as one literal per element, it is stored as the elements
// quoted as identifiers and joined by ", ", so values compare as their elements.
bool same_setting_name(const std::string& a, const std::string& b);
bool same_setting_value(const std::string& name, const std::string& a, const std::string& b);
// What follows `SET name TO`: the value's literal, or for a list parameter one per element.
std::string setting_value_sql(const std::string& name, const std::string& value);

// Address suffixes under the service: roles/NAME, schemas/NAME, extensions/NAME,
// grants/ROLE/SCHEMA, grants/ROLE/SCHEMA/tables, .../sequences, .../tables/NAME, .../sequences/NAME.
std::string address_of(const DbRole& role);
std::string address_of(const DbSchema& schema);
std::string address_of(const DbExtension& extension);
std::string address_of(const DbGrant& grant);

// Whether two grants are about the same (role, object): the key of an authoritative grant.
bool same_target(const DbGrant& a, const DbGrant& b);

// The item of `items` named `name` (a role, schema or extension); nullptr when none is.
template <typename T>
const T* find_named(const std::vector<T>& items, const std::string& name) {
  for (const auto& i : items)
    if (i.name == name) return &i;
  return nullptr;
}
// The grant of `grants` about the same (role, object) as `like`; nullptr when none is.
const DbGrant* find_grant(const std::vector<DbGrant>& grants, const DbGrant& like);

// --- reading (objects_read.cpp) -------------------------------------------------------------

// The server's server_version_num (150008); throws Error when it cannot be read.
int server_version(SqlSession& session);

// What the catalogs show of the names in `wanted` (its roles, schemas, extensions and grants; a
// grant's privileges say which ones count as declared), with the facts a delete needs, in one
// read-only transaction, each query ended by the server past `statement_timeout` (0: the
// session's own, which may be none). A name the catalogs do not show is absent from the result.
// Throws Error naming the query that failed (a timeout included).
DbObjects read_objects(SqlSession& session, const DbObjects& wanted, Duration statement_timeout = Duration{0});

// --- planning (objects_plan.cpp) ------------------------------------------------------------

struct DbStatement {
  std::string sql;
  std::string object;  // the address suffix: roles/app, grants/app/orders/tables
  std::string kind;    // "CREATE ROLE", "GRANT", "ALTER DEFAULT PRIVILEGES", "DROP SCHEMA"...
  bool secret = false; // holds a password verifier: its text is never logged nor shown
  bool operator==(const DbStatement&) const = default;
};

struct ObjectsContext {
  std::string admin = "tsdbadmin";  // who runs the statements: owns new objects, never managed
  int server_version_num = 0;       // ALL's meaning (0: the newest)
  std::map<std::string, std::string> verifiers;  // login role -> SCRAM verifier to set (new or rotated)
};

// A delete PostgreSQL would refuse without CASCADE, or one dbform never makes.
struct DbRefusal {
  std::string object;  // address suffix
  std::string reason;  // "it owns table orders.items, schema x"
};

// The refusals of `to_delete` against the catalogs' facts in `observed`.
std::vector<DbRefusal> delete_refusals(const DbObjects& observed, const DbObjects& to_delete, const ObjectsContext& ctx);

// The statements that make the catalogs show `desired` and nothing of `to_delete`, in dependency
// order: roles, memberships, schemas, extensions, grants, default privileges, then the deletes in
// reverse. Each desired grant is authoritative for its (role, object). Pure. Throws Error naming
// every refusal (delete_refusals) and every built-in role or the admin named as managed.
// Where PostgreSQL's behaviour decides more than "authoritative" says:
//  - an owner's own privileges never count (PostgreSQL gives an owner everything whatever its
//    ACL): relations the grantee owns are left out of `all`, and no default privileges FOR ROLE x
//    TO x are made (else the owner of a schema's tables would have TRUNCATE revoked forever);
//  - the admin joins each role that owns a declared schema (GRANT owner TO admin): CREATE SCHEMA
//    ... AUTHORIZATION and ALTER DEFAULT PRIVILEGES FOR ROLE owner need it (15: CREATEROLE grants
//    any non-superuser role; 16 on: the creator has ADMIN, so membership is asked of pg_has_role);
//  - role settings are the role's own (ALTER ROLE r SET, every database): a role is cluster-wide;
//  - member_of is authoritative like grants: a membership granted outside is revoked;
//  - deleting a grant revokes ALL on its object (and, for `all`, its default privileges).
// Limits it names rather than works around: a table of the schema owned by a role the admin is
// not a member of makes GRANT ... ON ALL TABLES fail (the step rolls back); a member of a
// schema's owner may always create in it.
std::vector<DbStatement> statements_for(const DbObjects& desired, const DbObjects& observed,
                                        const DbObjects& to_delete, const ObjectsContext& ctx);

// --- applying (objects_apply.cpp) -----------------------------------------------------------

struct ObjectsOutcome {
  enum class Result { Applied, Failed, Unknown };  // Unknown: COMMIT's answer was lost
  Result result = Result::Applied;
  std::string object;   // the failed statement's address suffix ("" for BEGIN/COMMIT)
  std::string kind;     // its kind ("COMMIT", "BEGIN" for those)
  std::string message;  // PostgreSQL's message, detail and hint; never a secret statement's text
  Cancelled cancelled = Cancelled::No;
  size_t applied = 0;   // statements that ran before the failure (all rolled back)
};

// BEGIN, each statement (watched by `limit`), COMMIT; on a failure ROLLBACK and say which.
ObjectsOutcome apply_objects(SqlSession& session, const std::vector<DbStatement>& statements,
                             const StatementLimit& limit);

// --- one service's step (objects_run.cpp) ---------------------------------------------------

// What one service's step makes: its declared objects (privileges as written, ALL unexpanded),
// those to delete, and the passwords to set on login roles (new ones and rotations), in clear:
// they never leave the client but as verifiers.
struct ObjectsRequest {
  DbObjects desired;
  DbObjects to_delete;
  std::map<std::string, std::string> passwords;  // login role -> password
  // Login roles whose recorded password is set only when the catalogs do not show the role (it was
  // dropped outside dbform and is made again): login role -> its recorded password.
  std::map<std::string, std::string> recorded_passwords;
};

struct ObjectsRun {
  ObjectsOutcome outcome;
  size_t statements = 0;  // sent in the transaction (0: the catalogs showed everything as declared)
  DbObjects observed;     // what the catalogs show after it, of the names asked (to record)
  bool found_committed = false;  // COMMIT's answer was lost, and the catalogs show it was made
  int server_version_num = 0;    // the server's (what ALL means there)
};

// The step of one service's objects: connects as the admin (`target`), reads the server's version
// and the catalogs first (so that nothing is made twice, an earlier run's lost commit included),
// sends the statements that remain in one transaction, and reads the catalogs again. A COMMIT
// whose answer was lost is decided by a new connection's read: made (Applied, found_committed) or
// not (Failed, to be made by the next run). Throws Error when it cannot connect or read (naming
// why, never a password).
ObjectsRun run_objects(const SqlConnector& connector, const ConnectTarget& target, const ObjectsRequest& request,
                       const SqlSessionOptions& options, const StatementLimit& limit);

}  // namespace dbform
