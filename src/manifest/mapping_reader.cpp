#include "manifest/mapping_reader.h"

#include <algorithm>

#include "util/text.h"

namespace dbform {

std::string suggest_key(const std::string& key, const std::vector<std::string>& known) {
  std::string typo = closest_match(key, known);
  if (!typo.empty()) return typo;
  std::string best;
  size_t best_shared = 0;
  for (const auto& k : known) {
    size_t shared = 0;
    while (shared < k.size() && shared < key.size() && k[shared] == key[shared]) ++shared;
    if (shared > best_shared) {
      best_shared = shared;
      best = k;
    }
  }
  bool plausible = best_shared >= 3 && best_shared * 2 >= std::min(key.size(), best.size());
  return plausible ? best : "";
}

std::optional<Fields> read_mapping(ValueReader& values, const Entry& e, const MappingSpec& spec,
                                   const HowToAdd& how_to_add) {
  if (!e.value->is_map()) {
    // A file whose top level is not a mapping is no manifest or rule file at all (a password file,
    // a key, a credentials line): what it holds is never quoted, only what it is.
    const std::string found = e.path.empty() ? values.describe_without_text(*e.value) : values.describe(*e.value);
    values.error(e.where, e.path,
                 std::string("expected a mapping (KEY: VALUE lines) describing ") + spec.what + ", found " + found,
                 e.path.empty() ? "what the file holds is not shown: a file whose top level is not a mapping is "
                                  "none of dbform's (is this the file you meant?)"
                                : "");
    return std::nullopt;
  }
  auto field_path = [&](const std::string& key) { return e.path.empty() ? key : e.path + "." + key; };
  Fields fields;
  std::vector<std::pair<std::string, Location>> seen;
  for (const auto& [key_ptr, value] : e.value->pairs) {
    const YamlNode& key_node = *key_ptr;
    Location key_at = values.location(key_node);
    if (!key_node.is_scalar()) {
      values.error(key_at, e.path, "expected a key name, found " + values.describe(key_node));
      continue;
    }
    const std::string& key = key_node.scalar;
    if (std::find(spec.keys.begin(), spec.keys.end(), key) == spec.keys.end()) {
      std::string guess = suggest_key(key, spec.keys);
      values.error(key_at, field_path(key), "unknown key `" + key + "` in " + spec.what,
                   guess.empty() ? "expected one of: " + join(spec.keys, ", ") : "did you mean `" + guess + "`?");
      continue;
    }
    auto previous = std::find_if(seen.begin(), seen.end(), [&](const auto& s) { return s.first == key; });
    if (previous != seen.end()) {
      values.error(key_at, field_path(key), "key `" + key + "` appears twice in " + spec.what,
                   "the first is at " + previous->second.str() + "; keep one");
      continue;
    }
    seen.emplace_back(key, key_at);
    fields.add(key, values.entry(key_node, *value, field_path(key)));
  }
  for (const auto& key : spec.required) {
    if (!fields.find(key))
      values.error(e.where, field_path(key), std::string(spec.what) + " needs `" + key + "`",
                   how_to_add ? how_to_add(key) : "add `" + key + ": ...`");
  }
  return fields;
}

}  // namespace dbform
