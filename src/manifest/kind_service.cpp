// Services: a project's databases. A create's answer carries the password, which its read replica
// sets share; `vpc` names the project's VPC it is attached to.
#include <algorithm>

#include "manifest/kind_reader.h"
#include "manifest/objects_reader.h"

namespace dbform {

namespace {

const MappingSpec kFork{"a fork", {"from", "strategy", "target_time"}, {"from", "strategy"}};

// A service's `fork`, checked as a whole (PITR and target_time go together), so read by hand.
std::optional<DesiredFork> read_fork(KindReader& r, const Entry& e) {
  auto fields = r.mapping(e, kFork);
  if (!fields) return std::nullopt;
  ValueReader& values = r.values();
  DesiredFork f;
  f.location = e.where;
  f.path = e.path;
  std::optional<std::string> from, strategy;
  if (const Entry* v = fields->find("from")) from = values.name(*v);
  if (const Entry* v = fields->find("strategy")) strategy = values.fork_strategy(*v);
  const Entry* time = fields->find("target_time");
  if (time) f.target_time = values.utc_time(*time).value_or("");
  if (!from) return std::nullopt;
  if (strategy && *strategy == "PITR" && !time)
    values.error(e.where, e.path + ".target_time", "a fork with strategy PITR needs `target_time`",
                 "add the moment to fork from, like `target_time: 2026-11-01T00:00:00Z`");
  if (strategy && *strategy != "PITR" && time)
    values.error(time->where, time->path, "`target_time` is only for strategy PITR, not " + *strategy,
                 "remove it, or use `strategy: PITR`");
  f.from = std::move(*from);
  // A `strategy` missing or wrong is an error said already; the fork is kept without one so that
  // the checks across the files (its `from`) are made in the same run, not after the fix.
  f.strategy = strategy.value_or("");
  return f;
}

constexpr std::string_view kForkSchema = R"json({
  "description": "Create this service as a fork of another service of the project (create-time only: a later change is ignored, and the plan says so).",
  "type": "object",
  "additionalProperties": false,
  "required": ["from", "strategy"],
  "properties": {
    "from": {"$ref": "#/$defs/name", "description": "The source service: one this project declares."},
    "strategy": {"enum": ["LAST_SNAPSHOT", "NOW", "PITR"],
                 "description": "LAST_SNAPSHOT, NOW, or PITR (point in time, with target_time)."},
    "target_time": {"type": "string", "pattern": "^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}Z$",
                    "description": "PITR only: the UTC moment to fork from, like 2026-11-01T00:00:00Z."}
  },
  "if": {"properties": {"strategy": {"const": "PITR"}}},
  "then": {"required": ["target_time"]},
  "else": {"not": {"required": ["target_time"]}}
})json";

constexpr std::string_view kAddonsSchema = R"json({
  "type": "array",
  "description": "Addons to enable: time-series (the time-series extension), ai (AI and vector extensions). Each at most once.",
  "uniqueItems": true,
  "items": {"if": {"$ref": "#/$defs/interpolated"}, "then": true, "else": {"enum": ["time-series", "ai"]}}
})json";

// At most replica_count, which its row reads first.
bool read_sync_replica_count(KindReader& r, const Entry& f, DesiredService& s) {
  s.sync_replica_count = r.values().replica_count(f);
  if (s.sync_replica_count && s.replica_count && *s.sync_replica_count > *s.replica_count)
    r.values().error(f.where, f.path,
                     "sync_replica_count " + std::to_string(*s.sync_replica_count) + " is more than replica_count " +
                         std::to_string(*s.replica_count) + ": the synchronous replicas are some of the HA replicas",
                     "lower sync_replica_count, or raise replica_count");
  return true;
}

// Where `vpc` was said, for the checks across the files (a VPC the project does not declare).
bool read_vpc_name(KindReader& r, const Entry& f, DesiredService& s) {
  s.vpc = r.values().name(f);
  s.vpc_location = f.where;
  s.vpc_path = f.path;
  return true;
}

// The service's own rows, then those of its database's objects.
std::vector<FieldRow<DesiredService>> rows_then(std::vector<FieldRow<DesiredService>> rows,
                                                std::vector<FieldRow<DesiredService>> more) {
  for (auto& row : more) rows.push_back(std::move(row));
  return rows;
}

}  // namespace

