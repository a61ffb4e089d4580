#pragma once
// How a kind's file (kind_vpc.cpp, kind_service.cpp, ...) reads its declarations and describes
// them: a table with a row for each field, holding its key, whether it must be there, how its
// value is read into the declaration and its fragment of the manifest's JSON Schema. The reader,
// the keys that messages list ("expected one of") and the kind's $defs entry of
// schemas/manifest.schema.json (manifest_schema.cpp) all come from that one table, so that a field
// cannot be read without being described, nor described in an order the messages do not use.
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "manifest/database_objects.h"
#include "manifest/mapping_reader.h"
#include "manifest/model.h"
#include "manifest/value_reader.h"

namespace dbform {

// What the kinds' readers share of the reader of one document (document.cpp).
class KindReader {
 public:
  explicit KindReader(ValueReader& values) : values_(values) {}

  ValueReader& values() { return values_; }
  // The mapping held by `e`, its unknown, repeated and missing keys reported (with how to add the
  // missing ones); nullopt when `e` is not a mapping.
  std::optional<Fields> mapping(const Entry& e, const MappingSpec& spec);
  // Calls `read_item(entry)` for every item of the list `e` holds.
  template <typename ReadItem>
  void items(const Entry& e, const char* expected, ReadItem read_item) {
    read_items(values_, e, expected, read_item);
  }
  // A declaration's `policy_waivers`.
  std::vector<PolicyWaiver> waivers(const Entry& e);

 private:
  ValueReader& values_;
};

// Whether a field must be there: a declaration missing a Required one is left out (its error said),
// one missing a Reported one is kept, so that the checks across the files still see it.
enum class Presence { Optional, Required, Reported };

template <typename T>
struct FieldRow {
  const char* key;
  Presence presence;
  // Reads the field's value into the declaration; false when what it read leaves the declaration
  // unusable (it is then left out).
  std::function<bool(KindReader&, const Entry&, T&)> read;
  nlohmann::ordered_json schema;  // the field's entry in its mapping's `properties`
};

template <typename T>
struct FieldTable {
  FieldTable(const char* what, const char* description, std::vector<FieldRow<T>> rows,
             void (*check)(ValueReader&, const T&) = nullptr)
      : description(description), rows(std::move(rows)), spec{what, {}, {}}, check(check) {
    for (const auto& row : this->rows) {
      spec.keys.push_back(row.key);
      if (row.presence != Presence::Optional) spec.required.push_back(row.key);
    }
  }
  // The mapping's JSON Schema: its properties, the keys it requires and no other key.
  nlohmann::ordered_json schema() const;

