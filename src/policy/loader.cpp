#include "policy/loader.h"

#include <algorithm>
#include <filesystem>
#include <map>
#include <set>

#include "manifest/loader.h"
#include "manifest/mapping_reader.h"
#include "manifest/scalar.h"
#include "manifest/value_reader.h"
#include "manifest/yaml_tree.h"
#include "util/atomic_file.h"
#include "util/crypto.h"
#include "util/error.h"
#include "util/text.h"
#include "util/tree_links.h"

namespace dbform {

namespace {

const MappingSpec kTop{"a policy file", {"version", "rules"}, {"version", "rules"}};
const MappingSpec kRule{"a rule",
                        {"id", "level", "kind", "where", "require", "forbid_actions", "message", "waivable"},
                        {"id", "level", "kind"}};

std::string how_to_add_policy_key(const std::string& key) {
  if (key == "version") return "add `version: 1` at the top";
  if (key == "rules") return "add `rules:` with a list of rules";
  if (key == "id") return "add `id: NAME` (lowercase letters, digits and '-'), unique across the policy files";
  if (key == "level") return "add `level: mandatory` (refuses the plan) or `level: advisory` (warns)";
  if (key == "kind") return "add `kind:` with one of " + join(policy_kinds(), ", ");
  return "add `" + key + ": ...`";
}

const std::map<std::string, PolicyComparison::Op>& operators() {
  using Op = PolicyComparison::Op;
  static const std::map<std::string, Op> ops = {{"==", Op::Eq}, {"!=", Op::Ne}, {">=", Op::Ge}, {"<=", Op::Le},
                                                {">", Op::Gt},  {"<", Op::Lt},  {"in", Op::In}, {"present", Op::Present}};
  return ops;
}

const char* type_expected(PolicyFieldType t) {
  switch (t) {
    case PolicyFieldType::Text: return "a text";
    case PolicyFieldType::Number: return "a number";
    case PolicyFieldType::Size: return "a number or \"shared\"";
    case PolicyFieldType::Bool: return "true or false";
    case PolicyFieldType::Tag: return "DEV or PROD";
    case PolicyFieldType::Strategy: return "LAST_SNAPSHOT or NOW";
    case PolicyFieldType::TextList: return "a list of texts";
  }
  return "a value";
}

class PolicyReader {
 public:
  PolicyReader(const std::string& file, const EnvLookup& env, Diagnostics& diags)
      : values_(file, env, diags), file_(file) {}

  void read(const YamlNode& root, std::vector<PolicyRule>& rules);

 private:
  std::optional<PolicyRule> rule(const Entry& e);
  std::vector<PolicyCondition> conditions(const Entry& e, const std::string& kind);
  std::optional<PolicyCondition> condition(const Entry& e, const PolicyField& field);
  std::optional<nlohmann::json> value(const Entry& e, PolicyFieldType type);
  std::optional<nlohmann::json> scalar(const Entry& e, const std::string& expected);
  std::optional<std::string> one_of(const Entry& e, const std::vector<std::string>& known, const std::string& what);

