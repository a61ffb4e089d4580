// Whether a role that may not write the state could read dbform_secrets: asked of the server before
// a writer puts anything there. Part of PgStateStore (state/pg_store.h).
//
// Two questions. The table itself: its owner, its grants and its hooks (triggers, rules, row
// security policies), read from the catalog. And every way in the server's own words: for every role
// that may log in here and may not write the state, whether it, or a role it may become (a group, a
// predefined role such as pg_read_all_data, a superuser), may read the table or any of its columns
// (has_table_privilege, has_any_column_privilege: these know groups, column grants and predefined
// roles, which the table's ACL does not show); whether it may use a view (or another relation with a
// rule) that reads the table, directly or through another; and whether it may execute a SECURITY
// DEFINER function that runs as a role that may read it.
//
// A function is judged by its owner, not by its text: the body may build its query at run time
// (EXECUTE 'SELECT value FROM dbform_' || 'secrets'), or call another function, so a text search
// would miss it; what bounds a SECURITY DEFINER function is what its owner may read. The one
// exception is a superuser's: it may read every table and every file of the server, so no grant
// bounds it, and every such function that any role may execute (extensions install some) would
// refuse every write; those are taken as exposures when their text or their recorded dependencies
// name the table. docs/state.md says so, and that a sealed state is the defence that does not depend
// on grants.
#include <map>
#include <set>

#include "state/codec.h"
#include "state/pg_store.h"
#include "util/text.h"

namespace dbform {

namespace {

// The roles that may hold the passwords: a role that may write the state, a superuser, this role
// and those it belongs to, and the owners of the database, of the schema and of dbform_states (who
// could take the table anyway).
constexpr const char* kTrusted = R"sql(
t AS (SELECT c.oid, c.relowner, c.relacl, c.relnamespace FROM pg_class c
      WHERE c.oid = to_regclass('dbform_secrets')),
trusted AS (
  SELECT r.oid FROM pg_roles r
  WHERE r.rolsuper OR pg_has_role(current_user, r.oid, 'MEMBER')
     OR has_table_privilege(r.oid, 'dbform_states', 'UPDATE')
     OR r.oid = (SELECT datdba FROM pg_database WHERE datname = current_database())
     OR r.oid = (SELECT n.nspowner FROM pg_namespace n, t WHERE n.oid = t.relnamespace)
     OR r.oid = (SELECT relowner FROM pg_class WHERE oid = to_regclass('dbform_states')))
)sql";

// The table's own catalog rows: an owner, grantees and hooks that may not hold the passwords.
constexpr const char* kOwnRows = R"sql(
SELECT (SELECT quote_ident(rolname) FROM pg_roles, t WHERE pg_roles.oid = t.relowner
          AND pg_roles.oid NOT IN (SELECT oid FROM trusted)),
       (SELECT string_agg(CASE WHEN a.grantee = 0 THEN 'PUBLIC' ELSE quote_ident(pg_get_userbyid(a.grantee)) END, ', ')
          FROM t, aclexplode(t.relacl) a
         WHERE a.privilege_type = 'SELECT' AND a.grantee NOT IN (SELECT oid FROM trusted)),
       (SELECT count(*) FROM pg_trigger, t WHERE tgrelid = t.oid AND NOT tgisinternal)
         + (SELECT count(*) FROM pg_rewrite, t WHERE ev_class = t.oid)
         + (SELECT count(*) FROM pg_policy, t WHERE polrelid = t.oid)
)sql";

// Every way a role that may log in here, and may not write the state, reaches the passwords: one row
// per (login role, path, role it goes through). `kind` is 'table', a relkind ('v' a view, 'm' a
// materialized view, another: a relation with a rule that reads it) or 'function'; `object` names
// the relation or the function and who it runs as; `via` the role whose privilege it uses (the login
// role itself, or one it may become); `own` whether `via` holds it in its own right (granted on the
// table or a column, pg_read_all_data, a superuser); `whole` whether it may read every column.
constexpr const char* kPaths = R"sql(
dependents(oid) AS (
  SELECT r.ev_class FROM pg_depend d JOIN pg_rewrite r ON r.oid = d.objid
   WHERE d.classid = 'pg_rewrite'::regclass AND d.refclassid = 'pg_class'::regclass
     AND d.refobjid IN (SELECT oid FROM t) AND r.ev_class NOT IN (SELECT oid FROM t)
  UNION
  SELECT r.ev_class FROM dependents x JOIN pg_depend d ON d.refobjid = x.oid JOIN pg_rewrite r ON r.oid = d.objid
   WHERE d.classid = 'pg_rewrite'::regclass AND d.refclassid = 'pg_class'::regclass
     AND r.ev_class <> x.oid AND r.ev_class NOT IN (SELECT oid FROM t)),
