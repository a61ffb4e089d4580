// The statements that make a database's objects what is declared: pure, from the declaration, what
// the catalogs showed and what dbform made that is to go. Every name reaches the SQL through
// quote_ident, every value through quote_literal (sql/objects.cpp).
#include <algorithm>
#include <set>

#include "sql/objects.h"
#include "util/error.h"

namespace dbform {

namespace {

using Names = std::vector<std::string>;

bool contains(const Names& v, const std::string& s) { return std::find(v.begin(), v.end(), s) != v.end(); }

Names minus(const Names& a, const Names& b) {
  Names out;
  for (const auto& x : a)
    if (!contains(b, x)) out.push_back(x);
  return out;
}

std::string list_sql(const Names& privileges) {
  std::string out;
  for (const auto& p : privileges) out += (out.empty() ? "" : ", ") + p;  // keywords of a fixed list
  return out;
}

std::string joined(const Names& words) {
  std::string out;
  for (const auto& w : words) out += (out.empty() ? "" : ", ") + w;
  return out;
}

class Statements {
 public:
  void add(std::string sql, std::string object, std::string kind, bool secret = false) {
    out.push_back({std::move(sql), std::move(object), std::move(kind), secret});
  }
  std::vector<DbStatement> out;
};

std::string role_options(const DbRole& role) {
  return std::string(role.login ? " LOGIN" : " NOLOGIN") + " CONNECTION LIMIT " + std::to_string(role.connection_limit);
}

void role_statements(Statements& s, const DbRole& want, const DbRole* have, const ObjectsContext& ctx) {
  const std::string name = quote_ident(want.name), object = address_of(want);
  auto verifier = ctx.verifiers.find(want.name);
  const std::string password = verifier == ctx.verifiers.end() ? "" : " PASSWORD " + quote_literal(verifier->second);
  if (!have) {
    s.add("CREATE ROLE " + name + role_options(want) + password, object, "CREATE ROLE", !password.empty());
  } else {
    if (have->login != want.login || have->connection_limit != want.connection_limit)
      s.add("ALTER ROLE " + name + role_options(want), object, "ALTER ROLE");
    if (!password.empty()) s.add("ALTER ROLE " + name + password, object, "ALTER ROLE", true);
  }
  // PostgreSQL keeps a built-in parameter in its own spelling (TimeZone for timezone): names
  // compare whatever their case, or the plan would set one and reset it in the same breath.
  auto setting_of = [](const std::map<std::string, std::string>& settings, const std::string& key) -> const std::string* {
    for (const auto& [k, v] : settings)
      if (same_setting_name(k, key)) return &v;
    return nullptr;
  };
  for (const auto& [key, value] : want.settings) {
    const std::string* had = have ? setting_of(have->settings, key) : nullptr;
    if (!had || !same_setting_value(key, *had, value))
      s.add("ALTER ROLE " + name + " SET " + quote_ident(key) + " TO " + setting_value_sql(key, value), object,
            "ALTER ROLE");
  }
  if (have)
    for (const auto& [key, value] : have->settings)
      if (!setting_of(want.settings, key))
        s.add("ALTER ROLE " + name + " RESET " + quote_ident(key), object, "ALTER ROLE");
}

void membership_statements(Statements& s, const DbRole& want, const DbRole* have) {
  const Names had = have ? have->member_of : Names{};
  for (const auto& group : minus(want.member_of, had))
    s.add("GRANT " + quote_ident(group) + " TO " + quote_ident(want.name), address_of(want), "GRANT");
  for (const auto& group : minus(had, want.member_of))
    s.add("REVOKE " + quote_ident(group) + " FROM " + quote_ident(want.name), address_of(want), "REVOKE");
}

std::string target_sql(const DbGrant& g) {
  const std::string schema = quote_ident(g.schema);
  switch (g.on) {
    case DbGrant::On::Schema: return "SCHEMA " + schema;
    case DbGrant::On::AllTables: return "ALL TABLES IN SCHEMA " + schema;
    case DbGrant::On::AllSequences: return "ALL SEQUENCES IN SCHEMA " + schema;
    case DbGrant::On::Table: return "TABLE " + schema + "." + quote_ident(g.object);
    case DbGrant::On::Sequence: return "SEQUENCE " + schema + "." + quote_ident(g.object);
  }
  return "";
}

bool is_all(const DbGrant& g) { return g.on == DbGrant::On::AllTables || g.on == DbGrant::On::AllSequences; }

void grant_revoke(Statements& s, const DbGrant& g, const Names& missing, const Names& extra) {
  const std::string target = target_sql(g), role = quote_ident(g.role), object = address_of(g);
  if (!missing.empty()) s.add("GRANT " + list_sql(missing) + " ON " + target + " TO " + role, object, "GRANT");
  if (!extra.empty()) s.add("REVOKE " + list_sql(extra) + " ON " + target + " FROM " + role, object, "REVOKE");
}

// The roles whose future tables (sequences) in the schema an `all` grant reaches: its owner, and
// the admin when another, since either is who makes them.
Names default_owners(const std::string& schema, const DbObjects& desired, const DbObjects& observed,
                     const ObjectsContext& ctx) {
  std::string owner = ctx.admin;
  if (const DbSchema* s = find_named(desired.schemas, schema)) owner = s->owner;
  else if (const DbSchema* seen = find_named(observed.schemas, schema)) owner = seen->owner;
  else if (auto it = observed.facts.schema_owners.find(schema); it != observed.facts.schema_owners.end()) owner = it->second;
  Names out{owner};
  if (owner != ctx.admin) out.push_back(ctx.admin);
  return out;
}

// Of what `have` holds WITH GRANT OPTION, what `want` keeps (what it revokes goes with its option).
Names option_to_revoke(const DbGrant& want, const DbGrant* have) {
  Names out;
  if (have)
    for (const auto& p : have->grant_option)
      if (contains(want.privileges, p)) out.push_back(p);
  return out;
}

void default_statements(Statements& s, const DbGrant& g, const Names& owners, const Names& missing, const Names& extra,
                        const Names& option = {}) {
  const std::string what = g.on == DbGrant::On::AllTables ? " ON TABLES" : " ON SEQUENCES";
  for (const auto& owner : owners) {
    if (owner == g.role) continue;  // what a role makes is its own: it holds every privilege on it
    const std::string head = "ALTER DEFAULT PRIVILEGES FOR ROLE " + quote_ident(owner) + " IN SCHEMA " + quote_ident(g.schema);
    if (!missing.empty())
      s.add(head + " GRANT " + list_sql(missing) + what + " TO " + quote_ident(g.role), address_of(g),
            "ALTER DEFAULT PRIVILEGES");
    if (!extra.empty())
      s.add(head + " REVOKE " + list_sql(extra) + what + " FROM " + quote_ident(g.role), address_of(g),
            "ALTER DEFAULT PRIVILEGES");
    if (!option.empty())
      s.add(head + " REVOKE GRANT OPTION FOR " + list_sql(option) + what + " FROM " + quote_ident(g.role),
            address_of(g), "ALTER DEFAULT PRIVILEGES");
  }
}

bool builtin(const std::string& role, const DbObjects& observed, const ObjectsContext& ctx) {
  return role == ctx.admin || role.rfind("pg_", 0) == 0 || contains(observed.facts.builtin_roles, role);
}

// Whether a to-be-deleted grant of `role` (or a schema dropped) covers what it holds.
bool covered(const DbHeld& held, const std::string& role, const DbObjects& to_delete) {
  if (held.type == "other") return false;
  if (find_named(to_delete.schemas, held.schema) && (held.type == "schema" || held.type.rfind("default ", 0) == 0))
    return true;
  for (const auto& g : to_delete.grants) {
    if (g.role != role || g.schema != held.schema) continue;
    if (held.type == "schema" && g.on == DbGrant::On::Schema) return true;
    if ((held.type == "table" || held.type == "default tables") && g.on == DbGrant::On::AllTables) return true;
    if ((held.type == "sequence" || held.type == "default sequences") && g.on == DbGrant::On::AllSequences) return true;
    if (held.type == "table" && g.on == DbGrant::On::Table && g.object == held.name) return true;
    if (held.type == "sequence" && g.on == DbGrant::On::Sequence && g.object == held.name) return true;
  }
  return false;
}

Names descriptions(const std::vector<DbHeld>& held, const std::string& role, const DbObjects& to_delete) {
  Names out;
  for (const auto& h : held)
    if (!covered(h, role, to_delete)) out.push_back(h.description);
  return out;
}

}  // namespace

std::vector<DbRefusal> delete_refusals(const DbObjects& observed, const DbObjects& to_delete, const ObjectsContext& ctx) {
  std::vector<DbRefusal> out;
  const auto& facts = observed.facts;
  for (const auto& role : to_delete.roles) {
    if (builtin(role.name, observed, ctx)) {
      out.push_back({address_of(role), "it is " + (role.name == ctx.admin ? ctx.admin : "one of PostgreSQL's own roles") +
                                           ": dbform never drops it"});
      continue;
    }
    if (!find_named(observed.roles, role.name)) continue;
    if (auto it = facts.owned_by.find(role.name); it != facts.owned_by.end())
      if (Names owns = descriptions(it->second, role.name, to_delete); !owns.empty())
        out.push_back({address_of(role), "it owns " + joined(owns) + " (reassign or drop them first)"});
    if (auto it = facts.privileges_of.find(role.name); it != facts.privileges_of.end())
      if (Names holds = descriptions(it->second, role.name, to_delete); !holds.empty())
        out.push_back({address_of(role), "it holds privileges dbform did not grant, on " + joined(holds) +
                                             " (revoke them first)"});
  }
  for (const auto& schema : to_delete.schemas)
    if (auto it = facts.schema_contents.find(schema.name); find_named(observed.schemas, schema.name) &&
                                                            it != facts.schema_contents.end() && !it->second.empty())
      out.push_back({address_of(schema), "it is not empty: " + joined(it->second)});
  for (const auto& ext : to_delete.extensions)
    if (auto it = facts.extension_dependents.find(ext.name); find_named(observed.extensions, ext.name) &&
                                                              it != facts.extension_dependents.end() && !it->second.empty())
      out.push_back({address_of(ext), "other objects depend on it: " + joined(it->second)});
  return out;
}

std::vector<DbStatement> statements_for(const DbObjects& desired, const DbObjects& observed, const DbObjects& to_delete,
                                        const ObjectsContext& ctx) {
  std::string refused;
  for (const auto& role : desired.roles)
    if (builtin(role.name, observed, ctx))
      refused += "\n  " + address_of(role) + ": " + role.name + " can be named in member_of, not managed";
  for (const auto& g : desired.grants)
    for (const auto& p : g.privileges)
      if (std::string why = privilege_error(g.on, p, ctx.server_version_num); !why.empty())
        refused += "\n  " + address_of(g) + ": " + why;
  for (const auto& r : delete_refusals(observed, to_delete, ctx))
    refused += "\n  " + r.object + ": cannot be dropped: " + r.reason;
  if (!refused.empty()) throw Error("dbform will not change these objects:" + refused);

  Statements s;
  for (const auto& role : desired.roles) role_statements(s, role, find_named(observed.roles, role.name), ctx);
  for (const auto& role : desired.roles) membership_statements(s, role, find_named(observed.roles, role.name));
  // Making a schema for a role, giving one to it, and setting the default privileges of its
  // future tables all need the admin to be a member of it (PostgreSQL 16 on lets a role's creator
  // grant itself that, as 15 lets any CREATEROLE role).
  Names joined_owners;
  for (const auto& schema : desired.schemas) {
    const std::string& owner = schema.owner;
    if (owner == ctx.admin || contains(observed.facts.admin_member_of, owner) || contains(joined_owners, owner) ||
        !find_named(desired.roles, owner))
      continue;
    joined_owners.push_back(owner);
    s.add("GRANT " + quote_ident(owner) + " TO " + quote_ident(ctx.admin), "roles/" + owner, "GRANT");
  }
  for (const auto& schema : desired.schemas) {
    const DbSchema* have = find_named(observed.schemas, schema.name);
    if (!have)
      s.add("CREATE SCHEMA " + quote_ident(schema.name) + " AUTHORIZATION " + quote_ident(schema.owner),
            address_of(schema), "CREATE SCHEMA");
    else if (have->owner != schema.owner)
      s.add("ALTER SCHEMA " + quote_ident(schema.name) + " OWNER TO " + quote_ident(schema.owner), address_of(schema),
            "ALTER SCHEMA");
  }
  for (const auto& ext : desired.extensions)
    if (!find_named(observed.extensions, ext.name))
      s.add("CREATE EXTENSION " + quote_ident(ext.name), address_of(ext), "CREATE EXTENSION");

  for (const auto& g : desired.grants) {
    const DbGrant* have = find_grant(observed.grants, g);
    const Names now = have ? (have->existing ? *have->existing : have->privileges) : Names{};
    grant_revoke(s, g, minus(g.privileges, now), minus(now, g.privileges));
    // Harmless where the option is not held: an `all` grant's revoke reaches every relation.
    if (Names option = option_to_revoke(g, have); !option.empty())
      s.add("REVOKE GRANT OPTION FOR " + list_sql(option) + " ON " + target_sql(g) + " FROM " + quote_ident(g.role),
            address_of(g), "REVOKE");
  }
  for (const auto& g : desired.grants) {
    if (!is_all(g)) continue;
    const DbGrant* have = find_grant(observed.grants, g);
    const Names later = have ? (have->future ? *have->future : have->privileges) : Names{};
    default_statements(s, g, default_owners(g.schema, desired, observed, ctx), minus(g.privileges, later),
                       minus(later, g.privileges), option_to_revoke(g, have));
  }

  // Deletes, in the reverse order, of what the catalogs still show.
  for (const auto& g : to_delete.grants) {
    if (!find_grant(observed.grants, g)) continue;
    s.add("REVOKE ALL ON " + target_sql(g) + " FROM " + quote_ident(g.role), address_of(g), "REVOKE");
    if (is_all(g)) default_statements(s, g, default_owners(g.schema, desired, observed, ctx), {}, {"ALL"});
  }
  for (const auto& ext : to_delete.extensions)
    if (find_named(observed.extensions, ext.name))
      s.add("DROP EXTENSION " + quote_ident(ext.name), address_of(ext), "DROP EXTENSION");
  for (const auto& schema : to_delete.schemas)
    if (find_named(observed.schemas, schema.name))
      s.add("DROP SCHEMA " + quote_ident(schema.name), address_of(schema), "DROP SCHEMA");
  for (const auto& role : to_delete.roles)
    if (find_named(observed.roles, role.name)) s.add("DROP ROLE " + quote_ident(role.name), address_of(role), "DROP ROLE");
  return s.out;
}

}  // namespace dbform
