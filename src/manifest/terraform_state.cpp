#include "manifest/terraform_state.h"

#include "util/error.h"
#include "util/json_limits.h"
#include "util/text.h"

namespace dbform {

using nlohmann::json;

namespace {

// A state of thousands of resources is a few MiB; nesting beyond this is not a provider's.
constexpr JsonLimits kTfStateLimits{256u << 20, 64};

[[noreturn]] void refuse_tf_state(const std::string& file, const std::string& where, const std::string& what) {
  throw UsageError(file + (where.empty() ? "" : ": " + where) + ": " + what +
                   "; nothing was written. Give the file `terraform state pull` writes (or `terraform show -json`'s "
                   "output)");
}

const char* tf_type_name(const json& v) {
  if (v.is_object()) return "an object";
  if (v.is_array()) return "a list";
  if (v.is_string()) return "a string";
  if (v.is_boolean()) return "a boolean";
  if (v.is_number()) return "a number";
  return "null";
}

// The field `key` of `object`, which must be of the shape `is`; `what` names the shape.
const json& tf_field(const json& object, const char* key, bool (json::*is)() const noexcept, const char* what,
                  const std::string& file, const std::string& where) {
  auto it = object.find(key);
  if (it == object.end()) refuse_tf_state(file, where, "has no `" + std::string(key) + "`");
  if (!((*it).*is)()) refuse_tf_state(file, where + "." + key, std::string("is ") + tf_type_name(*it) + ", not " + what);
  return *it;
}

std::string tf_text(const json& object, const char* key, const std::string& file, const std::string& where) {
  return tf_field(object, key, &json::is_string, "a string", file, where).get<std::string>();
}

// An instance key as Terraform writes it in an address: [0] or ["eu"].
std::string tf_index_suffix(const json& key, const std::string& file, const std::string& where) {
  if (key.is_number_integer()) return "[" + std::to_string(key.get<long long>()) + "]";
  if (key.is_string()) return "[" + json(valid_utf8(key.get<std::string>())).dump() + "]";
  refuse_tf_state(file, where, std::string("is ") + tf_type_name(key) + ", not a count index or a for_each key");
}

// `provider["registry.terraform.io/timescale/timescale"].eu` -> the source and "eu"; a prefix
// `module.db.` makes the configuration "module.db.eu" (or "module.db": that module's default).
void read_tf_provider(const std::string& text, TerraformInstance& instance, const std::string& file,
                   const std::string& where) {
  const size_t open = text.find("provider[\"");
  const size_t close = open == std::string::npos ? open : text.find("\"]", open + 10);
  if (close == std::string::npos)
    refuse_tf_state(file, where + ".provider", "is not a provider configuration's address (provider[\"SOURCE\"])");
  std::string prefix = text.substr(0, open);
  if (!prefix.empty() && prefix.back() == '.') prefix.pop_back();
  instance.provider = valid_utf8(text.substr(open + 10, close - open - 10));
  std::string alias = text.substr(close + 2);
  if (!alias.empty() && alias[0] != '.')
    refuse_tf_state(file, where + ".provider", "is not a provider configuration's address (provider[\"SOURCE\"].ALIAS)");
  if (!alias.empty()) alias.erase(0, 1);
  instance.configuration = valid_utf8(prefix.empty() ? alias : alias.empty() ? prefix : prefix + "." + alias);
}

// A module address with an instance key anywhere (module.db[0].module.x) cannot be a removed
// block's `from`.
bool has_tf_instance_key(const std::string& module) { return module.find('[') != std::string::npos; }

// Format version 4: resources[] with mode, type, name, provider and instances[].
TerraformState read_state_v4(const json& doc, const std::string& file) {
  TerraformState state;
  state.form = "a Terraform state (version 4)";
  if (doc.contains("resources") && doc["resources"].is_null()) return state;
  const json& resources = tf_field(doc, "resources", &json::is_array, "a list", file, "");
  for (size_t i = 0; i < resources.size(); ++i) {
    const std::string where = "resources[" + std::to_string(i) + "]";
    const json& r = resources[i];
    if (!r.is_object()) refuse_tf_state(file, where, std::string("is ") + tf_type_name(r) + ", not an object");
    if (tf_text(r, "mode", file, where) != "managed") continue;
    const std::string type = valid_utf8(tf_text(r, "type", file, where));
    const std::string name = valid_utf8(tf_text(r, "name", file, where));
    std::string module;
    if (r.contains("module")) module = valid_utf8(tf_text(r, "module", file, where));
    const std::string provider = tf_text(r, "provider", file, where);
    const std::string resource = (module.empty() ? "" : module + ".") + type + "." + name;
    const json& instances = tf_field(r, "instances", &json::is_array, "a list", file, where);
    for (size_t n = 0; n < instances.size(); ++n) {
      const std::string at = where + ".instances[" + std::to_string(n) + "]";
      const json& in = instances[n];
      if (!in.is_object()) refuse_tf_state(file, at, std::string("is ") + tf_type_name(in) + ", not an object");
      TerraformInstance instance;
      instance.type = type;
      instance.resource = resource;
      instance.address = resource;
      instance.where = at;
      if (auto key = in.find("index_key"); key != in.end() && !key->is_null()) {
        instance.keyed = true;
        instance.address += tf_index_suffix(*key, file, at + ".index_key");
      }
      instance.in_module_instance = has_tf_instance_key(module);
      instance.tainted = in.contains("status") && in["status"] == "tainted";
      instance.deposed = in.contains("deposed") && !in["deposed"].is_null();
      read_tf_provider(provider, instance, file, where);
      instance.attributes = tf_field(in, "attributes", &json::is_object, "an object", file, at);
      // Each sensitive path: [{"type": "get_attr", "value": "password"}, ...]; its first step names
      // the attribute.
      if (auto paths = in.find("sensitive_attributes"); paths != in.end() && paths->is_array())
        for (const auto& path : *paths)
          if (path.is_array() && !path.empty() && path[0].is_object() && path[0].value("type", "") == "get_attr" &&
              path[0].contains("value") && path[0]["value"].is_string())
            instance.sensitive.insert(path[0]["value"].get<std::string>());
      state.instances.push_back(std::move(instance));
    }
  }
  return state;
}

// `terraform show -json`: values.root_module.resources[] and child_modules[] within each other.
void read_tf_module(const json& module, const std::string& where, const std::string& file, TerraformState& state) {
  if (!module.is_object()) refuse_tf_state(file, where, std::string("is ") + tf_type_name(module) + ", not an object");
  std::string module_address;
  if (module.contains("address")) module_address = valid_utf8(tf_text(module, "address", file, where));
  if (auto resources = module.find("resources"); resources != module.end()) {
    if (!resources->is_array()) refuse_tf_state(file, where + ".resources", std::string("is ") + tf_type_name(*resources) + ", not a list");
    for (size_t i = 0; i < resources->size(); ++i) {
      const std::string at = where + ".resources[" + std::to_string(i) + "]";
      const json& r = (*resources)[i];
      if (!r.is_object()) refuse_tf_state(file, at, std::string("is ") + tf_type_name(r) + ", not an object");
      if (tf_text(r, "mode", file, at) != "managed") continue;
      TerraformInstance instance;
      instance.type = valid_utf8(tf_text(r, "type", file, at));
      const std::string name = valid_utf8(tf_text(r, "name", file, at));
      instance.resource = (module_address.empty() ? "" : module_address + ".") + instance.type + "." + name;
      instance.address = valid_utf8(tf_text(r, "address", file, at));
      if (auto key = r.find("index"); key != r.end() && !key->is_null()) {
        instance.keyed = true;
        if (instance.address != instance.resource + tf_index_suffix(*key, file, at + ".index"))
          refuse_tf_state(file, at + ".address", "does not name its module, type, name and index");
      } else if (instance.address != instance.resource) {
        refuse_tf_state(file, at + ".address", "does not name its module, type and name");
      }
      instance.in_module_instance = has_tf_instance_key(module_address);
      instance.tainted = r.contains("tainted") && r["tainted"] == true;
      instance.deposed = r.contains("deposed_key") && !r["deposed_key"].is_null();
      instance.provider = valid_utf8(tf_text(r, "provider_name", file, at));
      instance.where = at;
      instance.attributes = tf_field(r, "values", &json::is_object, "an object", file, at);
      if (auto marks = r.find("sensitive_values"); marks != r.end() && marks->is_object())
        for (const auto& [key, mark] : marks->items())
          if (mark == true) instance.sensitive.insert(key);
      state.instances.push_back(std::move(instance));
    }
  }
  if (auto children = module.find("child_modules"); children != module.end()) {
    if (!children->is_array()) refuse_tf_state(file, where + ".child_modules", std::string("is ") + tf_type_name(*children) + ", not a list");
    for (size_t i = 0; i < children->size(); ++i)
      read_tf_module((*children)[i], where + ".child_modules[" + std::to_string(i) + "]", file, state);
  }
}

TerraformState read_show_json(const json& doc, const std::string& file) {
  const std::string version = tf_text(doc, "format_version", file, "");
  if (version.rfind("1.", 0) != 0)
    refuse_tf_state(file, "format_version", "is " + json(valid_utf8(version)).dump() +
                                       ": dbform reads `terraform show -json`'s format 1.x");
  if (doc.contains("planned_values") || doc.contains("resource_changes"))
    refuse_tf_state(file, "", "is a plan's JSON (`terraform show -json PLANFILE`), not a state's");
  TerraformState state;
  state.form = "`terraform show -json` output";
  auto values = doc.find("values");
  if (values == doc.end() || values->is_null()) return state;  // an empty state has none
  if (!values->is_object()) refuse_tf_state(file, "values", std::string("is ") + tf_type_name(*values) + ", not an object");
  const json& root = tf_field(*values, "root_module", &json::is_object, "an object", file, "values");
  read_tf_module(root, "values.root_module", file, state);
  return state;
}

}  // namespace

bool is_timescale_provider(std::string_view source) {
  const std::string_view tail = "/timescale/timescale";
  return source == "timescale/timescale" ||
         (source.size() > tail.size() && source.substr(source.size() - tail.size()) == tail &&
          source.substr(0, source.size() - tail.size()).find('/') == std::string_view::npos);
}

TerraformState parse_terraform_state(std::string_view text, const std::string& file) {
  if (text.size() >= 2 && ((text[0] == '\xff' && text[1] == '\xfe') || (text[0] == '\xfe' && text[1] == '\xff')))
    refuse_tf_state(file, "", "is UTF-16 text (PowerShell's `>` writes it): write it as UTF-8 (`terraform state pull | "
                              "Out-File -Encoding utf8 FILE`)");
  std::string problem;
  const json doc = parse_json_within(text, kTfStateLimits, problem);
  if (doc.is_discarded()) refuse_tf_state(file, "", "is " + problem);
  if (!doc.is_object()) refuse_tf_state(file, "", std::string("is ") + tf_type_name(doc) + ", not a Terraform state (an object)");
  if (doc.contains("format_version")) return read_show_json(doc, file);
  auto version = doc.find("version");
  if (version == doc.end())
    refuse_tf_state(file, "", "has neither `version` (a state) nor `format_version` (`terraform show -json`)");
  if (!version->is_number_integer())
    refuse_tf_state(file, "version", std::string("is ") + tf_type_name(*version) + ", not a format version number");
  if (*version != 4)
    refuse_tf_state(file, "version", "is " + std::to_string(version->get<long long>()) +
                                ": dbform reads format version 4 (Terraform 0.12 and later; `terraform state pull` "
                                "with a current Terraform writes it)");
  return read_state_v4(doc, file);
}

}  // namespace dbform
