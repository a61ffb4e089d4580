// Extensions of a service's database, from those its server offers.
#include "manifest/objects_reader.h"

namespace dbform {

template <> const FieldTable<DesiredExtension>& field_table<DesiredExtension>() {
  static const FieldTable<DesiredExtension> table{
      "an extension",
      "An extension of the service's database, like pg_stat_statements. Each at most once.",
      {object_name_row<DesiredExtension>("extension", false, nullptr,
                                         "The extension's name, as CREATE EXTENSION takes it.")}};
  return table;
}

nlohmann::json extension_settings(const DesiredExtension&) { return nlohmann::json::object(); }

KindForm extension_form() {
  using T = PolicyFieldType;
  return {
      .kind = ResourceKind::Extension,
      .name = "extension",
      .plural = "extensions",
      .noun = "extension",
      .parent = ResourceKind::Service,
      .list = "extensions",
      .policy_fields = {{"project_id", T::Text}, {"service", T::Text}, {"name", T::Text}},
      .delete_note = " (only when nothing depends on it)",
      .list_description = "Extensions of the service's database, from those its server offers.",
      .schema = declaration_schema<DesiredExtension>,
      .in_database = true,
  };
}

}  // namespace dbform
