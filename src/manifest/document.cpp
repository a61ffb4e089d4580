#include "manifest/document.h"

#include <algorithm>
#include <filesystem>
#include <optional>

#include "manifest/kind_reader.h"
#include "manifest/mapping_reader.h"
#include "manifest/value_reader.h"
#include "util/duration.h"
#include "util/text.h"

namespace dbform {

namespace {

// The keys each kind of mapping may hold, kept in the order the schema lists them, which is also
// the order "expected one of" names them in.
const MappingSpec kTopLevel{"the manifest", {"version", "projects"}, {"version", "projects"}};
const MappingSpec kProject{"a project", {"id", "api_key_env", "wait_connectable", "vpcs", "services", "removed", "previews"}, {"id"}};
const MappingSpec kPreviews{"a `previews:` block",
                            {"services", "strategy", "ttl", "max", "migrations", "cpu_millis", "memory_gbs"},
                            {"services", "ttl", "max"}};
class DocumentReader {
 public:
  DocumentReader(const std::string& file, const EnvLookup& env, Diagnostics& diags)
      : values_(file, env, diags), kinds_(values_) {}

  std::vector<DesiredProject> read(const YamlNode& root);
  const std::vector<InterpolatedValue>& interpolated() const { return values_.interpolated(); }

 private:
  std::optional<Fields> mapping(const Entry& e, const MappingSpec& spec);
  // Calls `read_item(entry)` for every item of the list held by field `key`, if present.
  template <typename ReadItem>
  void list(const Fields& fields, const char* key, const char* expected, ReadItem read_item);

  std::optional<DesiredProject> project(const Entry& e);
  std::optional<DesiredPreviews> previews(const Entry& e);

