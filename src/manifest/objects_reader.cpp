#include "manifest/objects_reader.h"

#include <map>
#include <set>

#include "util/text.h"

namespace dbform {

namespace {

constexpr size_t kMaxObjectName = 63;

// Each object once per service: a second declaration of one name is an error at it.
template <typename T, typename NameOf>
void declared_once(ValueReader& values, const std::vector<T>& list, const char* what, NameOf name_of) {
  std::map<std::string, const Location*> seen;
  for (const auto& item : list) {
    const std::string name = name_of(item);
    auto [first, fresh] = seen.emplace(name, &item.location);
    if (!fresh)
      values.error(item.location, item.path,
                   std::string(what) + " `" + name + "` is declared twice in this service (first at " +
                       first->second->str() + ")",
                   std::string("keep one: a ") + what + " is one object in the database");
  }
}

// Every name given of a role or a schema declared (or the service's own).
void check_names(ValueReader& values, const ServiceObjects& objects) {
  std::set<std::string> roles, schemas = {"public"};
  for (const auto& r : objects.roles) roles.insert(r.name);
  for (const auto& s : objects.schemas) schemas.insert(s.name);
  const std::string declared =
      roles.empty() ? "none is declared" : "declared: " + join(std::vector<std::string>(roles.begin(), roles.end()), ", ");
  for (const auto& r : objects.roles) {
    for (const auto& m : r.member_of_at)
      if (m.name == r.name)
        values.error(m.where, m.path, "role `" + r.name + "` cannot be a member of itself");
      else if (!roles.count(m.name) && !is_builtin_role(m.name))
        values.error(m.where, m.path, "member_of names `" + m.name + "`, which is not a role of this service (" +
                                          declared + ")",
                     "declare it under `roles:`, or name tsdbadmin or one of PostgreSQL's predefined roles "
                     "(pg_read_all_data, pg_monitor, ...)");
  }
  for (const auto& s : objects.schemas)
    if (s.owner_at && !roles.count(s.owner) && s.owner != "tsdbadmin")
      values.error(s.owner_at->where, s.owner_at->path,
                   "the schema's owner `" + s.owner + "` is not a role of this service (" + declared + ")",
                   "declare it under `roles:`, or leave `owner` out for tsdbadmin");
  for (size_t i = 0; i < objects.grants.size(); ++i) {
    const DesiredGrant& g = objects.grants[i];
    // A list of tables is one declaration read as a grant each: its errors are said once.
    if (i > 0 && objects.grants[i - 1].path == g.path) continue;
    if (!roles.count(g.role))
      values.error(g.role_at.where, g.role_at.path,
                   "the grant is to `" + g.role + "`, which is not a role of this service (" + declared + ")",
                   "declare the role under `roles:`: dbform grants only to roles it manages");
    if (!schemas.count(g.schema))
      values.error(g.schema_at.where, g.schema_at.path,
                   "the grant is on schema `" + g.schema + "`, which is not declared in this service",
                   "declare it under `schemas:` (public needs no declaration)");
  }
}

}  // namespace

std::optional<std::string> database_object_name(ValueReader& values, const Entry& e, const char* what,
                                                bool reserved_prefix) {
  auto name = values.name(e);
  if (!name) return std::nullopt;
  if (name->size() > kMaxObjectName) {
    values.error(e.where, e.path,
                 std::string("a ") + what + "'s name is at most 63 characters in PostgreSQL (this one has " +
                     std::to_string(name->size()) + ")",
                 "shorten it: PostgreSQL would cut it, and names alike in their first 63 characters would be one");
    return std::nullopt;
  }
  if (reserved_prefix && lower(*name).rfind("pg_", 0) == 0) {
    values.error(e.where, e.path,
                 std::string("names starting with `pg_` are PostgreSQL's own: no ") + what + " of a database may be named so",
                 "choose another name");
    return std::nullopt;
  }
  return name;
}

std::string DesiredGrant::name() const {
  std::string out = role + "/" + schema;
  if (target == GrantTarget::Schema) return out;
  out += target == GrantTarget::Table ? "/tables" : "/sequences";
  return all ? out : out + "/" + object;
}

bool is_builtin_role(const std::string& name) {
  // tsdbadmin owns the service's database; PostgreSQL's predefined roles (pg_monitor,
  // pg_read_all_data, ...) all start with pg_, which CREATE ROLE refuses for any other.
  return name == "tsdbadmin" || name == "postgres" || lower(name).rfind("pg_", 0) == 0;
}

ServiceObjects read_service_objects(KindReader& reader, const Fields& service) {
  ServiceObjects out;
  auto each = [&](const char* key, const char* expected, auto read) {
    if (const Entry* list = service.find(key)) reader.items(*list, expected, read);
  };
  each("roles", "roles", [&](const Entry& item) {
    if (auto r = read_declaration<DesiredRole>(reader, item)) out.roles.push_back(std::move(*r));
  });
  each("schemas", "schemas", [&](const Entry& item) {
    if (auto s = read_declaration<DesiredSchema>(reader, item)) out.schemas.push_back(std::move(*s));
  });
  each("extensions", "extensions", [&](const Entry& item) {
    if (auto x = read_declaration<DesiredExtension>(reader, item)) out.extensions.push_back(std::move(*x));
  });
  each("grants", "grants", [&](const Entry& item) {
    auto g = read_declaration<DesiredGrant>(reader, item);
    if (!g) return;
    if (g->listed.empty()) {
      out.grants.push_back(std::move(*g));
      return;
    }
    for (const auto& name : g->listed) {  // one grant per table (sequence) named
      DesiredGrant one = *g;
      one.object = name;
      one.listed.clear();
      out.grants.push_back(std::move(one));
    }
  });
  ValueReader& values = reader.values();
  declared_once(values, out.roles, "role", [](const DesiredRole& r) { return r.name; });
  declared_once(values, out.schemas, "schema", [](const DesiredSchema& s) { return s.name; });
  declared_once(values, out.extensions, "extension", [](const DesiredExtension& x) { return x.name; });
  declared_once(values, out.grants, "grant", [](const DesiredGrant& g) { return g.name(); });
  check_names(values, out);
  return out;
}

}  // namespace dbform