  const char* description;        // the schema's description of the mapping
  std::vector<FieldRow<T>> rows;  // in the order "expected one of" names them, and read in
  MappingSpec spec;               // its keys, as the reader of mappings takes them
  // The checks across its fields once every row is read (a service's objects' names), or none.
  void (*check)(ValueReader&, const T&) = nullptr;
};

// The JSON Schema of a mapping: `description`, its `properties` and `required` keys, no others.
nlohmann::ordered_json mapping_schema(const char* description, const std::vector<std::string>& required,
                                      nlohmann::ordered_json properties);

template <typename T>
nlohmann::ordered_json FieldTable<T>::schema() const {
  nlohmann::ordered_json properties = nlohmann::ordered_json::object();
  for (const auto& row : rows) properties[row.key] = row.schema;
  return mapping_schema(description, spec.required, std::move(properties));
}

// Each kind's table, in its file (kind_vpc.cpp, ...): adding a kind adds a line here.
template <typename T>
const FieldTable<T>& field_table();
template <> const FieldTable<DesiredVpc>& field_table<DesiredVpc>();
template <> const FieldTable<DesiredPeering>& field_table<DesiredPeering>();
template <> const FieldTable<DesiredService>& field_table<DesiredService>();
template <> const FieldTable<DesiredReplicaSet>& field_table<DesiredReplicaSet>();
// Inside a service's database (manifest/objects_reader.h).
template <> const FieldTable<DesiredRole>& field_table<DesiredRole>();
template <> const FieldTable<DesiredSchema>& field_table<DesiredSchema>();
template <> const FieldTable<DesiredExtension>& field_table<DesiredExtension>();
template <> const FieldTable<DesiredGrant>& field_table<DesiredGrant>();

// The declaration held by `e`, read row by row; nullopt when it is not a mapping or a row made it
// unusable.
template <typename T>
std::optional<T> read_declaration(KindReader& r, const Entry& e) {
  const FieldTable<T>& table = field_table<T>();
  auto fields = r.mapping(e, table.spec);
  if (!fields) return std::nullopt;
  T out;
  out.location = e.where;
  if constexpr (requires { out.path; }) out.path = e.path;
  bool usable = true;
  for (const auto& row : table.rows) {
    if (const Entry* f = fields->find(row.key)) usable = row.read(r, *f, out) && usable;
    else if (row.presence == Presence::Required) usable = false;
  }
  if (!usable) return std::nullopt;
  if (table.check) table.check(r.values(), out);
  return out;
}

// The kind's mapping in the manifest's JSON Schema (its KindForm's `schema`).
template <typename T>
nlohmann::ordered_json declaration_schema() {
  return field_table<T>().schema();
}

// The pieces of schema the fields are written with.
//
// A value that may also be ${NAME} text, which dbform checks once interpolated: `form` (JSON text)
// is what it must be otherwise.
nlohmann::ordered_json interpolable(const char* description, std::string_view form,
                                    std::string_view examples = "");
// `{"$ref": "#/$defs/DEF"}`, with a description when given.
nlohmann::ordered_json schema_ref(const char* def, const char* description = nullptr);
// The schema of the list that holds `form`'s declarations (its `list` key).
nlohmann::ordered_json list_schema(const KindForm& form);

// A row reading one value with `read` (a ValueReader member or a callable taking one and the entry,
// returning an optional) into `member`; a member that is not optional takes the value or its
// type's empty one. A Required row leaves the declaration out when the value cannot be read.
template <typename T, typename M, typename Read>
FieldRow<T> value_row(const char* key, Presence presence, M T::*member, Read read, nlohmann::ordered_json schema) {
  auto read_into = [member, read, presence](KindReader& r, const Entry& f, T& d) {
    auto value = std::invoke(read, r.values(), f);
    const bool usable = value.has_value() || presence != Presence::Required;
    if constexpr (std::is_same_v<M, decltype(value)>) d.*member = std::move(value);
    else d.*member = std::move(value).value_or(M{});
    return usable;
  };
  return {key, presence, read_into, std::move(schema)};
}

// The rows several kinds' declarations have, alike for each (T's members of the same names).
nlohmann::ordered_json deletion_protection_schema();
nlohmann::ordered_json import_id_schema();
nlohmann::ordered_json connection_pooler_schema();
nlohmann::ordered_json environment_tag_schema();

template <typename T>
FieldRow<T> name_row() {
  return value_row("name", Presence::Required, &T::name, &ValueReader::name, schema_ref("name"));
}
template <typename T>
FieldRow<T> deletion_protection_row() {
  return value_row("deletion_protection", Presence::Optional, &T::deletion_protection, &ValueReader::boolean,
                   deletion_protection_schema());
}
template <typename T>
FieldRow<T> renamed_from_row() {
  return value_row("renamed_from", Presence::Optional, &T::renamed_from, &ValueReader::name,
                   schema_ref("name", "The name it is recorded under: the record moves to this name and one rename "
                                      "call is made (never a create and a delete)."));
}
template <typename T>
FieldRow<T> import_id_row() {
  return value_row("import_id", Presence::Optional, &T::import_id, &ValueReader::peer_id, import_id_schema());
}
template <typename T>
FieldRow<T> policy_waivers_row() {
  auto read = [](KindReader& r, const Entry& f, T& d) {
    d.policy_waivers = r.waivers(f);
    return true;
  };
  return {"policy_waivers", Presence::Optional, read, schema_ref("policy_waivers")};
}

// The row of the list of a kind that lives in T's kind (a VPC's `peerings`): its key and schema
// come from the child's form.
template <typename T, typename Child>
FieldRow<T> children_row(ResourceKind child, const char* expected, std::vector<Child> T::*member) {
  const KindForm& form = kind_form(child);
  return {form.list, Presence::Optional,
          [expected, member](KindReader& r, const Entry& f, T& d) {
            r.items(f, expected, [&](const Entry& item) {
              if (auto c = read_declaration<Child>(r, item)) (d.*member).push_back(std::move(*c));
            });
            return true;
          },
          list_schema(form)};
}

}  // namespace dbform