  ValueReader values_;
  KindReader kinds_;  // what the kinds' readers (kind_NAME.cpp) read with
};

std::optional<Fields> DocumentReader::mapping(const Entry& e, const MappingSpec& spec) {
  return kinds_.mapping(e, spec);
}

template <typename ReadItem>
void DocumentReader::list(const Fields& fields, const char* key, const char* expected, ReadItem read_item) {
  read_list(values_, fields, key, expected, read_item);
}

std::vector<DesiredProject> DocumentReader::read(const YamlNode& root) {
  std::vector<DesiredProject> projects;
  if (root.is_null()) {
    values_.error(values_.location(root), "",
                  "the manifest is empty: expected a mapping with `version: 1` and `projects`");
    return projects;
  }
  auto top = mapping(values_.item(root, ""), kTopLevel);
  if (!top) return projects;
  if (const Entry* v = top->find("version")) values_.version(*v);
  list(*top, "projects", "projects", [&](const Entry& e) {
    if (auto p = project(e)) projects.push_back(std::move(*p));
  });
  return projects;
}

std::optional<DesiredProject> DocumentReader::project(const Entry& e) {
  auto fields = mapping(e, kProject);
  if (!fields) return std::nullopt;
  DesiredProject p;
  p.location = e.where;
  if (const Entry* id = fields->find("id")) p.id = values_.name(*id).value_or("");
  if (const Entry* key_env = fields->find("api_key_env")) p.api_key_env = values_.api_key_env(*key_env);
  if (const Entry* f = fields->find("wait_connectable")) p.wait_connectable = values_.boolean(*f);
  list(*fields, "vpcs", "VPCs", [&](const Entry& item) {
    if (auto v = read_declaration<DesiredVpc>(kinds_, item)) p.vpcs.push_back(std::move(*v));
  });
  list(*fields, "services", "services", [&](const Entry& item) {
    if (auto s = read_declaration<DesiredService>(kinds_, item)) p.services.push_back(std::move(*s));
  });
  list(*fields, "removed", "addresses of the project", [&](const Entry& item) {
    constexpr std::string_view expected =
        "an address of the project: services/NAME, vpcs/NAME, services/NAME/replicas/SET or vpcs/NAME/peerings/PEER_VPC_ID";
    auto text = values_.text(item, expected);
    if (!text || p.id.empty()) return;
    const std::string address = text->rfind(p.id + "/", 0) == 0 ? *text : p.id + "/" + *text;
    const auto parts = parse_address(address);
    if (!parts || parts->project_id != p.id || resource_address(parts->project_id, parts->kind, parts->name, parts->parent) != address)
      values_.error(item.where, item.path, "`" + *text + "` is not " + std::string(expected),
                    "write it as in `dbform state list`, without the project (or with this project's id)");
    else
      p.removed.push_back({address, item.where});
  });
  if (const Entry* f = fields->find("previews")) p.previews = previews(*f);
  return p;
}

std::optional<DesiredPreviews> DocumentReader::previews(const Entry& e) {
  auto fields = mapping(e, kPreviews);
  if (!fields) return std::nullopt;
  DesiredPreviews p;
  p.location = e.where;
  p.path = e.path;
  bool usable = true;
  list(*fields, "services", "names of the project's services", [&](const Entry& item) {
    if (auto name = values_.name(item)) {
      if (std::find(p.services.begin(), p.services.end(), *name) != p.services.end())
        values_.error(item.where, item.path, "`" + *name + "` is listed twice", "list each service once");
      p.services.push_back(std::move(*name));
      p.service_locations.push_back(item.where);
    } else {
      usable = false;
    }
  });
  if (const Entry* f = fields->find("services"); f && f->value->is_sequence() && f->value->items.empty())
    values_.error(f->where, f->path, "a `previews:` block forks at least one service, and lists none",
                  "list the declared services each preview copies, like `services: [orders]`");
  if (const Entry* f = fields->find("strategy")) {
    auto strategy = values_.fork_strategy(*f, false);
    if (strategy == "PITR")
      values_.error(f->where, f->path, "a preview forks with LAST_SNAPSHOT or NOW, not PITR",
                    "PITR needs a target time, which a pull request's copy has none of");
    if (strategy && *strategy != "PITR") p.strategy = *strategy;
    else usable = false;
  }
  if (const Entry* f = fields->find("ttl")) {
    constexpr std::string_view expected = "a duration with its unit, like 72h, 90m or 1h30m";
    auto text = values_.text(*f, expected);
    const bool bare = text && !text->empty() && text->find_first_not_of("0123456789") == std::string::npos;
    auto ttl = text && !bare ? parse_duration(*text) : std::nullopt;
    if (text && (!ttl || *ttl > kMaxDuration)) {
      values_.error(f->where, f->path,
                    "expected " + std::string(expected) + " (at most 10 years), found `" + *text + "`",
                    bare ? "write its unit, like " + *text + "h" : "units are ms, s, m and h");
      usable = false;
    } else if (ttl) {
      p.ttl = *text;
      p.ttl_ms = ttl->count();
    } else {
      usable = false;
    }
  }
  if (const Entry* f = fields->find("max")) {
    auto max = values_.whole_number(*f, 1, "a whole number of previews, 1 or more");
    if (max) p.max = *max;
    else usable = false;
  }
  if (const Entry* f = fields->find("cpu_millis")) p.cpu_millis = values_.cpu_millis(*f);
  if (const Entry* f = fields->find("memory_gbs")) p.memory_gbs = values_.memory_gbs(*f);
  if (const Entry* f = fields->find("migrations")) {
    auto dir = values_.text(*f, "a directory of SQL files, relative to this manifest file");
    if (dir && dir->empty())
      values_.error(f->where, f->path, "expected a directory of SQL files, found an empty value",
                    "write the directory, like `migrations: db/migrations`");
    else if (dir)  // relative to the file that says it, wherever dbform runs from
      p.migrations = (std::filesystem::path(f->where.file).parent_path() / *dir).lexically_normal().string();
    p.migrations_location = f->where;
    if (!dir || dir->empty()) usable = false;
  }
  if (!usable || !fields->find("services") || !fields->find("ttl") || !fields->find("max")) return std::nullopt;
  return p;
}

}  // namespace

std::vector<DesiredProject> read_manifest_document(const YamlNode& root, const std::string& file,
                                                   const EnvLookup& env, Diagnostics& diags,
                                                   std::vector<InterpolatedValue>* interpolated) {
  DocumentReader reader(file, env, diags);
  auto projects = reader.read(root);
  if (interpolated) *interpolated = reader.interpolated();
  return projects;
}

}  // namespace dbform