template <> const FieldTable<DesiredService>& field_table<DesiredService>() {
  using S = DesiredService;
  constexpr std::string_view whole = R"json({"type": "integer", "minimum": 0})json";
  constexpr std::string_view boolean = R"json({"type": "boolean"})json";
  static const FieldTable<S> table(
      "a service",
      "A database service. Its name must be unique among the project's services.",
      rows_then(
      {name_row<S>(),
       value_row("addons", Presence::Optional, &S::addons, &ValueReader::addons,
                 nlohmann::ordered_json::parse(kAddonsSchema)),
       value_row("cpu_millis", Presence::Optional, &S::cpu_millis, &ValueReader::cpu_millis,
                 interpolable("CPU in milli-cores: a positive whole number like 1000 (also as text, \"1000\"), or "
                              "\"shared\" for a shared-resource service.",
                              R"json({"anyOf": [{"type": "integer", "minimum": 1},
                                                {"type": "string", "pattern": "^([1-9][0-9]{0,17}|shared)$"}]})json",
                              R"json([1000, "shared"])json")),
       value_row("memory_gbs", Presence::Optional, &S::memory_gbs, &ValueReader::memory_gbs,
                 interpolable("Memory in gigabytes: a positive number like 4 or 0.5 (also as text, \"4\"), or "
                              "\"shared\" for a shared-resource service.",
                              R"json({"anyOf": [{"type": "number", "exclusiveMinimum": 0},
                                                {"type": "string",
                                                 "pattern": "^([1-9][0-9]*(\\.[0-9]+)?|0\\.[0-9]*[1-9][0-9]*|shared)$"}]})json",
                              R"json([4, 0.5, "shared"])json")),
       value_row("environment_tag", Presence::Optional, &S::environment_tag, &ValueReader::environment_tag,
                 environment_tag_schema()),
       value_row("region_code", Presence::Optional, &S::region_code, &ValueReader::region_code,
                 schema_ref("region_code", "Region of the service, like us-east-1. When omitted the service picks one.")),
       value_row("replica_count", Presence::Optional, &S::replica_count, &ValueReader::replica_count,
                 interpolable("Number of high-availability replicas (asynchronous by default): a whole number, 0 or "
                              "more.",
                              whole)),
       {"sync_replica_count", Presence::Optional, read_sync_replica_count,
        interpolable("Number of synchronous high-availability replicas: a whole number, 0 or more, at most "
                     "replica_count (dbform validate checks that; a schema cannot compare two fields). Changed with "
                     "replica_count in one setHA call.",
                     whole)},
       {"vpc", Presence::Optional, read_vpc_name,
        schema_ref("name", "The name of a VPC this project declares: the service is attached to it (after both "
                           "exist). Without `vpc` the service is in no VPC, and removing the line detaches it.")},
       value_row("connection_pooler", Presence::Optional, &S::connection_pooler, &ValueReader::boolean,
                 connection_pooler_schema()),
       deletion_protection_row<S>(),
       value_row("paused", Presence::Optional, &S::paused, &ValueReader::boolean,
                 interpolable("true: the service is stopped (PAUSED); false: it runs. Managed only when set; a "
                              "change to a service declared paused is made while it runs (start, the change, stop).",
                              boolean)),
       renamed_from_row<S>(), import_id_row<S>(), policy_waivers_row<S>(),
       {"fork", Presence::Optional,
        [](KindReader& r, const Entry& f, S& s) {
          s.fork = read_fork(r, f);
          return true;
        },
        nlohmann::ordered_json::parse(kForkSchema)},
       children_row(ResourceKind::ReplicaSet, "read replica sets", &S::read_replicas)},
      service_object_rows()),
      check_service_objects);
  return table;
}

nlohmann::json service_settings(const DesiredService& s) {
  nlohmann::json j = nlohmann::json::object();
  if (!s.addons.empty()) {
    // Addons are a set (the validator refuses repeats): sorted, so reordering them is no change.
    std::vector<std::string> addons = s.addons;
    std::sort(addons.begin(), addons.end());
    j["addons"] = addons;
  }
  if (s.cpu_millis) j["cpu_millis"] = *s.cpu_millis;
  if (s.memory_gbs) j["memory_gbs"] = *s.memory_gbs;
  if (s.environment_tag) j["environment_tag"] = *s.environment_tag;
  if (s.region_code) j["region_code"] = *s.region_code;
  if (s.replica_count) j["replica_count"] = *s.replica_count;
  if (s.sync_replica_count) j["sync_replica_count"] = *s.sync_replica_count;
  if (s.paused) j["paused"] = *s.paused;
  if (s.vpc) j["vpc"] = *s.vpc;
  if (s.connection_pooler) j["connection_pooler"] = *s.connection_pooler;
  if (s.fork) {
    j["fork"] = {{"from", s.fork->from}, {"strategy", s.fork->strategy}};
    if (!s.fork->target_time.empty()) j["fork"]["target_time"] = s.fork->target_time;
  }
  return j;
}

KindForm service_form() {
  using T = PolicyFieldType;
  return {
      .kind = ResourceKind::Service,
      .name = "service",
      .plural = "services",
      .noun = "service",
      .list = "services",
      .fields = {"addons", "cpu_millis", "memory_gbs", "environment_tag", "region_code", "replica_count",
                 "sync_replica_count", "vpc", "connection_pooler", "paused"},
      .ready_status = "READY",
      .settled_status = "PAUSED",
      .policy_fields = {{"project_id", T::Text},       {"name", T::Text},           {"addons", T::TextList},
                        {"cpu_millis", T::Size},       {"memory_gbs", T::Size},     {"environment_tag", T::Tag},
                        {"region_code", T::Text},      {"replica_count", T::Number}, {"sync_replica_count", T::Number},
                        {"paused", T::Bool},           {"vpc", T::Text},            {"connection_pooler", T::Bool},
                        {"deletion_protection", T::Bool}},
      .password = PasswordOwner::Own,
      .connectable = true,
      .has_status = true,
      .refers = KindReference{"vpc", ResourceKind::Vpc},
      .delete_note = ", with its data",
      .list_description = "Database services to create in this project.",
      .schema = declaration_schema<DesiredService>,
  };
}

}  // namespace dbform
