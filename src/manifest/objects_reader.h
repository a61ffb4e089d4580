#pragma once
// Reads what a service declares inside its database (`roles`, `schemas`, `extensions`, `grants`:
// manifest/database_objects.h) from the service's mapping: each object by its kind's field table
// (kind_role.cpp, kind_schema.cpp, kind_extension.cpp, kind_grant.cpp), then the four checked
// together (a `member_of` naming nothing, a grant to a role not declared, a schema's owner that is
// not a role, one object declared twice). Internal to the manifest module.
#include <optional>
#include <string>
#include <vector>

#include "manifest/database_objects.h"
#include "manifest/kind_reader.h"

namespace dbform {

// The rows of a service's table that read them (`roles`, `schemas`, `extensions`, `grants`), in the
// order the schema lists them; a list of tables gives one grant each.
std::vector<FieldRow<DesiredService>> service_object_rows();

// The checks across a service's objects once all are read: a `member_of` naming nothing, a grant
// to a role not declared, a schema's owner that is not a role. (One declared twice is found by the
// check of every kind's declarations.)
void check_service_objects(ValueReader& values, const DesiredService& service);

// An object's name in PostgreSQL: a manifest name of at most 63 characters (PostgreSQL keeps 63
// bytes of a name: a longer one would be cut, and two names alike in their first 63 would be one
// object); with `reserved_prefix`, not starting with pg_ (PostgreSQL's own roles and schemas).
std::optional<std::string> database_object_name(ValueReader& values, const Entry& e, const char* what,
                                                bool reserved_prefix);

// The row of an object's `name` (database_object_name's rules); `refused` says why a name that
// passes them still cannot be declared (the service's own role, public), with a hint, or nothing.
struct NameRefusal {
  std::string message, hint;
};
template <typename T>
FieldRow<T> object_name_row(const char* what, bool reserved_prefix,
                            std::optional<NameRefusal> (*refused)(const std::string& name), const char* description) {
  auto read = [what, reserved_prefix, refused](KindReader& r, const Entry& f, T& d) {
    auto name = database_object_name(r.values(), f, what, reserved_prefix);
    if (!name) return false;
    if (auto no = refused ? refused(*name) : std::nullopt) {
      r.values().error(f.where, f.path, no->message, no->hint);
      return false;
    }
    d.name = std::move(*name);
    return true;
  };
  return {"name", Presence::Required, read, schema_ref("name", description)};
}

}  // namespace dbform
