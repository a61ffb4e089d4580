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

}  // namespace dbform
