// Reading the objects dbform keeps from the catalogs, for the names asked only, in one read-only
// transaction (the session's statement timeout bounds each query). Names travel as text[]
// parameters, never inside the query's text.
#include <algorithm>
#include <cstdlib>
#include <set>
#include <tuple>

#include "sql/objects.h"
#include "util/error.h"

namespace dbform {

namespace {

// The relation kinds GRANT ... ON ALL TABLES reaches (tables, views, materialized views, foreign
// and partitioned tables), and sequences.
const char* const kTableKinds = "('r', 'p', 'v', 'm', 'f')";

const std::string kWho =
    "SELECT current_user, d.oid::text FROM pg_database d WHERE d.datname = current_database()";
const std::string kRoles =
    "SELECT r.rolname, r.rolcanlogin::text, r.rolconnlimit::text, "
    "(r.rolsuper OR r.oid < 16384 OR left(r.rolname, 3) = 'pg_')::text FROM pg_roles r WHERE r.rolname = ANY($1::text[])";
const std::string kMemberships =
    "SELECT DISTINCT m.rolname, g.rolname FROM pg_auth_members a JOIN pg_roles m ON m.oid = a.member "
    "JOIN pg_roles g ON g.oid = a.roleid WHERE m.rolname = ANY($1::text[])";
// The roles whose privileges the admin uses as its own (what ALTER DEFAULT PRIVILEGES FOR ROLE and
// granting on the role's tables need). Asked of pg_has_role, not pg_auth_members: PostgreSQL 16
// on makes a role's creator a member with ADMIN only, which does not count.
const std::string kAdminUses =
    "SELECT g.rolname FROM pg_roles g WHERE g.rolname = ANY($1::text[]) AND pg_has_role(current_user, g.oid, 'USAGE')";
const std::string kSettings =
    "SELECT r.rolname, c.setting FROM pg_db_role_setting s JOIN pg_roles r ON r.oid = s.setrole "
    "CROSS JOIN LATERAL unnest(s.setconfig) AS c(setting) WHERE s.setdatabase = 0 AND r.rolname = ANY($1::text[])";
const std::string kSchemaOwners =
    "SELECT n.nspname, pg_get_userbyid(n.nspowner) FROM pg_namespace n WHERE n.nspname = ANY($1::text[])";
// What DROP SCHEMA without CASCADE would refuse for: the objects that live in it.
const std::string kSchemaContents =
    "SELECT n.nspname, x.what, x.total::text FROM pg_namespace n CROSS JOIN LATERAL ("
    "SELECT pg_describe_object(d.classid, d.objid, d.objsubid) AS what, count(*) OVER () AS total FROM pg_depend d "
    "WHERE d.refclassid = 'pg_namespace'::regclass AND d.refobjid = n.oid AND d.deptype = 'n' ORDER BY 1 LIMIT 10) x "
    "WHERE n.nspname = ANY($1::text[])";
const std::string kExtensionVersions =
    "SELECT e.extname, e.extversion FROM pg_extension e WHERE e.extname = ANY($1::text[])";
// What DROP EXTENSION without CASCADE would refuse for: objects (not its own members) depending on
// it or on one of its members (a column of its type, another extension).
const std::string kExtensionDependents =
    "SELECT e.extname, x.what, x.total::text FROM pg_extension e CROSS JOIN LATERAL ("
    "SELECT pg_describe_object(d.classid, d.objid, d.objsubid) AS what, count(*) OVER () AS total FROM pg_depend d "
    "WHERE d.deptype = 'n' AND ((d.refclassid = 'pg_extension'::regclass AND d.refobjid = e.oid) OR "
    "(d.refclassid, d.refobjid) IN (SELECT m.classid, m.objid FROM pg_depend m WHERE m.refclassid = "
    "'pg_extension'::regclass AND m.refobjid = e.oid AND m.deptype = 'e')) AND NOT EXISTS (SELECT 1 FROM pg_depend o "
    "WHERE o.classid = d.classid AND o.objid = d.objid AND o.refclassid = 'pg_extension'::regclass AND "
    "o.refobjid = e.oid AND o.deptype = 'e') ORDER BY 1 LIMIT 10) x WHERE e.extname = ANY($1::text[])";
const std::string kSchemaAcl =
    "SELECT n.nspname, g.rolname, a.privilege_type, a.is_grantable::text FROM pg_namespace n CROSS JOIN LATERAL "
    "aclexplode(coalesce(n.nspacl, acldefault('n', n.nspowner))) a JOIN pg_roles g ON g.oid = a.grantee "
    "WHERE n.nspname = ANY($1::text[]) AND g.rolname = ANY($2::text[])";
const std::string kRelations =
    std::string("SELECT n.nspname, c.relname, (c.relkind = 'S')::text, pg_get_userbyid(c.relowner) FROM pg_class c JOIN pg_namespace n ON n.oid = "
                "c.relnamespace WHERE n.nspname = ANY($1::text[]) AND (c.relkind = 'S' OR c.relkind IN ") +
    kTableKinds + ")";
const std::string kRelationAcl =
    std::string("SELECT n.nspname, c.relname, (c.relkind = 'S')::text, g.rolname, a.privilege_type, a.is_grantable::text FROM pg_class c "
                "JOIN pg_namespace n ON n.oid = c.relnamespace CROSS JOIN LATERAL aclexplode(coalesce(c.relacl, "
                "acldefault((CASE WHEN c.relkind = 'S' THEN 's' ELSE 'r' END)::\"char\", c.relowner))) a "
                "JOIN pg_roles g ON g.oid = a.grantee WHERE n.nspname = ANY($1::text[]) AND "
                "g.rolname = ANY($2::text[]) AND (c.relkind = 'S' OR c.relkind IN ") +
    kTableKinds + ")";
const std::string kDefaultAcl =
    "SELECT n.nspname, pg_get_userbyid(d.defaclrole), d.defaclobjtype::text, g.rolname, a.privilege_type, "
    "a.is_grantable::text "
    "FROM pg_default_acl d JOIN pg_namespace n ON n.oid = d.defaclnamespace CROSS JOIN LATERAL "
    "aclexplode(d.defaclacl) a JOIN pg_roles g ON g.oid = a.grantee WHERE n.nspname = ANY($1::text[]) AND "
    "g.rolname = ANY($2::text[]) AND d.defaclobjtype IN ('r', 'S')";
// What DROP ROLE would refuse for, here and cluster-wide: what each role owns ('o') and holds
// privileges on ('a'), told apart by what dbform's own grants can cover.
const std::string kHeld =
    "SELECT r.rolname, s.deptype::text, CASE WHEN s.classid = 'pg_namespace'::regclass THEN 'schema' "
    "WHEN s.classid = 'pg_class'::regclass AND s.objsubid = 0 AND c.relkind = 'S' THEN 'sequence' "
    "WHEN s.classid = 'pg_class'::regclass AND s.objsubid = 0 THEN 'table' "
    "WHEN s.classid = 'pg_default_acl'::regclass AND da.defaclobjtype = 'r' THEN 'default tables' "
    "WHEN s.classid = 'pg_default_acl'::regclass AND da.defaclobjtype = 'S' THEN 'default sequences' "
    "ELSE 'other' END, coalesce(n.nspname, cn.nspname, dn.nspname, ''), coalesce(c.relname, ''), "
    "coalesce(pg_describe_object(s.classid, s.objid, s.objsubid), 'an object') FROM pg_shdepend s "
    "JOIN pg_roles r ON r.oid = s.refobjid "
    "LEFT JOIN pg_namespace n ON s.classid = 'pg_namespace'::regclass AND n.oid = s.objid "
    "LEFT JOIN pg_class c ON s.classid = 'pg_class'::regclass AND c.oid = s.objid "
    "LEFT JOIN pg_namespace cn ON cn.oid = c.relnamespace "
    "LEFT JOIN pg_default_acl da ON s.classid = 'pg_default_acl'::regclass AND da.oid = s.objid "
    "LEFT JOIN pg_namespace dn ON dn.oid = da.defaclnamespace "
    "WHERE s.refclassid = 'pg_authid'::regclass AND s.deptype IN ('o', 'a') AND r.rolname = ANY($1::text[]) "
    "AND (s.dbid = 0 OR s.dbid = (SELECT oid FROM pg_database WHERE datname = current_database())) ORDER BY 1, 6";

class CatalogReader {
 public:
  explicit CatalogReader(SqlSession& session) : session_(session) {}

