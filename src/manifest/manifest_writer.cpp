#include "manifest/manifest_writer.h"

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <map>
#include <set>

#include <yaml-cpp/yaml.h>

#include "manifest/loader.h"
#include "manifest/scalar.h"
#include "util/env.h"
#include "util/error.h"
#include "util/json_limits.h"
#include "util/text.h"

namespace dbform {

namespace {

// Plain scalars that YAML 1.1 readers (PyYAML, many editors) take for booleans, though YAML 1.2's
// core schema, which dbform reads, takes them for text.
bool is_yaml11_boolean(const std::string& text) {
  static const std::set<std::string> words = {"y",  "Y",  "yes", "Yes", "YES", "n",   "N",   "no",
                                              "No", "NO", "on",  "On",  "ON",  "off", "Off", "OFF"};
  return words.count(text) > 0;
}

// Text as one YAML scalar that every YAML reader takes back as exactly that text: `${` escaped as
// `$${` (dbform's reader's escape), and double quotes wherever a plain scalar would be typed
// otherwise (`true`, `123`, `null`, YAML 1.1's `yes`). The emitter quotes and escapes what plain
// YAML cannot hold, every character beyond ASCII included (some readers break lines at U+0085).
void emit_text(YAML::Emitter& out, const std::string& text) {
  std::string escaped;
  for (size_t i = 0; i < text.size(); ++i) {
    if (text.compare(i, 2, "${") == 0) escaped += '$';
    escaped += text[i];
  }
  if (resolve_plain_scalar(escaped) != ScalarType::String || is_yaml11_boolean(escaped)) out << YAML::DoubleQuoted;
  out << escaped;
}

bool is_number(const std::string& text) {
  const ScalarType type = resolve_plain_scalar(text);
  return type == ScalarType::Int || type == ScalarType::Float;
}

// A size that is a number (`1000`, `0.5`) is written plain, as a person would: the reader takes a
// number for it.
void emit_value(YAML::Emitter& out, const std::string& key, const nlohmann::json& v) {
  if (v.is_boolean()) out << v.get<bool>();
  else if (v.is_number_integer()) out << v.get<long long>();
  else if (v.is_array()) {
    out << YAML::Flow << YAML::BeginSeq;
    for (const auto& item : v) emit_text(out, item.is_string() ? item.get<std::string>() : dump_json(item));
    out << YAML::EndSeq;
  } else if (v.is_string() && (key == "cpu_millis" || key == "memory_gbs") && is_number(v.get<std::string>())) {
    out << v.get<std::string>();
  } else {
    emit_text(out, v.is_string() ? v.get<std::string>() : dump_json(v));
  }
}

// How each kind is declared: its list's key (in the project, or in its parent's declaration), the
// key of its name ("" for a peering, known by its peer VPC's id, a field of its own) and its fields.
struct Declared {
  ResourceKind kind;
  const char* list;
  const char* name_key;
  std::vector<const char*> fields;
};
const std::vector<Declared> kDeclared = {
    {ResourceKind::Vpc, "vpcs", "name", {"cidr", "region_code"}},
    {ResourceKind::Service, "services", "name",
     {"addons", "cpu_millis", "memory_gbs", "environment_tag", "region_code", "replica_count", "sync_replica_count",
      "vpc", "connection_pooler", "paused"}},
    {ResourceKind::ReplicaSet, "read_replicas", "name",
     {"nodes", "cpu_millis", "memory_gbs", "environment_tag", "connection_pooler"}},
    {ResourceKind::Peering, "peerings", "", {"peer_account_id", "peer_region_code", "peer_vpc_id"}},
};

// The records of `kind` in `parent` (its name; "" for a project's own), as one list under `list`.
void emit_list(YAML::Emitter& out, const Declared& d, const std::string& parent,
               const std::vector<FoundResource>& records) {
  bool any = false;
  for (const auto& r : records) {
    if (r.kind != d.kind || r.parent != parent) continue;
    if (!any) out << YAML::Key << d.list << YAML::Value << YAML::BeginSeq;
    any = true;
    out << YAML::BeginMap;
    if (*d.name_key) {
      out << YAML::Key << d.name_key << YAML::Value;
      emit_text(out, r.name);
    }
    out << YAML::Key << "import_id" << YAML::Value;  // read back and compared like every field
    emit_text(out, r.id);
    for (const char* key : d.fields)
      if (auto v = r.settings.find(key); v != r.settings.end() && !v->is_null()) {
        out << YAML::Key << key << YAML::Value;
        emit_value(out, key, *v);
      }
    for (const Declared& child : kDeclared)
      if (parent_kind(child.kind) == d.kind) emit_list(out, child, r.name, records);
    out << YAML::EndMap;
  }
  if (any) out << YAML::EndSeq;
}

std::string emit(const std::string& project_id, const std::vector<FoundResource>& records) {
  YAML::Emitter out;
  out.SetIndent(2);
  out.SetOutputCharset(YAML::EscapeNonAscii);
  out << YAML::BeginMap << YAML::Key << "version" << YAML::Value << 1;
  out << YAML::Key << "projects" << YAML::Value << YAML::BeginSeq << YAML::BeginMap;
  out << YAML::Key << "id" << YAML::Value;
  emit_text(out, project_id);
  for (const Declared& d : kDeclared)
    if (!parent_kind(d.kind)) emit_list(out, d, "", records);
  out << YAML::EndMap << YAML::EndSeq << YAML::EndMap;
  if (!out.good())
    throw Error("the manifest of project " + valid_utf8(project_id) + " could not be written: " + out.GetLastError() +
                "; nothing was written");
  return "# Generated by `dbform import --generate`: what the project held that the state did not record,\n"
         "# as it was then, each with its import_id. Nothing is recorded yet: a plan with this file among the\n"
         "# manifests shows the imports, and apply records them. Every field here is managed from then on.\n" +
         std::string(out.c_str()) + "\n";
}

// "projects[0].services[2].cpu_millis" -> the third service emitted (a path into one of its
// read replica sets names the service too); "" when the path names none.
std::string address_of_field(const std::string& field, const std::string& project_id,
                             const std::vector<FoundResource>& records) {
  for (const Declared& d : kDeclared) {
    const std::string prefix = "projects[0]." + std::string(d.list) + "[";
    if (parent_kind(d.kind) || field.rfind(prefix, 0) != 0) continue;
    size_t index = std::strtoul(field.c_str() + prefix.size(), nullptr, 10);
    for (const auto& r : records)
      if (r.kind == d.kind && index-- == 0) return resource_address(project_id, r.kind, r.name, r.parent);
  }
  return "";
}

// A declaration's settings with its import_id, as compared with what was found.
template <typename D>
nlohmann::json with_import_id(const D& declared) {
  nlohmann::json j = settings_json(declared);
  if (declared.import_id) j["import_id"] = *declared.import_id;
  return j;
}

// Every resource the manifest declares, address -> its settings and import_id.
std::map<std::string, nlohmann::json> declarations(const DesiredProject& project) {
  std::map<std::string, nlohmann::json> declared;
  const std::string& id = project.id;
  for (const auto& v : project.vpcs) {
    declared[resource_address(id, ResourceKind::Vpc, v.name)] = with_import_id(v);
    for (const auto& p : v.peerings)
      declared[resource_address(id, ResourceKind::Peering, p.peer_vpc_id, v.name)] = with_import_id(p);
  }
  for (const auto& s : project.services) {
    declared[resource_address(id, ResourceKind::Service, s.name)] = with_import_id(s);
    for (const auto& set : s.read_replicas)
      declared[resource_address(id, ResourceKind::ReplicaSet, set.name, s.name)] = with_import_id(set);
  }
  return declared;
}

}  // namespace

std::string generated_manifest(const std::string& project_id, const std::vector<FoundResource>& records,
                               const std::string& file) {
  const std::string text = emit(project_id, records);
  Diagnostics diags;
  const EnvLookup no_environment = [](const std::string&) { return std::nullopt; };
  Manifest back = load_manifest_text(file, text, no_environment, diags);
  std::vector<std::string> problems;
  for (const auto& d : diags.items()) {
    if (d.severity != Severity::Error) continue;
    const std::string address = address_of_field(d.field, project_id, records);
    problems.push_back((address.empty() ? file : address) + ": " + d.message);
  }
  if (problems.empty()) {
    const DesiredProject* project = back.projects.size() == 1 ? &back.projects.front() : nullptr;
    if (!project || project->id != project_id)
      problems.push_back("project " + valid_utf8(project_id) + ": its id would read back otherwise");
    const std::map<std::string, nlohmann::json> declared =
        project ? declarations(*project) : std::map<std::string, nlohmann::json>();
    if (declared.size() != records.size())
      problems.push_back(file + ": it would declare " + std::to_string(declared.size()) + " resources, not the " +
                         std::to_string(records.size()) + " found");
    for (const auto& r : records) {
      nlohmann::json found = r.settings;
      found["import_id"] = r.id;
      const std::string address = resource_address(project_id, r.kind, r.name, r.parent);
      auto it = declared.find(address);
      if (it == declared.end()) problems.push_back(address + ": not declared when read back");
      else if (it->second != found)
        problems.push_back(address + ": would read back as " + dump_json(it->second) + ", not as found " +
                           dump_json(found));
    }
  }
  if (!problems.empty())
    throw Error("nothing was written: the API's answers cannot be declared exactly as they are in a manifest:\n  " +
                join(problems, "\n  "));
  return text;
}

}  // namespace dbform
