// Roles inside a service's database: login roles (dbform generates their passwords) and group
// roles, with their limit, memberships and settings.
#include <algorithm>
#include <cctype>

#include "manifest/objects_reader.h"
#include "util/text.h"

namespace dbform {

namespace {

std::optional<NameRefusal> own_role_refusal(const std::string& name) {
  // PostgreSQL's grammar reads these as PUBLIC (every role) and as no role, quoted or not.
  if (name == "public" || name == "none")
    return NameRefusal{"`" + name + "` is a name PostgreSQL reserves: no role may be named so", "choose another name"};
  if (!is_builtin_role(name)) return std::nullopt;
  return NameRefusal{"`" + name + "` is the service's own role: it can be named in `member_of` or as an owner, not "
                     "declared",
                     "remove this role, or give yours another name"};
}

bool read_member_of(KindReader& r, const Entry& f, DesiredRole& role) {
  r.items(f, "role names", [&](const Entry& item) {
    auto m = r.values().name(item);
    if (!m) return;
    if (std::find(role.member_of.begin(), role.member_of.end(), *m) != role.member_of.end()) {
      r.values().error(item.where, item.path, "`" + *m + "` is listed twice in member_of", "list each role once");
      return;
    }
    role.member_of.push_back(*m);
    role.member_of_at.push_back({*m, item.where, item.path});
  });
  return true;
}

// A PostgreSQL parameter's name: letters, digits, '_' and '.' (a custom one has a prefix: app.tenant).
bool is_parameter_name(const std::string& s) {
  return !s.empty() && !std::isdigit(static_cast<unsigned char>(s[0])) &&
         std::all_of(s.begin(), s.end(), [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '.'; });
}

bool read_settings(KindReader& r, const Entry& f, DesiredRole& role) {
  ValueReader& values = r.values();
  if (!f.value->is_map()) {
    values.error(f.where, f.path, "expected a mapping of settings like `statement_timeout: 30s`, found " +
                                      values.describe(*f.value));
    return true;
  }
  for (const auto& [key, value] : f.value->pairs) {
    if (!key->is_scalar() || !is_parameter_name(key->scalar)) {
      values.error(values.location(*key), f.path,
                   "a setting's name is a PostgreSQL parameter: letters, digits, '_' and '.', like "
                   "`statement_timeout` or `app.tenant`");
      continue;
    }
    Entry setting = values.entry(*key, *value, f.path + "." + key->scalar);
    // One parameter whatever the case of its name (PostgreSQL keeps timezone as TimeZone).
    const std::string name = lower(key->scalar);  // a copy: clang 14 captures no structured binding
    if (std::any_of(role.settings.begin(), role.settings.end(),
                    [&](const auto& set) { return lower(set.first) == name; })) {
      values.error(values.location(*key), setting.path, "`" + key->scalar + "` is set twice", "keep one");
      continue;
    }
    if (auto v = values.setting(setting)) role.settings[key->scalar] = *v;
  }
  return true;
}

}  // namespace

template <> const FieldTable<DesiredRole>& field_table<DesiredRole>() {
  using R = DesiredRole;
  static const FieldTable<R> table{
      "a role",
      "A role of the service's database. Its name must be unique among the service's roles.",
      {object_name_row<R>("role", true, own_role_refusal,
                          "The role's name: at most 63 characters, not starting with pg_, not tsdbadmin."),
       value_row("login", Presence::Optional, &R::login, &ValueReader::boolean,
                 interpolable("true: a role that logs in, with a password dbform generates; false (the default): a "
                              "group role.",
                              R"json({"type": "boolean"})json")),
       value_row("connection_limit", Presence::Optional, &R::connection_limit,
                 [](ValueReader& v, const Entry& e) {
                   return v.whole_number(e, -1, "a whole number of connections, or -1 for no limit");
                 },
                 interpolable("The most connections the role may have at once; -1 or absent: no limit.",
                              R"json({"type": "integer", "minimum": -1})json")),
       {"member_of", Presence::Optional, read_member_of,
        nlohmann::ordered_json{{"type", "array"},
                               {"description", "Roles it is a member of: the service's declared roles, tsdbadmin or "
                                               "PostgreSQL's predefined roles (pg_read_all_data, ...). Authoritative: "
                                               "memberships granted outside are revoked."},
                               {"uniqueItems", true},
                               {"items", schema_ref("name")}}},
       {"settings", Presence::Optional, read_settings,
        nlohmann::ordered_json{{"type", "object"},
                               {"description", "Parameters set for the role (ALTER ROLE ... SET), as text."},
                               {"propertyNames", {{"pattern", "^[A-Za-z_][A-Za-z0-9_.]*$"}}},
                               {"additionalProperties", {{"type", {"string", "number", "boolean"}}}}}},
       deletion_protection_row<R>()}};
  return table;
}

nlohmann::json role_settings(const DesiredRole& r) {
  // Every field, its default included: a role's declaration is authoritative, so a limit, a
  // membership or a setting left out is one the role does not have.
  std::vector<std::string> member_of = r.member_of;  // a set: reordering it is no change
  std::sort(member_of.begin(), member_of.end());
  return {{"login", r.login},
          {"connection_limit", r.connection_limit.value_or(-1)},
          {"member_of", member_of},
          {"settings", r.settings.empty() ? nlohmann::json::object() : nlohmann::json(r.settings)}};
}

KindForm role_form() {
  using T = PolicyFieldType;
  return {
      .kind = ResourceKind::Role,
      .name = "role",
      .plural = "roles",
      .noun = "role",
      .parent = ResourceKind::Service,
      .list = "roles",
      .fields = {"login", "connection_limit", "member_of", "settings"},
      .policy_fields = {{"project_id", T::Text}, {"service", T::Text}, {"name", T::Text},
                        {"login", T::Bool}, {"connection_limit", T::Number}, {"member_of", T::TextList},
                        {"deletion_protection", T::Bool}},
      .delete_note = " (dropped once what dbform granted it is revoked)",
      .list_description = "Roles inside the service's database, made as tsdbadmin once the service is READY: "
                          "login roles (with a password dbform generates) and group roles.",
      .schema = declaration_schema<DesiredRole>,
      .in_database = true,
  };
}

}  // namespace dbform
