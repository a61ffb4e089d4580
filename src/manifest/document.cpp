#include "manifest/document.h"

#include <algorithm>
#include <filesystem>
#include <optional>

#include "manifest/mapping_reader.h"
#include "manifest/objects_reader.h"
#include "manifest/value_reader.h"
#include "util/clock.h"
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
const MappingSpec kVpc{"a VPC",
                       {"name", "cidr", "region_code", "deletion_protection", "renamed_from", "import_id", "policy_waivers",
                        "peerings"},
                       {"name", "cidr", "region_code"}};
const MappingSpec kPeering{"a peering",
                           {"peer_account_id", "peer_region_code", "peer_vpc_id", "deletion_protection", "import_id",
                            "policy_waivers"},
                           {"peer_account_id", "peer_region_code", "peer_vpc_id"}};
const MappingSpec kReplicaSet{"a read replica set",
                              {"name", "nodes", "cpu_millis", "memory_gbs", "connection_pooler", "environment_tag",
                               "deletion_protection", "import_id", "policy_waivers"},
                              {"name", "nodes", "cpu_millis", "memory_gbs"}};
const MappingSpec kWaiver{"a policy waiver", {"rule", "reason", "expires"}, {"rule", "reason", "expires"}};
const MappingSpec kFork{"a fork", {"from", "strategy", "target_time"}, {"from", "strategy"}};
const MappingSpec kService{"a service",
                           {"name", "addons", "cpu_millis", "memory_gbs", "environment_tag", "region_code",
                            "replica_count", "sync_replica_count", "vpc", "connection_pooler", "deletion_protection",
                            "paused", "renamed_from", "import_id", "policy_waivers", "fork", "read_replicas"},
                           {"name"}};

// How to add a missing required key, for the error's hint.
std::string how_to_add(const std::string& key) {
  if (key == "version") return "add `version: 1` at the top";
  if (key == "projects") return "add `projects:` with a list of projects (it may be empty: `projects: []`)";
  if (key == "id") return "add `id: PROJECT_ID`, the project's id as the API knows it";
  if (key == "cidr") return "add an address range, like `cidr: 10.0.0.0/16`";
  if (key == "region_code") return "add a region, like `region_code: us-east-1`";
  return "add `" + key + ": ...`";
}

class DocumentReader {
 public:
  DocumentReader(const std::string& file, const EnvLookup& env, Diagnostics& diags) : values_(file, env, diags) {}

  std::vector<DesiredProject> read(const YamlNode& root);
  const std::vector<InterpolatedValue>& interpolated() const { return values_.interpolated(); }

 private:
  std::optional<Fields> mapping(const Entry& e, const MappingSpec& spec);
  // Calls `read_item(entry)` for every item of the list held by field `key`, if present.
  template <typename ReadItem>
  void list(const Fields& fields, const char* key, const char* expected, ReadItem read_item);

  std::optional<DesiredProject> project(const Entry& e);
  std::optional<DesiredVpc> vpc(const Entry& e);
  std::optional<DesiredService> service(const Entry& e);
  std::optional<DesiredFork> fork(const Entry& e);
  std::optional<DesiredReplicaSet> replica_set(const Entry& e);
  std::optional<DesiredPeering> peering(const Entry& e);
  std::optional<DesiredPreviews> previews(const Entry& e);
  std::vector<PolicyWaiver> waivers(const Fields& fields);

  ValueReader values_;
};

std::optional<Fields> DocumentReader::mapping(const Entry& e, const MappingSpec& spec) {
  return read_mapping(values_, e, spec, how_to_add);
}

template <typename ReadItem>
void DocumentReader::list(const Fields& fields, const char* key, const char* expected, ReadItem read_item) {
  read_list(values_, fields, key, expected, read_item);
}