  std::vector<SqlRow> rows(const std::string& query, const std::vector<std::string>& params, const char* what) {
    SqlResult r = params.empty() ? session_.exec(query) : session_.exec_params(query, params);
    if (!r.ok) {
      session_.exec("ROLLBACK");
      throw Error(std::string("could not read the ") + what + " from the catalogs: " + r.error.message);
    }
    return std::move(r.rows);
  }

 private:
  SqlSession& session_;
};

std::string cell(const SqlRow& row, size_t i) { return i < row.size() ? row[i].value_or("") : ""; }

template <typename T>
std::vector<std::string> names_of(const std::vector<T>& items) {
  std::vector<std::string> out;
  for (const auto& i : items) out.push_back(i.name);
  return out;
}

void sort_unique(std::vector<std::string>& v) {
  std::sort(v.begin(), v.end());
  v.erase(std::unique(v.begin(), v.end()), v.end());
}

// Lists of at most ten objects, with the rest counted.
void add_limited(std::map<std::string, std::vector<std::string>>& to, const SqlRow& row) {
  auto& list = to[cell(row, 0)];
  list.push_back(cell(row, 1));
  const long total = std::atol(cell(row, 2).c_str());
  if (list.size() == 10 && total > 10) list.push_back(std::to_string(total - 10) + " more");
}

// A setting read in PostgreSQL's spelling (TimeZone; a list's elements quoted) under the declared
// name, with the declared text when it means the same: what is as declared reads so.
void as_declared(std::map<std::string, std::string>& read, const std::map<std::string, std::string>& declared) {
  std::map<std::string, std::string> out;
  for (auto& [key, value] : read) {
    std::string name = key;
    for (const auto& [want, want_value] : declared)
      if (same_setting_name(key, want)) {
        name = want;
        if (same_setting_value(want, value, want_value)) value = want_value;
      }
    out[name] = std::move(value);
  }
  read = std::move(out);
}

// The mark of a privilege held WITH GRANT OPTION in an ACL's set (no privilege's name has it).
const char* const kGrantable = "*";

// The privileges of one relation or default-privileges entry, for one role.
using PrivilegeSet = std::set<std::string>;

// As DbGrant::existing and ::future say: a declared privilege when every set holds it (none: all
// do), an undeclared one when any does.
std::vector<std::string> counted(const std::vector<PrivilegeSet>& sets, const std::vector<std::string>& declared) {
  std::set<std::string> out;
  for (const auto& p : declared)
    if (std::all_of(sets.begin(), sets.end(), [&](const PrivilegeSet& s) { return s.count(p) > 0; })) out.insert(p);
  for (const auto& s : sets)
    for (const auto& p : s)
      if (std::find(declared.begin(), declared.end(), p) == declared.end()) out.insert(p);
  return {out.begin(), out.end()};
}

// Declared privileges in both parts, undeclared ones in either.
std::vector<std::string> combined(const std::vector<std::string>& existing, const std::vector<std::string>& future,
                                  const std::vector<std::string>& declared) {
  std::set<std::string> out;
  auto has = [](const std::vector<std::string>& v, const std::string& p) {
    return std::find(v.begin(), v.end(), p) != v.end();
  };
  for (const auto& p : existing)
    if (!has(declared, p) || has(future, p)) out.insert(p);
  for (const auto& p : future)
    if (!has(declared, p)) out.insert(p);
  return {out.begin(), out.end()};
}

struct Acls {
  // (schema, role) -> privileges on the schema
  std::map<std::pair<std::string, std::string>, PrivilegeSet> schema;
  // (schema, is sequence) -> relation name -> owner
  std::map<std::pair<std::string, bool>, std::map<std::string, std::string>> relations;
  // (schema, relation, role) -> privileges
  std::map<std::tuple<std::string, std::string, std::string>, PrivilegeSet> relation;
  // (schema, owner, objtype, role) -> privileges
  std::map<std::tuple<std::string, std::string, std::string, std::string>, PrivilegeSet> defaults;
};

std::optional<DbGrant> observed_grant(const DbGrant& want, const Acls& acls, const DbCatalogFacts& facts,
                                      const std::set<std::string>& roles_seen) {
  auto owner = facts.schema_owners.find(want.schema);
  if (owner == facts.schema_owners.end() || !roles_seen.count(want.role)) return std::nullopt;
  DbGrant got = want;
  got.privileges.clear();
  // A privilege held WITH GRANT OPTION is read as PRIVILEGE* (kGrantable): counted as held, and
  // noted in grant_option.
  std::set<std::string> grantable;
  auto set_of = [&grantable](const auto& map, const auto& key) {
    auto it = map.find(key);
    PrivilegeSet out;
    if (it == map.end()) return out;
    for (const auto& p : it->second) {
      const bool option = p.size() > 1 && p.back() == kGrantable[0];
      if (option) grantable.insert(p.substr(0, p.size() - 1));
      out.insert(option ? p.substr(0, p.size() - 1) : p);
    }
    return out;
  };
  auto with_option = [&grantable](DbGrant g) {
    for (const auto& p : g.privileges)
      if (grantable.count(p)) g.grant_option.push_back(p);
    return g;
  };
  // An owner holds every privilege on what it owns, whatever its ACL says: a grant to the owner is
  // as declared there, and revoking an owner's own privileges is never planned.
  const bool sequences = want.on == DbGrant::On::AllSequences || want.on == DbGrant::On::Sequence;
  switch (want.on) {
    case DbGrant::On::Schema: {
      if (owner->second == want.role) return want;
      const auto s = set_of(acls.schema, std::make_pair(want.schema, want.role));
      got.privileges.assign(s.begin(), s.end());
      return with_option(got);
    }
    case DbGrant::On::Table:
    case DbGrant::On::Sequence: {
      auto rel = acls.relations.find({want.schema, sequences});
      if (rel == acls.relations.end() || !rel->second.count(want.object)) return std::nullopt;
      if (rel->second.at(want.object) == want.role) return want;
      const auto s = set_of(acls.relation, std::make_tuple(want.schema, want.object, want.role));
      got.privileges.assign(s.begin(), s.end());
      return with_option(got);
    }
    case DbGrant::On::AllTables:
    case DbGrant::On::AllSequences: break;
  }
  std::vector<PrivilegeSet> now, later;
  if (auto rel = acls.relations.find({want.schema, sequences}); rel != acls.relations.end())
    for (const auto& [name, relowner] : rel->second)
      if (relowner != want.role) now.push_back(set_of(acls.relation, std::make_tuple(want.schema, name, want.role)));
  const std::string objtype = sequences ? "S" : "r";
  std::vector<std::string> makers{owner->second};
  if (facts.admin != owner->second) makers.push_back(facts.admin);
  for (const auto& maker : makers)
    if (!maker.empty() && maker != want.role)
      later.push_back(set_of(acls.defaults, std::make_tuple(want.schema, maker, objtype, want.role)));
  got.existing = counted(now, want.privileges);
  got.future = counted(later, want.privileges);
  got.privileges = combined(*got.existing, *got.future, want.privileges);
  return with_option(got);
}

}  // namespace

int server_version(SqlSession& session) {
  SqlResult r = session.exec("SELECT current_setting('server_version_num')");
  if (!r.ok || r.rows.empty()) throw Error("could not read the server's version: " + r.error.message);
  const int v = std::atoi(cell(r.rows[0], 0).c_str());
  if (v <= 0) throw Error("the server's version number is not a number: '" + cell(r.rows[0], 0) + "'");
  return v;
}

DbObjects read_objects(SqlSession& session, const DbObjects& wanted, Duration statement_timeout) {
  SqlResult begin = session.exec("BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY");
  if (!begin.ok) throw Error("could not begin a read-only transaction: " + begin.error.message);
  CatalogReader read(session);
  // The queries go with parameters, which dbform cannot watch itself: the server ends them.
  if (statement_timeout.count() > 0)
    if (SqlResult set = session.exec("SET LOCAL statement_timeout = " + std::to_string(statement_timeout.count()));
        !set.ok) {
      session.exec("ROLLBACK");
      throw Error("could not set the catalogs' read statement timeout: " + set.error.message);
    }
  DbObjects got;
  DbCatalogFacts& facts = got.facts;

  std::vector<std::string> role_names = names_of(wanted.roles), schema_names = names_of(wanted.schemas);
  for (const auto& g : wanted.grants) {
    role_names.push_back(g.role);
    schema_names.push_back(g.schema);
  }
  sort_unique(role_names);
  sort_unique(schema_names);
  const std::string roles_param = text_array(role_names), schemas_param = text_array(schema_names);

  for (const auto& r : read.rows(kWho, {}, "current user")) facts.admin = cell(r, 0);

  std::set<std::string> roles_seen;
  std::map<std::string, DbRole> roles;
  for (const auto& r : read.rows(kRoles, {roles_param}, "roles")) {
    DbRole role;
    role.name = cell(r, 0);
    role.login = cell(r, 1) == "true";
    role.connection_limit = std::atol(cell(r, 2).c_str());
    if (cell(r, 3) == "true") facts.builtin_roles.push_back(role.name);
    roles_seen.insert(role.name);
    roles[role.name] = role;
  }
  for (const auto& r : read.rows(kAdminUses, {roles_param}, "admin's memberships"))
    if (cell(r, 0) != facts.admin) facts.admin_member_of.push_back(cell(r, 0));
  for (const auto& r : read.rows(kMemberships, {roles_param}, "role memberships")) {
    if (auto it = roles.find(cell(r, 0)); it != roles.end()) it->second.member_of.push_back(cell(r, 1));
  }
  for (const auto& r : read.rows(kSettings, {roles_param}, "role settings")) {
    const std::string setting = cell(r, 1);
    const size_t eq = setting.find('=');
    if (auto it = roles.find(cell(r, 0)); it != roles.end() && eq != std::string::npos)
      it->second.settings[setting.substr(0, eq)] = setting.substr(eq + 1);
  }
  for (const auto& want : wanted.roles)
    if (auto it = roles.find(want.name); it != roles.end()) {
      sort_unique(it->second.member_of);
      got.roles.push_back(it->second);
      as_declared(got.roles.back().settings, want.settings);
    }
  sort_unique(facts.admin_member_of);
  sort_unique(facts.builtin_roles);

  for (const auto& r : read.rows(kSchemaOwners, {schemas_param}, "schemas")) facts.schema_owners[cell(r, 0)] = cell(r, 1);
  for (const auto& want : wanted.schemas)
    if (auto it = facts.schema_owners.find(want.name); it != facts.schema_owners.end())
      got.schemas.push_back({want.name, it->second});
  for (const auto& r : read.rows(kSchemaContents, {text_array(names_of(wanted.schemas))}, "schemas' contents"))
    add_limited(facts.schema_contents, r);

  const std::string extensions_param = text_array(names_of(wanted.extensions));
  std::map<std::string, std::string> versions;
  for (const auto& r : read.rows(kExtensionVersions, {extensions_param}, "extensions")) versions[cell(r, 0)] = cell(r, 1);
  for (const auto& want : wanted.extensions)
    if (auto it = versions.find(want.name); it != versions.end()) got.extensions.push_back({want.name, it->second});
  for (const auto& r : read.rows(kExtensionDependents, {extensions_param}, "extensions' dependents"))
    add_limited(facts.extension_dependents, r);

  if (!wanted.grants.empty()) {
    Acls acls;
    for (const auto& r : read.rows(kSchemaAcl, {schemas_param, roles_param}, "schemas' privileges"))
      acls.schema[{cell(r, 0), cell(r, 1)}].insert(cell(r, 2) + (cell(r, 3) == "true" ? kGrantable : ""));
    for (const auto& r : read.rows(kRelations, {schemas_param}, "tables and sequences"))
      acls.relations[{cell(r, 0), cell(r, 2) == "true"}][cell(r, 1)] = cell(r, 3);
    for (const auto& r : read.rows(kRelationAcl, {schemas_param, roles_param}, "tables' and sequences' privileges"))
      acls.relation[{cell(r, 0), cell(r, 1), cell(r, 3)}].insert(cell(r, 4) + (cell(r, 5) == "true" ? kGrantable : ""));
    for (const auto& r : read.rows(kDefaultAcl, {schemas_param, roles_param}, "default privileges"))
      acls.defaults[{cell(r, 0), cell(r, 1), cell(r, 2), cell(r, 3)}].insert(cell(r, 4) + (cell(r, 5) == "true" ? kGrantable : ""));
    for (const auto& want : wanted.grants)
      if (auto g = observed_grant(want, acls, facts, roles_seen)) got.grants.push_back(std::move(*g));
  }

  for (const auto& r : read.rows(kHeld, {text_array(names_of(wanted.roles))}, "roles' objects and privileges")) {
    DbHeld held{cell(r, 2), cell(r, 3), cell(r, 4), cell(r, 5)};
    (cell(r, 1) == "o" ? facts.owned_by : facts.privileges_of)[cell(r, 0)].push_back(std::move(held));
  }

  SqlResult commit = session.exec("COMMIT");
  if (!commit.ok) throw Error("could not end the catalogs' read-only transaction: " + commit.error.message);
  return got;
}

}  // namespace dbform
