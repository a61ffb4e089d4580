#pragma once
// Reads single manifest values (names, CIDRs, sizes, ...) out of YAML nodes (yaml_tree.h). Each reader
// checks one value against the manifest format, interpolates ${VAR}, reports every problem with
// its file:line:col and field path, and returns the canonical value, or nullopt when unusable.
// Internal to the manifest module: document.cpp walks the structure and calls these.
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "manifest/model.h"
#include "manifest/scalar.h"
#include "manifest/yaml_tree.h"
#include "util/diagnostics.h"
#include "util/env.h"

namespace dbform {

// One `key: value` of a mapping (or one item of a list, with a null key).
struct Entry {
  const YamlNode* value = nullptr;
  std::string path;  // field path of the value: projects[0].services[1].cpu_millis
  Location where;    // of the value; of the key when the value is empty (yaml-cpp marks those badly)
};

// Where a ${NAME} was replaced, and the text it gave: the loader hides an error about it when
// the text turns out to hold a secret (which it knows only once every file is read).
struct InterpolatedValue {
  Location where;
  std::string text;
};

// A scalar after interpolation.
struct ScalarValue {
  ScalarType type = ScalarType::String;  // as written; interpolated scalars count as String
  std::string text;
  bool from_env = false;  // some ${VAR} was substituted: numeric fields parse the text
  // How numeric fields see it: an interpolated value is typed as if it had been written plainly.
  ScalarType numeric_type() const { return from_env ? resolve_plain_scalar(text) : type; }
};

class ValueReader {
 public:
  ValueReader(std::string file, const EnvLookup& env, Diagnostics& diags);

  Location location(const YamlNode& node) const;
  Entry entry(const YamlNode& key, const YamlNode& value, std::string path) const;
  Entry item(const YamlNode& value, std::string path) const;
  void error(const Location& where, const std::string& field, std::string message, std::string hint = {});
  void warning(const Location& where, const std::string& field, std::string message, std::string hint = {});
  // "a mapping", "a list", "the integer `5`", "the text `abc`", "an empty value".
  std::string describe(const YamlNode& node) const;
  // What the node is, without its text ("a text of 41 bytes"): for a file that is not dbform's.
  std::string describe_without_text(const YamlNode& node) const;

  void version(const Entry& e);
  std::optional<std::string> text(const Entry& e, std::string_view expected);
  // Project ids and resource names: they appear in addresses (PROJECT/services/NAME, NAME.FIELD).
  std::optional<std::string> name(const Entry& e);
  std::optional<std::string> api_key_env(const Entry& e);
  std::optional<std::string> region_code(const Entry& e);
  std::optional<std::string> cidr(const Entry& e);
  std::optional<std::string> environment_tag(const Entry& e);
  std::optional<std::string> cpu_millis(const Entry& e);
  std::optional<std::string> memory_gbs(const Entry& e);
  std::optional<long long> replica_count(const Entry& e);
  // A whole number of at least `least` (nodes, a read replica set's sizes).
  std::optional<long long> whole_number(const Entry& e, long long least, std::string_view expected);
  // A peer's account or VPC id: text of letters, digits, '-' and '_' (a VPC's id appears in addresses).
  std::optional<std::string> peer_id(const Entry& e);
  std::optional<std::vector<std::string>> addons(const Entry& e);
  std::optional<bool> boolean(const Entry& e);
  // LAST_SNAPSHOT, NOW or PITR; without `pitr` the error names only the first two (PITR itself is
  // returned, for the caller to say why that place takes none).
  std::optional<std::string> fork_strategy(const Entry& e, bool pitr = true);
  std::optional<std::string> utc_time(const Entry& e);       // 2026-11-01T00:00:00Z
  // A role's setting (ALTER ROLE ... SET): any scalar but an empty one, as the text it was written
  // in (`30s`, `100`, `on`).
  std::optional<std::string> setting(const Entry& e);

  const std::vector<InterpolatedValue>& interpolated() const { return interpolated_; }

 private:
  std::optional<ScalarValue> scalar(const Entry& e, std::string_view expected);
  std::string found(const ScalarValue& v) const;
  void wrong(const Entry& e, std::string_view expected, const ScalarValue& v, std::string hint = {});

  std::string file_;
  const EnvLookup& env_;
  Diagnostics& diags_;
  std::vector<InterpolatedValue> interpolated_;
};

// Limits shared with schemas/manifest.schema.json.
inline constexpr size_t kMaxRegionLength = 64;

}  // namespace dbform