sources AS (SELECT oid FROM t UNION SELECT oid FROM dependents),
definers AS (
  SELECT p.oid, p.proowner FROM pg_proc p
    JOIN pg_namespace n ON n.oid = p.pronamespace JOIN pg_roles o ON o.oid = p.proowner
   WHERE p.prosecdef AND n.nspname NOT IN ('pg_catalog', 'information_schema')
     AND EXISTS (SELECT 1 FROM sources s WHERE has_table_privilege(p.proowner, s.oid, 'SELECT')
                                           OR has_any_column_privilege(p.proowner, s.oid, 'SELECT'))
     AND (NOT o.rolsuper OR p.prosrc ILIKE '%dbform\_secrets%'
          OR EXISTS (SELECT 1 FROM pg_depend d WHERE d.classid = 'pg_proc'::regclass AND d.objid = p.oid
                        AND d.refclassid = 'pg_class'::regclass AND d.refobjid IN (SELECT oid FROM sources)))),
logins AS (
  SELECT l.oid, l.rolname FROM pg_roles l
   WHERE l.rolcanlogin AND l.oid NOT IN (SELECT oid FROM trusted)
     AND has_database_privilege(l.oid, current_database(), 'CONNECT'))
SELECT quote_ident(l.rolname), 'table'::text, ''::text, quote_ident(g.rolname),
       g.rolsuper OR g.rolname = 'pg_read_all_data'
         OR EXISTS (SELECT 1 FROM aclexplode(s.relacl) a WHERE a.grantee = g.oid AND a.privilege_type = 'SELECT')
         OR EXISTS (SELECT 1 FROM pg_attribute c, aclexplode(c.attacl) a
                     WHERE c.attrelid = s.oid AND a.grantee = g.oid AND a.privilege_type = 'SELECT'),
       has_table_privilege(g.oid, s.oid, 'SELECT')
  FROM logins l, pg_roles g, t s
 WHERE pg_has_role(l.oid, g.oid, 'MEMBER')
   AND (has_table_privilege(g.oid, s.oid, 'SELECT') OR has_any_column_privilege(g.oid, s.oid, 'SELECT'))
UNION ALL
SELECT DISTINCT quote_ident(l.rolname), c.relkind::text, s.oid::regclass::text, '', false, true
  FROM logins l, pg_roles g, dependents s JOIN pg_class c ON c.oid = s.oid
 WHERE pg_has_role(l.oid, g.oid, 'MEMBER')
   AND (has_table_privilege(g.oid, s.oid, 'SELECT,INSERT,UPDATE,DELETE')
        OR has_any_column_privilege(g.oid, s.oid, 'SELECT,INSERT,UPDATE'))
UNION ALL
SELECT DISTINCT quote_ident(l.rolname), 'function', f.oid::regprocedure::text || ' (run as ' ||
       quote_ident(pg_get_userbyid(f.proowner)) || ')', '', false, true
  FROM logins l, pg_roles g, definers f
 WHERE pg_has_role(l.oid, g.oid, 'MEMBER') AND has_function_privilege(g.oid, f.oid, 'EXECUTE')
ORDER BY 2, 3, 1, 4
)sql";

// At most a few names, then how many more.
std::string some_of(const std::vector<std::string>& names) {
  constexpr size_t kShown = 5;
  std::vector<std::string> shown(names.begin(), names.begin() + std::min(names.size(), kShown));
  std::string out = join(shown, ", ");
  if (names.size() > kShown) out += " and " + std::to_string(names.size() - kShown) + " more";
  return out;
}

// "the view public.v", "the function f(integer) (run as writer)", as the path's kind says.
std::string path_name(const std::string& kind, const std::string& object) {
  if (kind == "function") return "the SECURITY DEFINER function " + object;
  if (kind == "v") return "the view " + object;
  if (kind == "m") return "the materialized view " + object;
  return "a rule on " + object;
}