// A declaration's `policy_waivers`: each exempts it from one rule of the policies (src/policy),
// which decide whether the rule exists and may be waived; here only the form is checked.
std::vector<PolicyWaiver> DocumentReader::waivers(const Fields& fields) {
  std::vector<PolicyWaiver> out;
  list(fields, "policy_waivers", "waivers (rule, reason, expires)", [&](const Entry& e) {
    auto w = mapping(e, kWaiver);
    if (!w) return;
    PolicyWaiver waiver;
    waiver.location = e.where;
    waiver.path = e.path;
    bool usable = true;
    if (const Entry* f = w->find("rule")) {
      auto rule = values_.text(*f, "a rule's id (lowercase letters, digits and '-')");
      if (rule && !is_policy_rule_id(*rule))
        values_.error(f->where, f->path, "expected a rule's id (lowercase letters, digits and '-'), found `" + *rule + "`",
                      "write the `id` of a rule of the policy files");
      if (rule && is_policy_rule_id(*rule)) waiver.rule = *rule;
      else usable = false;
    }
    if (const Entry* f = w->find("reason")) {
      auto reason = values_.text(*f, "text saying why the rule does not hold here");
      if (reason && reason->find_first_not_of(" \t") == std::string::npos) {
        values_.error(f->where, f->path, "a waiver's reason is empty", "say why the rule does not hold here, and until when");
        reason.reset();
      }
      if (reason) waiver.reason = *reason;
      else usable = false;
    }
    if (const Entry* f = w->find("expires")) {
      constexpr std::string_view expected = "a date like 2027-01-31 or a UTC time like 2027-01-31T12:00:00Z (years 1970-9999)";
      auto text = values_.text(*f, expected);
      auto at = text ? parse_expiry(*text) : std::nullopt;
      if (text && !at)
        values_.error(f->where, f->path, "expected " + std::string(expected) + ", found `" + *text + "`",
                      "a date is valid through its last second, UTC");
      if (at) {
        waiver.expires = *text;
        waiver.expires_at = *at;
      } else {
        usable = false;
      }
    }
    if (usable && w->find("rule") && w->find("reason") && w->find("expires")) out.push_back(std::move(waiver));
  });
  return out;
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
    if (auto v = vpc(item)) p.vpcs.push_back(std::move(*v));
  });
  list(*fields, "services", "services", [&](const Entry& item) {
    if (auto s = service(item)) p.services.push_back(std::move(*s));
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

std::optional<DesiredVpc> DocumentReader::vpc(const Entry& e) {
  auto fields = mapping(e, kVpc);
  if (!fields) return std::nullopt;
  DesiredVpc v;
  v.location = e.where;
  v.path = e.path;
  std::optional<std::string> name;
  if (const Entry* f = fields->find("name")) name = values_.name(*f);
  if (const Entry* f = fields->find("cidr")) v.cidr = values_.cidr(*f).value_or("");
  if (const Entry* f = fields->find("region_code")) v.region_code = values_.region_code(*f).value_or("");
  if (const Entry* f = fields->find("deletion_protection")) v.deletion_protection = values_.boolean(*f).value_or(false);
  if (const Entry* f = fields->find("renamed_from")) v.renamed_from = values_.name(*f);
  if (const Entry* f = fields->find("import_id")) v.import_id = values_.peer_id(*f);
  v.policy_waivers = waivers(*fields);
  list(*fields, "peerings", "peerings", [&](const Entry& item) {
    if (auto p = peering(item)) v.peerings.push_back(std::move(*p));
  });
  if (!name) return std::nullopt;
  v.name = std::move(*name);
  return v;
}

std::optional<DesiredPeering> DocumentReader::peering(const Entry& e) {
  auto fields = mapping(e, kPeering);
  if (!fields) return std::nullopt;
  DesiredPeering p;
  p.location = e.where;
  std::optional<std::string> account, region, vpc;
  if (const Entry* f = fields->find("peer_account_id")) account = values_.peer_id(*f);
  if (const Entry* f = fields->find("peer_region_code")) region = values_.region_code(*f);
  if (const Entry* f = fields->find("peer_vpc_id")) vpc = values_.peer_id(*f);
  if (const Entry* f = fields->find("deletion_protection")) p.deletion_protection = values_.boolean(*f).value_or(false);
  if (const Entry* f = fields->find("import_id")) p.import_id = values_.peer_id(*f);
  p.policy_waivers = waivers(*fields);
  if (!account || !region || !vpc) return std::nullopt;
  p.peer_account_id = std::move(*account);
  p.peer_region_code = std::move(*region);
  p.peer_vpc_id = std::move(*vpc);
  return p;
}

std::optional<DesiredReplicaSet> DocumentReader::replica_set(const Entry& e) {
  auto fields = mapping(e, kReplicaSet);
  if (!fields) return std::nullopt;
  DesiredReplicaSet r;
  r.location = e.where;
  std::optional<std::string> name;
  std::optional<long long> nodes, cpu, memory;
  if (const Entry* f = fields->find("name")) name = values_.name(*f);
  if (const Entry* f = fields->find("nodes")) nodes = values_.whole_number(*f, 1, "a whole number of nodes, 1 or more");
  if (const Entry* f = fields->find("cpu_millis"))
    cpu = values_.whole_number(*f, 1, "a whole number of millicores, 1 or more (a read replica set has no \"shared\")");
  if (const Entry* f = fields->find("memory_gbs"))
    memory = values_.whole_number(*f, 1, "a whole number of GB, 1 or more (a read replica set has no \"shared\")");
  if (const Entry* f = fields->find("connection_pooler")) r.connection_pooler = values_.boolean(*f);
  if (const Entry* f = fields->find("environment_tag")) r.environment_tag = values_.environment_tag(*f);
  if (const Entry* f = fields->find("deletion_protection")) r.deletion_protection = values_.boolean(*f).value_or(false);
  if (const Entry* f = fields->find("import_id")) r.import_id = values_.peer_id(*f);
  r.policy_waivers = waivers(*fields);
  if (!name || !nodes || !cpu || !memory) return std::nullopt;
  r.name = std::move(*name);
  r.nodes = *nodes;
  r.cpu_millis = *cpu;
  r.memory_gbs = *memory;
  return r;
}

std::optional<DesiredFork> DocumentReader::fork(const Entry& e) {
  auto fields = mapping(e, kFork);
  if (!fields) return std::nullopt;
  DesiredFork f;
  f.location = e.where;
  f.path = e.path;
  std::optional<std::string> from, strategy;
  if (const Entry* v = fields->find("from")) from = values_.name(*v);
  if (const Entry* v = fields->find("strategy")) strategy = values_.fork_strategy(*v);
  const Entry* time = fields->find("target_time");
  if (time) f.target_time = values_.utc_time(*time).value_or("");
  if (!from) return std::nullopt;
  if (strategy && *strategy == "PITR" && !time)
    values_.error(e.where, e.path + ".target_time", "a fork with strategy PITR needs `target_time`",
                  "add the moment to fork from, like `target_time: 2026-11-01T00:00:00Z`");
  if (strategy && *strategy != "PITR" && time)
    values_.error(time->where, time->path, "`target_time` is only for strategy PITR, not " + *strategy,
                  "remove it, or use `strategy: PITR`");
  f.from = std::move(*from);
  // A `strategy` missing or wrong is an error said already; the fork is kept without one so that
  // the checks across the files (its `from`) are made in the same run, not after the fix.
  f.strategy = strategy.value_or("");
  return f;
}

std::optional<DesiredService> DocumentReader::service(const Entry& e) {
  auto fields = mapping(e, kService);
  if (!fields) return std::nullopt;
  DesiredService s;
  s.location = e.where;
  s.path = e.path;
  std::optional<std::string> name;
  if (const Entry* f = fields->find("name")) name = values_.name(*f);
  if (const Entry* f = fields->find("addons")) s.addons = values_.addons(*f).value_or(std::vector<std::string>{});
  if (const Entry* f = fields->find("cpu_millis")) s.cpu_millis = values_.cpu_millis(*f);
  if (const Entry* f = fields->find("memory_gbs")) s.memory_gbs = values_.memory_gbs(*f);
  if (const Entry* f = fields->find("environment_tag")) s.environment_tag = values_.environment_tag(*f);
  if (const Entry* f = fields->find("region_code")) s.region_code = values_.region_code(*f);
  if (const Entry* f = fields->find("replica_count")) s.replica_count = values_.replica_count(*f);
  if (const Entry* f = fields->find("sync_replica_count")) {
    s.sync_replica_count = values_.replica_count(*f);
    if (s.sync_replica_count && s.replica_count && *s.sync_replica_count > *s.replica_count)
      values_.error(f->where, f->path,
                    "sync_replica_count " + std::to_string(*s.sync_replica_count) + " is more than replica_count " +
                        std::to_string(*s.replica_count) + ": the synchronous replicas are some of the HA replicas",
                    "lower sync_replica_count, or raise replica_count");
  }
  if (const Entry* f = fields->find("paused")) s.paused = values_.boolean(*f);
  if (const Entry* f = fields->find("vpc")) {
    s.vpc = values_.name(*f);
    s.vpc_location = f->where;
    s.vpc_path = f->path;
  }
  if (const Entry* f = fields->find("connection_pooler")) s.connection_pooler = values_.boolean(*f);
  if (const Entry* f = fields->find("deletion_protection")) s.deletion_protection = values_.boolean(*f).value_or(false);
  if (const Entry* f = fields->find("renamed_from")) s.renamed_from = values_.name(*f);
  if (const Entry* f = fields->find("import_id")) s.import_id = values_.peer_id(*f);
  s.policy_waivers = waivers(*fields);
  if (const Entry* f = fields->find("fork")) s.fork = fork(*f);
  list(*fields, "read_replicas", "read replica sets", [&](const Entry& item) {
    if (auto r = replica_set(item)) s.read_replicas.push_back(std::move(*r));
  });
  // Its objects inside the database: read once the plan and apply make them (the keys are not in
  // kService until then, so a manifest declaring them is refused as today).
  ServiceObjects objects = read_service_objects(values_, *fields);
  s.roles = std::move(objects.roles);
  s.schemas = std::move(objects.schemas);
  s.extensions = std::move(objects.extensions);
  s.grants = std::move(objects.grants);
  if (!name) return std::nullopt;
  s.name = std::move(*name);
  return s;
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
