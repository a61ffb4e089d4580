#include "manifest/objects_reader.h"

#include <map>
#include <set>

#include "util/text.h"

namespace dbform {

namespace {

constexpr size_t kMaxObjectName = 63;

// Every name given of a role or a schema declared (or the service's own).
void check_names(ValueReader& values, const DesiredService& objects) {
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

std::vector<FieldRow<DesiredService>> service_object_rows() {
  using S = DesiredService;
  std::vector<FieldRow<S>> rows = {children_row(ResourceKind::Role, "roles", &S::roles),
                                   children_row(ResourceKind::Schema, "schemas", &S::schemas),
                                   children_row(ResourceKind::Extension, "extensions", &S::extensions)};
  const KindForm& grants = kind_form(ResourceKind::Grant);
  auto read_grants = [](KindReader& r, const Entry& f, S& s) {
    r.items(f, "grants", [&](const Entry& item) {
      auto g = read_declaration<DesiredGrant>(r, item);
      if (!g) return;
      std::vector<DesiredGrant> each;
      if (g->listed.empty()) each.push_back(std::move(*g));
      for (const auto& name : g->listed) {  // one grant per table (sequence) named
        DesiredGrant one = *g;
        one.object = name;
        one.listed.clear();
        each.push_back(std::move(one));
      }
      for (auto& one : each) {
        one.address_name = one.name();
        s.grants.push_back(std::move(one));
      }
    });
    return true;
  };
  rows.push_back({grants.list, Presence::Optional, read_grants, list_schema(grants)});
  return rows;
}

void check_service_objects(ValueReader& values, const DesiredService& s) {
  check_names(values, s);  // one object declared twice is the walk's check, as for every kind
}

}  // namespace dbform