std::string path_fix(const std::string& kind, const std::string& object) {
  if (kind == "function") {
    const std::string signature = object.substr(0, object.rfind(" (run as "));
    return "DROP FUNCTION " + signature + " (or REVOKE EXECUTE ON FUNCTION " + signature +
           " FROM PUBLIC and from those roles)";
  }
  if (kind == "v") return "DROP VIEW " + object + " (or REVOKE ALL ON " + object + " FROM those roles)";
  if (kind == "m") return "DROP MATERIALIZED VIEW " + object;
  return "drop the rule on " + object + " that reads it";
}

}  // namespace

void PgStateStore::refuse_exposed_secrets() {
  // Asked once the tables exist, so that a table someone made before this role's first write (or
  // between the check before it and CREATE TABLE IF NOT EXISTS) is seen too.
  const auto row = conn_.exec(std::string("WITH ") + kTrusted + kOwnRows).rows.at(0);
  const bool foreign_owner = row.at(0).has_value(), hooks = row.at(2).value_or("0") != "0";
  std::vector<std::string> why, fixes;
  if (foreign_owner) why.push_back("is owned by " + *row.at(0) + ", a role that may not write the state");
  if (row.at(1)) why.push_back("may be read by " + *row.at(1) + ", which may not write the state");
  if (hooks) why.push_back("has triggers, rules or row security policies");

  // The server's answer, per path: who reaches it, and through what.
  struct Reader {
    std::set<std::string> through;  // roles it becomes that hold the privilege in their own right
    bool whole = false;
  };
  std::map<std::string, Reader> table_readers;
  std::map<std::pair<std::string, std::string>, std::vector<std::string>> paths;  // (kind, object) -> roles
  for (const auto& r : conn_.exec(std::string("WITH RECURSIVE ") + kTrusted + "," + kPaths).rows) {
    const std::string login = r.at(0).value_or(""), kind = r.at(1).value_or(""), object = r.at(2).value_or("");
    if (kind != "table") {
      paths[{kind, object}].push_back(login);
      continue;
    }
    Reader& reader = table_readers[login];
    const std::string via = r.at(3).value_or("");
    if (via != login && r.at(4) == "t") reader.through.insert(via);
    reader.whole = reader.whole || r.at(5) == "t";
  }
  if (!table_readers.empty()) {
    std::vector<std::string> named;
    for (const auto& [login, reader] : table_readers) {
      std::vector<std::string> how;
      if (!reader.through.empty())
        how.push_back("through " + join(std::vector<std::string>(reader.through.begin(), reader.through.end()), ", "));
      if (!reader.whole) how.push_back("a grant on some of its columns");
      named.push_back(login + (how.empty() ? "" : " (" + join(how, "; ") + ")"));
    }
    why.push_back("can be read by " + some_of(named) + ", which may log in and may not write the state");
    fixes.push_back("take back what lets each of them read it (REVOKE ALL ON dbform_secrets FROM ROLE takes a grant "
                    "on the table and on its columns; REVOKE GROUP FROM ROLE a membership, pg_read_all_data's too)");
  }
  for (const auto& [path, logins] : paths) {
    why.push_back("is read by " + path_name(path.first, path.second) + ", which " + some_of(logins) +
                  " may use (may log in, and may not write the state)");
    fixes.push_back(path_fix(path.first, path.second));
  }
  if (why.empty()) return;
  // A grant alone is taken back; an owner or a hook may have left more behind (grants it made, a
  // copy of each row): the table goes. Either way the passwords it held may have been read.
  if (foreign_owner || hooks)
    fixes.insert(fixes.begin(), "Have the database's owner drop it (DROP TABLE dbform_secrets; dbform makes it again, "
                                "its own, at the next write)");
  else if (row.at(1))
    fixes.insert(fixes.begin(), "Have the database's owner take the grant back (REVOKE ALL ON dbform_secrets FROM " +
                                    *row.at(1) + ")");
  else
    fixes.front() = "Have the database's owner " + fixes.front();
  throw StateError(describe_ + ": the table dbform_secrets " + join(why, ", and ") + ": the passwords dbform would "
                   "put there could reach a role that may only read the state. Nothing was written. " +
                   join(fixes, "; ") + "; then change every password it held (dbform rotate-password ADDRESS)");
}

}  // namespace dbform
