#pragma once
// Reads the mappings of a YAML document against a list of known keys: an unknown key is an error
// with the closest known one ("did you mean `region_code`?"), a repeated key is an error naming the
// first, a missing required key is an error saying how to add it. Shared by the manifest's reader
// and the policy files' (src/policy), so both formats are validated alike.
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "manifest/value_reader.h"

namespace dbform {

// The keys one kind of mapping may hold, in the order "expected one of" names them.
struct MappingSpec {
  const char* what;  // "a service", for messages
  std::vector<std::string> keys;
  std::vector<std::string> required;
};

// The known keys of one mapping, each with its value, in document order.
class Fields {
 public:
  void add(const std::string& key, Entry e) { entries_.emplace_back(key, std::move(e)); }
  const Entry* find(std::string_view key) const {
    for (const auto& [k, e] : entries_)
      if (k == key) return &e;
    return nullptr;
  }
  const std::vector<std::pair<std::string, Entry>>& entries() const { return entries_; }

 private:
  std::vector<std::pair<std::string, Entry>> entries_;
};

// The known key an unknown one was probably meant to be: a likely typo (`regoin_code`), else the
// key sharing the longest start with it (`region`, `cidr_block`, `replicas`), or "" when none fits.
std::string suggest_key(const std::string& key, const std::vector<std::string>& known);

// How to add a missing required key, for the error's hint.
using HowToAdd = std::function<std::string(const std::string& key)>;

// The mapping held by `e`, its unknown, repeated and missing keys reported; nullopt when `e` is
// not a mapping.
std::optional<Fields> read_mapping(ValueReader& values, const Entry& e, const MappingSpec& spec,
                                   const HowToAdd& how_to_add = {});

// Calls `read_item(entry)` for every item of the list `e` holds (an error when it holds no list).
template <typename ReadItem>
void read_items(ValueReader& values, const Entry& e, const char* expected, ReadItem read_item) {
  if (!e.value->is_sequence()) {
    values.error(e.where, e.path,
                 std::string("expected a list of ") + expected + " (lines starting with `- `), found " +
                     values.describe(*e.value));
    return;
  }
  size_t index = 0;
  for (const YamlNode* item : e.value->items)
    read_item(values.item(*item, e.path + "[" + std::to_string(index++) + "]"));
}

// The same for the list held by field `key`, if present.
template <typename ReadItem>
void read_list(ValueReader& values, const Fields& fields, const char* key, const char* expected, ReadItem read_item) {
  if (const Entry* e = fields.find(key)) read_items(values, *e, expected, read_item);
}

}  // namespace dbform