  ValueReader values_;
  std::string file_;
};

void PolicyReader::read(const YamlNode& root, std::vector<PolicyRule>& rules) {
  if (root.is_null()) {
    values_.error(values_.location(root), "", "the policy file is empty: expected a mapping with `version: 1` and `rules`");
    return;
  }
  auto top = read_mapping(values_, values_.item(root, ""), kTop, how_to_add_policy_key);
  if (!top) return;
  if (const Entry* v = top->find("version")) {
    auto n = scalar(*v, "`version: 1`");
    if (n && *n != 1)
      values_.error(v->where, v->path, "unsupported policy file version " + n->dump() + ": this dbform reads version 1",
                    "write the rules in the version 1 format");
  }
  read_list(values_, *top, "rules", "rules", [&](const Entry& e) {
    if (auto r = rule(e)) rules.push_back(std::move(*r));
  });
}

std::optional<std::string> PolicyReader::one_of(const Entry& e, const std::vector<std::string>& known,
                                                 const std::string& what) {
  auto text = values_.text(e, what + ": one of " + join(known, ", "));
  if (!text) return std::nullopt;
  if (std::find(known.begin(), known.end(), *text) != known.end()) return text;
  std::string guess = suggest_key(*text, known);
  values_.error(e.where, e.path, "unknown " + what + " `" + *text + "`",
                guess.empty() ? "expected one of: " + join(known, ", ") : "did you mean `" + guess + "`?");
  return std::nullopt;
}

std::optional<PolicyRule> PolicyReader::rule(const Entry& e) {
  auto fields = read_mapping(values_, e, kRule, how_to_add_policy_key);
  if (!fields) return std::nullopt;
  PolicyRule r;
  r.location = e.where;
  bool usable = true;
  if (const Entry* f = fields->find("id")) {
    auto id = values_.text(*f, "a rule id (1-64 lowercase letters, digits and '-')");
    if (id && !is_policy_rule_id(*id)) {
      values_.error(f->where, f->path, "expected a rule id (1-64 lowercase letters, digits and '-'), found `" + *id + "`",
                    "waivers name rules by this id: write it like `prod-needs-ha`");
      id.reset();
    }
    if (id) r.id = *id;
    else usable = false;
  }
  if (const Entry* f = fields->find("level")) {
    auto level = one_of(*f, {"mandatory", "advisory"}, "level");
    if (level) r.mandatory = *level == "mandatory";
    else usable = false;
  }
  if (const Entry* f = fields->find("kind")) {
    auto kind = one_of(*f, policy_kinds(), "kind");
    if (kind) r.kind = *kind;
    else usable = false;
  }
  if (!r.kind.empty()) {
    if (const Entry* f = fields->find("where")) r.where = conditions(*f, r.kind);
    if (const Entry* f = fields->find("require")) r.require = conditions(*f, r.kind);
  }
  if (const Entry* f = fields->find("forbid_actions")) {
    read_list(values_, *fields, "forbid_actions", "plan actions", [&](const Entry& item) {
      if (auto action = one_of(item, policy_actions(), "plan action")) r.forbid_actions.push_back(*action);
      else usable = false;
    });
    if (f->value->is_sequence() && f->value->items.empty())
      values_.error(f->where, f->path, "`forbid_actions` lists no action",
                    "list the actions the rule forbids, like `[delete, replace]`, or remove it");
  }
  if (const Entry* f = fields->find("message")) r.message = values_.text(*f, "a text shown with each violation").value_or("");
  if (const Entry* f = fields->find("waivable")) r.waivable = values_.boolean(*f).value_or(false);
  if (!fields->find("require") && !fields->find("forbid_actions")) {
    values_.error(e.where, e.path, "a rule needs `require` or `forbid_actions` (or both): this one checks nothing",
                  "add `require: {FIELD: VALUE}` or `forbid_actions: [delete]`");
    usable = false;
  }
  if (!usable || r.id.empty() || r.kind.empty() || !fields->find("level")) return std::nullopt;
  return r;
}

std::vector<PolicyCondition> PolicyReader::conditions(const Entry& e, const std::string& kind) {
  std::vector<PolicyCondition> out;
  if (!e.value->is_map()) {
    values_.error(e.where, e.path, "expected a mapping of fields to conditions, like `{environment_tag: PROD}`, found " +
                                       values_.describe(*e.value));
    return out;
  }
  const auto& known = policy_fields(kind);
  std::vector<std::string> names;
  for (const auto& f : known) names.push_back(f.name);
  std::set<std::string> seen;
  for (const auto& [key, value] : e.value->pairs) {
    const Location at = values_.location(*key);
    if (!key->is_scalar()) {
      values_.error(at, e.path, "expected a field name, found " + values_.describe(*key));
      continue;
    }
    const std::string path = e.path + "." + key->scalar;
    auto field = std::find_if(known.begin(), known.end(), [&name = key->scalar](const PolicyField& f) { return name == f.name; });
    if (field == known.end()) {
      std::string guess = suggest_key(key->scalar, names);
      values_.error(at, path, "unknown field `" + key->scalar + "` of a " + kind,
                    guess.empty() ? "expected one of: " + join(names, ", ") : "did you mean `" + guess + "`?");
      continue;
    }
    if (!seen.insert(key->scalar).second) {
      values_.error(at, path, "field `" + key->scalar + "` appears twice", "keep one: a field's comparisons go in one mapping");
      continue;
    }
    if (auto c = condition(values_.entry(*key, *value, path), *field)) out.push_back(std::move(*c));
  }
  return out;
}

std::optional<PolicyCondition> PolicyReader::condition(const Entry& e, const PolicyField& field) {
  using Op = PolicyComparison::Op;
  PolicyCondition c{field.name, field.type, {}};
  const bool ordered = field.type == PolicyFieldType::Number || field.type == PolicyFieldType::Size;
  if (!e.value->is_map()) {  // a plain value means equal
    auto v = value(e, field.type);
    if (!v) return std::nullopt;
    c.all.push_back({Op::Eq, *v});
    return c;
  }
  std::vector<std::string> names;
  for (const auto& [name, _] : operators()) names.push_back(name);
  bool ok = true;
  for (const auto& [key, node] : e.value->pairs) {
    const Location at = values_.location(*key);
    auto op = key->is_scalar() ? operators().find(key->scalar) : operators().end();
    if (op == operators().end()) {
      values_.error(at, e.path, "unknown comparison " + (key->is_scalar() ? "`" + key->scalar + "`" : values_.describe(*key)),
                    "expected one of: " + join(names, ", ") + " (quote the symbols: \">=\")");
      ok = false;
      continue;
    }
    const Entry v = values_.entry(*key, *node, e.path + "." + key->scalar);
    if (op->second == Op::Present) {
      auto b = values_.boolean(v);
      if (b) c.all.push_back({Op::Present, *b});
      else ok = false;
    } else if (op->second == Op::In) {
      if (!node->is_sequence() || node->items.empty()) {
        values_.error(v.where, v.path, "expected a list of values for `in`, found " + values_.describe(*node),
                      "write the allowed values, like `{in: [DEV, PROD]}`");
        ok = false;
        continue;
      }
      nlohmann::json items = nlohmann::json::array();
      size_t i = 0;
      for (const YamlNode* item : node->items) {
        auto one = value(values_.item(*item, v.path + "[" + std::to_string(i++) + "]"), field.type);
        if (one) items.push_back(*one);
        else ok = false;
      }
      c.all.push_back({Op::In, items});
    } else if (op->second != Op::Eq && op->second != Op::Ne && !ordered) {
      values_.error(at, v.path, "`" + key->scalar + "` compares numbers, and `" + field.name + "` is not one",
                    "use ==, !=, in or present");
      ok = false;
    } else {
      auto x = value(v, op->second == Op::Eq || op->second == Op::Ne ? field.type : PolicyFieldType::Number);
      if (x) c.all.push_back({op->second, *x});
      else ok = false;
    }
  }
  if (e.value->pairs.empty()) {
    values_.error(e.where, e.path, "the condition holds no comparison", "write a value, or `{\">=\": 1}`");
    ok = false;
  }
  return ok ? std::optional(c) : std::nullopt;
}

std::optional<nlohmann::json> PolicyReader::scalar(const Entry& e, const std::string& expected) {
  const YamlNode& n = *e.value;
  if (!n.is_scalar()) {
    values_.error(e.where, e.path, "expected " + expected + ", found " + values_.describe(n));
    return std::nullopt;
  }
  if (n.tag != "?") return nlohmann::json(n.scalar);
  switch (resolve_plain_scalar(n.scalar)) {
    case ScalarType::Bool: return nlohmann::json(n.scalar == "true" || n.scalar == "True" || n.scalar == "TRUE");
    case ScalarType::Int:
      if (auto i = parse_yaml_int(n.scalar)) return nlohmann::json(*i);
      break;
    case ScalarType::Float:
      if (auto x = parse_yaml_float(n.scalar)) return nlohmann::json(*x);
      break;
    case ScalarType::Null:
      values_.error(e.where, e.path, "expected " + expected + ", found an empty value",
                    "to ask for a field that is not set, write `{present: false}`");
      return std::nullopt;
    case ScalarType::String: return nlohmann::json(n.scalar);
  }
  return nlohmann::json(n.scalar);
}

// A rule's value, checked against what the field can hold: a rule that compares environment_tag
// with `prod` would never match anything, and silently pass.
std::optional<nlohmann::json> PolicyReader::value(const Entry& e, PolicyFieldType type) {
  const std::string expected = type_expected(type);
  if (type == PolicyFieldType::TextList) {
    if (!e.value->is_sequence()) {
      values_.error(e.where, e.path, "expected a list of texts, like `[time-series]`, found " + values_.describe(*e.value));
      return std::nullopt;
    }
    nlohmann::json items = nlohmann::json::array();
    for (const YamlNode* item : e.value->items) {
      auto v = scalar(values_.item(*item, e.path), "a text");
      if (!v) return std::nullopt;
      items.push_back(v->is_string() ? v->get<std::string>() : v->dump());
    }
    std::sort(items.begin(), items.end());
    return items;
  }
  auto v = scalar(e, expected);
  if (!v) return std::nullopt;
  auto wrong = [&](std::string hint = {}) -> std::optional<nlohmann::json> {
    values_.error(e.where, e.path, "expected " + expected + ", found " + values_.describe(*e.value), std::move(hint));
    return std::nullopt;
  };
  switch (type) {
    case PolicyFieldType::Text:
      if (v->is_boolean()) return wrong("quote it to use it as text");
      return v->is_string() ? *v : nlohmann::json(e.value->scalar);
    case PolicyFieldType::Number:
      if (!v->is_number()) return wrong();
      return v;
    case PolicyFieldType::Size:
      if (v->is_number() || *v == "shared") return v;
      return wrong(v->is_string() && upper(v->get<std::string>()) == "SHARED" ? "did you mean `shared`?" : "");
    case PolicyFieldType::Bool:
      if (!v->is_boolean()) return wrong();
      return v;
    case PolicyFieldType::Tag:
    case PolicyFieldType::Strategy: {
      const std::vector<std::string> known = type == PolicyFieldType::Tag ? std::vector<std::string>{"DEV", "PROD"}
                                                                          : std::vector<std::string>{"LAST_SNAPSHOT", "NOW"};
      if (v->is_string() && std::find(known.begin(), known.end(), v->get<std::string>()) != known.end()) return v;
      if (v->is_string() && std::find(known.begin(), known.end(), upper(v->get<std::string>())) != known.end())
        return wrong("did you mean `" + upper(v->get<std::string>()) + "`?");
      return wrong();
    }
    case PolicyFieldType::TextList: break;
  }
  return v;
}

void read_policy_text(const std::string& name, const std::string& text, std::vector<PolicyRule>& rules,
                      Diagnostics& diags) {
  const YamlText yaml(text, kMaxManifestNodes, kMaxManifestAliases);
  if (yaml.problem() == YamlText::Problem::NotText) {
    const YAML::Mark& m = yaml.syntax_error_at();
    diags.error({name, m.line + 1, m.column + 1}, "", not_text_message(), not_text_hint("policy file"));
    return;
  }
  if (yaml.problem() == YamlText::Problem::Syntax) {
    const YAML::Mark& m = yaml.syntax_error_at();
    diags.error({name, m.is_null() ? 0 : m.line + 1, m.is_null() ? 0 : m.column + 1}, "",
                "YAML syntax error: " + yaml.syntax_error());
    return;
  }
  if (yaml.problem() != YamlText::Problem::None) {
    diags.error({name}, "", "the file is too large or too deeply aliased to be a policy file");
    return;
  }
  if (yaml.documents().size() > 1)
    diags.error({name}, "", "a policy file holds one YAML document, this one holds " +
                                std::to_string(yaml.documents().size()), "put the rules in one document, or in several files");
  // Rule files are the platform team's, read as written: no ${VAR} (an interpolation is an error).
  const EnvLookup no_env = [](const std::string&) -> std::optional<std::string> { return std::nullopt; };
  PolicyReader reader(name, no_env, diags);
  if (yaml.documents().empty()) reader.read(YamlNode{}, rules);
  else reader.read(*yaml.documents().front(), rules);
}

// Ids are unique across every file: a waiver names one rule.
void check_unique(const std::vector<PolicyRule>& rules, Diagnostics& diags) {
  std::map<std::string, Location> first;
  for (const auto& r : rules) {
    auto [it, fresh] = first.emplace(r.id, r.location);
    if (!fresh)
      diags.error(r.location, "", "rule `" + r.id + "` is defined twice",
                  "the first is at " + it->second.str() + "; give each rule its own id");
  }
}

std::string digest_of(std::vector<std::string> file_digests) {
  std::sort(file_digests.begin(), file_digests.end());
  return hex(sha256(join(file_digests, "\n")));
}

}  // namespace

PolicySet load_policy_text(const std::string& name, const std::string& text, Diagnostics& diags) {
  PolicySet set;
  read_policy_text(name, text, set.rules, diags);
  check_unique(set.rules, diags);
  set.files = {name};
  set.digest = digest_of({hex(sha256(text))});
  return set;
}

PolicySet load_policy_files(const std::vector<std::string>& paths, Diagnostics& diags) {
  PolicySet set;
  std::vector<std::string> digests;
  for (const auto& path : paths) {
    std::optional<std::string> text;
    const std::filesystem::path parent =
        std::filesystem::path(path).parent_path().empty() ? "." : std::filesystem::path(path).parent_path();
    if (std::string outside = outside_tree(path, repository_tree(parent, parent)); !outside.empty()) {
      diags.error({path}, "", "cannot read this policy file: " + outside,
                  "a rule file is read from inside the repository that holds it; replace the link with the file");
      set.files.push_back(path);
      continue;
    }
    try {
      text = read_file_if_exists(path, Links::Follow, kMaxManifestBytes);
      if (!text) diags.error({path}, "", "cannot read this policy file: no such file",
                             "check --policy and DBFORM_POLICY; the pipeline reads the rules from the base branch");
    } catch (const FileTooLarge&) {
      diags.error({path}, "", "the file is larger than " + std::to_string(kMaxManifestBytes >> 20) + " MiB");
    } catch (const Error& e) {
      diags.error({path}, "", std::string("cannot read this policy file: ") + e.what());
    }
    set.files.push_back(path);
    if (!text) continue;
    digests.push_back(hex(sha256(*text)));
    read_policy_text(path, *text, set.rules, diags);
  }
  check_unique(set.rules, diags);
  if (!paths.empty()) set.digest = digest_of(std::move(digests));
  return set;
}

std::vector<std::string> split_policy_path(const std::string& value) {
  std::vector<std::string> out;
  size_t start = 0;
  while (start <= value.size()) {
    size_t end = value.find(':', start);
    if (end == std::string::npos) end = value.size();
    if (end > start) out.push_back(value.substr(start, end - start));
    start = end + 1;
  }
  return out;
}

}  // namespace dbform
