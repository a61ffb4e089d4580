// Schemas of a service's database, each owned by a declared role or by tsdbadmin.
#include "manifest/objects_reader.h"

namespace dbform {

namespace {

std::optional<NameRefusal> public_schema_refusal(const std::string& name) {
  // Those the server made (what sql/catalog.cpp leaves out of a database's schemas; a name cannot
  // start with _, as TimescaleDB's internal ones do): dbform would try to give them an owner, or
  // grant on what it does not own.
  if (name == "information_schema" || name == "timescaledb_information" || name == "timescaledb_experimental" ||
      name == "toolkit_experimental")
    return NameRefusal{"`" + name + "` is a schema of PostgreSQL or TimescaleDB in every service: it is not declared",
                       "choose another name"};
  if (name != "public") return std::nullopt;
  return NameRefusal{"`public` is in every database already: it is not declared", "grant on it without declaring it"};
}

bool read_owner(KindReader& r, const Entry& f, DesiredSchema& s) {
  if (auto owner = r.values().name(f)) {
    s.owner = *owner;
    s.owner_at = NameAt{*owner, f.where, f.path};
  }
  return true;
}

}  // namespace

template <> const FieldTable<DesiredSchema>& field_table<DesiredSchema>() {
  static const FieldTable<DesiredSchema> table{
      "a schema",
      "A schema of the service's database. Its name must be unique among the service's schemas.",
      {object_name_row<DesiredSchema>("schema", true, public_schema_refusal,
                                      "The schema's name: at most 63 characters, not starting with pg_, not public."),
       {"owner", Presence::Optional, read_owner,
        schema_ref("name", "The role that owns it: one the service declares, or tsdbadmin (the default).")}}};
  return table;
}

nlohmann::json schema_settings(const DesiredSchema& s) { return {{"owner", s.owner}}; }

KindForm schema_form() {
  using T = PolicyFieldType;
  return {
      .kind = ResourceKind::Schema,
      .name = "schema",
      .plural = "schemas",
      .noun = "schema",
      .parent = ResourceKind::Service,
      .list = "schemas",
      .fields = {"owner"},
      .policy_fields = {{"project_id", T::Text}, {"service", T::Text}, {"name", T::Text}, {"owner", T::Text}},
      .delete_note = " (only when it is empty)",
      .list_description = "Schemas of the service's database.",
      .schema = declaration_schema<DesiredSchema>,
      .in_database = true,
  };
}

}  // namespace dbform
