// Grants of privileges to a declared role on a schema, its tables or its sequences (all of them,
// or some by name): each is authoritative for its (role, object).
#include <algorithm>

#include "manifest/objects_reader.h"
#include "util/text.h"

namespace dbform {

namespace {

// `role` or `schema`: a name, and where it was written (checked against the declarations later).
auto named(std::string DesiredGrant::*member, NameAt DesiredGrant::*at) {
  return [member, at](KindReader& r, const Entry& f, DesiredGrant& g) {
    auto name = r.values().name(f);
    if (!name) return false;
    g.*member = *name;
    g.*at = NameAt{*name, f.where, f.path};
    return true;
  };
}

// `tables` or `sequences`: `all`, or a list of names.
auto objects(GrantTarget target) {
  return [target](KindReader& r, const Entry& f, DesiredGrant& g) {
    ValueReader& values = r.values();
    if (g.target != GrantTarget::Schema) {
      values.error(f.where, f.path, "a grant is on the schema, its tables or its sequences: not both tables and "
                                    "sequences",
                   "write two grants, one for the tables and one for the sequences");
      return false;
    }
    g.target = target;
    const std::string word = grant_target_word(target);
    if (f.value->is_scalar() && f.value->scalar == "all") {
      g.all = true;
      return true;
    }
    if (!f.value->is_sequence() || f.value->items.empty()) {
      values.error(f.where, f.path, "expected `all` or a list of " + word + " names, found " + values.describe(*f.value));
      return false;
    }
    bool usable = true;
    r.items(f, (word + " names").c_str(), [&](const Entry& item) {
      auto name = values.name(item);
      if (!name) {
        usable = false;
      } else if (std::find(g.listed.begin(), g.listed.end(), *name) != g.listed.end()) {
        values.error(item.where, item.path, "`" + *name + "` is listed twice in " + word + "s",
                     "list each " + word + " once");
        usable = false;
      } else {
        g.listed.push_back(*name);
      }
    });
    return usable;
  };
}

bool read_privileges(KindReader& r, const Entry& f, DesiredGrant& g) {
  ValueReader& values = r.values();
  const auto& known = known_privileges(g.target);
  const std::string word = grant_target_word(g.target);
  if (!f.value->is_sequence() || f.value->items.empty()) {
    values.error(f.where, f.path, "expected a list of privileges like [" + join(known, ", ") + "], found " +
                                      values.describe(*f.value));
    return false;
  }
  std::vector<std::string> read;
  r.items(f, "privileges", [&](const Entry& item) {
    auto text = values.text(item, "a privilege's name");
    if (!text) return;
    auto privilege = canonical_privilege(g.target, *text);
    if (!privilege)
      values.error(item.where, item.path, "a " + word + " has no privilege `" + *text + "`",
                   "a " + word + "'s are " + join(known, ", ") + " (or ALL)");
    else if (std::find(read.begin(), read.end(), *privilege) != read.end())
      values.error(item.where, item.path, "`" + *privilege + "` is listed twice", "list each privilege once");
    else
      read.push_back(*privilege);
  });
  const bool all = std::find(read.begin(), read.end(), "ALL") != read.end();
  if (all && read.size() > 1)
    values.error(f.where, f.path, "ALL is every privilege of a " + word + ": it goes alone",
                 "write [ALL], or the privileges without ALL");
  // In the target's own order, so that a plan and a record compare lists, not their order.
  g.privileges.clear();
  if (all) g.privileges.push_back("ALL");
  for (const auto& p : known)
    if (std::find(read.begin(), read.end(), p) != read.end()) g.privileges.push_back(p);
  return !g.privileges.empty();
}

nlohmann::ordered_json objects_schema(const char* what) {
  return {{"description", std::string("`all` (every ") + what + " of the schema, and those made later: the default "
                          "privileges), or a list of " + what + " names. Without it the grant is on the schema itself."},
          {"anyOf", {{{"const", "all"}},
                     {{"type", "array"}, {"minItems", 1}, {"uniqueItems", true}, {"items", schema_ref("name")}}}}};
}

}  // namespace

template <> const FieldTable<DesiredGrant>& field_table<DesiredGrant>() {
  using G = DesiredGrant;
  static const FieldTable<G> table{
      "a grant",
      "Privileges of a declared role on a schema, its tables or its sequences. Authoritative for its (role, object): "
      "a privilege granted outside is revoked.",
      {{"role", Presence::Required, named(&G::role, &G::role_at),
        schema_ref("name", "The role granted to: one the service declares.")},
       {"schema", Presence::Required, named(&G::schema, &G::schema_at),
        schema_ref("name", "The schema: one the service declares, or public.")},
       {"tables", Presence::Optional, objects(GrantTarget::Table), objects_schema("table")},
       {"sequences", Presence::Optional, objects(GrantTarget::Sequence), objects_schema("sequence")},
       {"privileges", Presence::Required, read_privileges,
        nlohmann::ordered_json{{"type", "array"},
                               {"minItems", 1},
                               {"uniqueItems", true},
                               {"description", "On a schema: USAGE, CREATE; on tables: SELECT, INSERT, UPDATE, DELETE, "
                                               "TRUNCATE, REFERENCES, TRIGGER, MAINTAIN (PostgreSQL 17); on sequences: "
                                               "USAGE, SELECT, UPDATE; or ALL alone (what the server has)."},
                               {"items", {{"type", "string"}}}}}}};
  return table;
}

nlohmann::json grant_settings(const DesiredGrant& g) {
  nlohmann::json j = {{"role", g.role}, {"schema", g.schema}};
  if (g.target != GrantTarget::Schema)
    j[g.target == GrantTarget::Table ? "tables" : "sequences"] = g.all ? std::string("all") : g.object;
  std::vector<std::string> privileges = g.privileges;  // a set: reordering it is no change
  std::sort(privileges.begin(), privileges.end());
  j["privileges"] = privileges;
  return j;
}

KindForm grant_form() {
  using T = PolicyFieldType;
  return {
      .kind = ResourceKind::Grant,
      .name = "grant",
      .plural = "grants",
      .noun = "grant",
      .parent = ResourceKind::Service,
      .list = "grants",
      .fields = {"role", "schema", "tables", "sequences", "privileges"},
      .policy_fields = {{"project_id", T::Text}, {"service", T::Text}, {"name", T::Text},
                        {"role", T::Text}, {"schema", T::Text}, {"tables", T::Text}, {"sequences", T::Text},
                        {"privileges", T::TextList}},
      .delete_note = " (its privileges revoked)",
      .list_description = "Privileges of the service's declared roles on its schemas, their tables and their "
                          "sequences; each entry is authoritative for its (role, object).",
      .schema = declaration_schema<DesiredGrant>,
      .in_database = true,
  };
}

}  // namespace dbform
