// Services as the API makes them: created (or forked), watched until READY, changed by calls
// (resize, setHA, stop, start, attachments), deleted with their data and never replaced.
#include "plan/kind_rows.h"

#include <algorithm>

#include "util/json_limits.h"

namespace dbform {

StatusVerdict classify_status(const std::string& status) {
  if (status == "READY") return StatusVerdict::Ready;
  if (status == "PAUSED") return StatusVerdict::Paused;
  if (is_failed_status(status)) return StatusVerdict::Failed;
  return StatusVerdict::KeepWaiting;
}

std::string fork_source(const PlannedAction& a) {
  const nlohmann::json fork = a.after.is_object() ? a.after.value("fork", nlohmann::json()) : nlohmann::json();
  return fork.is_object() && fork.value("from", nlohmann::json()).is_string()
             ? resource_address(a.project_id, ResourceKind::Service, fork["from"].get<std::string>())
             : "";
}

namespace {

ServiceCreateRequest service_request(const PlannedAction& a) {
  const auto& s = a.after;
  ServiceCreateRequest r;
  r.name = a.name;
  if (s.contains("addons")) r.addons = s["addons"].get<std::vector<std::string>>();
  if (s.contains("cpu_millis")) r.cpu_millis = s["cpu_millis"].get<std::string>();
  if (s.contains("memory_gbs")) r.memory_gbs = s["memory_gbs"].get<std::string>();
  if (s.contains("environment_tag")) r.environment_tag = s["environment_tag"].get<std::string>();
  if (s.contains("region_code")) r.region_code = s["region_code"].get<std::string>();
  if (s.contains("replica_count")) r.replica_count = s["replica_count"].get<long long>();
  return r;
}

// A ForkServiceCreate body: the sizes and tag as declared, the rest inherited from the source.
nlohmann::json fork_request(const PlannedAction& a) {
  const nlohmann::json& fork = a.after["fork"];
  nlohmann::json body = {{"name", a.name}, {"fork_strategy", fork["strategy"]}};
  if (fork.contains("target_time")) body["target_time"] = fork["target_time"];
  for (const char* field : {"cpu_millis", "memory_gbs", "environment_tag"})
    if (a.after.contains(field)) body[field] = a.after[field];
  return body;
}

// A service's create waits for the VPC it is declared in, a fork's for its source (READY), and an
// attachment for the VPC it attaches to.
std::vector<Dependency> service_needs(const PlannedAction& a) {
  std::vector<Dependency> needs;
  auto vpc = [&](const std::string& name, size_t call) {
    needs.push_back({resource_address(a.project_id, ResourceKind::Vpc, name), "VPC", false, false, call});
  };
  if (a.after.is_object() && a.after.value("vpc", nlohmann::json()).is_string()) vpc(a.after["vpc"].get<std::string>(), kBeforeCreate);
  if (std::string source = fork_source(a); !source.empty())
    needs.push_back({std::move(source), "fork source", true, true, kBeforeCreate});
  for (size_t c = 0; c < a.calls.size(); ++c)
    if (a.calls[c].call == "attachToVPC" && !a.calls[c].vpc.empty()) vpc(a.calls[c].vpc, c);
  return needs;
}

nlohmann::json observe_service(const Service& s, const nlohmann::json& recorded, const VpcNames& vpc_names) {
  nlohmann::json seen = nlohmann::json::object();
  const nlohmann::json& raw = s.raw;
  nlohmann::json spec;
  if (raw.contains("resources") && raw["resources"].is_array() && !raw["resources"].empty() &&
      raw["resources"][0].is_object())
    spec = raw["resources"][0].value("spec", nlohmann::json::object());
  for (const char* field : {"cpu_millis", "memory_gbs"}) {
    // "shared" is answered as the plan's numbers: it cannot be told apart, so it stays as recorded.
    if (recorded.value(field, nlohmann::json()) == "shared") seen[field] = "shared";
    else if (spec.is_object() && spec.contains(field) && spec[field].is_number()) {
      const nlohmann::json& n = spec[field];
      seen[field] = n.is_number_float() && n.get<double>() != static_cast<double>(static_cast<long long>(n.get<double>()))
                        ? dump_json(n)
                        : std::to_string(n.get<long long>());
    }
  }
  if (!s.environment.empty()) seen["environment_tag"] = s.environment;
  if (!s.region_code.empty()) seen["region_code"] = s.region_code;
  if (s.replica_count) seen["replica_count"] = *s.replica_count;
  if (s.sync_replica_count) seen["sync_replica_count"] = *s.sync_replica_count;
  if (!s.status.empty()) seen["paused"] = is_paused_status(s.status);
  if (!s.service_type.empty()) {
    // The time-series addon is what makes a TIMESCALEDB (TIMESERIESDB) service; ai cannot be seen.
    std::vector<std::string> addons;
    if (recorded.contains("addons") && recorded["addons"].is_array())
      for (const auto& addon : recorded["addons"]) if (addon == "ai") addons.push_back("ai");
    if (s.service_type == "TIMESCALEDB" || s.service_type == "TIMESERIESDB") addons.push_back("time-series");
    std::sort(addons.begin(), addons.end());
    if (!addons.empty()) seen["addons"] = addons;
  }
  seen["connection_pooler"] = raw.contains("connection_pooler") && raw["connection_pooler"].is_object();
  if (s.vpc_endpoint.is_object() && s.vpc_endpoint.value("vpc_id", nlohmann::json()).is_string()) {
    const std::string id = s.vpc_endpoint["vpc_id"].get<std::string>();
    auto name = vpc_names.find(id);
    seen["vpc"] = name != vpc_names.end() ? name->second : "id:" + id;
    seen["vpc_id"] = id;
  }
  return seen;
}

bool service_took_effect(const std::string& call, const nlohmann::json& body, const nlohmann::json& shown) {
  const Service s = parse_service(shown);
  const nlohmann::json seen = observe_service(s, nlohmann::json::object(), {});
  auto sent = [&](const char* field) { return body.is_object() ? body.value(field, nlohmann::json()) : nlohmann::json(); };
  auto shows = [&](const char* field, const nlohmann::json& value) {
    return !value.is_null() && seen.value(field, nlohmann::json()) == value;
  };
  if (call == "resize") return shows("cpu_millis", sent("cpu_millis")) && shows("memory_gbs", sent("memory_gbs"));
  if (call == "setEnvironment") return shows("environment_tag", sent("environment"));
  if (call == "setHA")
    return (sent("replica_count").is_null() || shows("replica_count", sent("replica_count"))) &&
           (sent("sync_replica_count").is_null() || shows("sync_replica_count", sent("sync_replica_count")));
  // Watched until PAUSED, or READY again.
  if (call == "stop") return s.status == "PAUSED";
  if (call == "start") return s.status == "READY";
  if (call == "enablePooler") return shows("connection_pooler", true);
  if (call == "disablePooler") return shows("connection_pooler", false);
  // An attachment whose VPC id is not known yet has not been made, whatever the service shows.
  if (call == "attachToVPC") return shows("vpc_id", sent("vpc_id"));
  if (call == "detachFromVPC") return sent("vpc_id").is_string() && !shows("vpc_id", sent("vpc_id"));
  return false;
}

// A service's region, addons and "shared" sizes cannot change in place.
bool service_needs_replacement(const FieldChange& c) {
  if (c.field == "region_code" || c.field == "addons") return true;
  if (c.field == "cpu_millis" || c.field == "memory_gbs") return (c.before == "shared") != (c.after == "shared");
  return false;
}

nlohmann::json service_created_with(const nlohmann::json& declared) {
  nlohmann::json j = created_without_calls(declared);
  // A fork inherits its type and region, and starts with no HA replicas: those are not in its
  // create, and its replicas come by setHA after it.
  if (declared.contains("fork")) {
    j.erase("addons");
    j.erase("region_code");
    if (declared.value("replica_count", 0LL) != 0) j.erase("replica_count");
  }
  // What every new service has needs no call either: it runs, with no synchronous replicas.
  if (declared.contains("paused") && declared["paused"] == false) j["paused"] = false;
  if (declared.contains("sync_replica_count") && declared["sync_replica_count"] == 0) j["sync_replica_count"] = 0;
  return j;
}

}  // namespace

const ResourceType& service_type() {
  static const ResourceType row = {
      .kind = ResourceKind::Service,
      .has_password = true,
      .watched = true,
      .deleted_after = {ResourceKind::ReplicaSet},
      .unready_call = "stop",
      .busy_delete_hint = "",
      .deleting_status = "DELETING",
      .deleted_status = "DELETED",
      .verdict = classify_status,
      .needs_replacement = service_needs_replacement,
      .replaceable = false,
      .call_inputs = {"cpu_millis", "memory_gbs", "vpc", "replica_count", "paused"},
      .created_with = service_created_with,
      .needs = service_needs,
      .observe = [](const Shown& shown, const nlohmann::json& recorded, const VpcNames& vpcs) {
        return observe_service(parse_service(shown.raw), recorded, vpcs);
      },
      .took_effect = service_took_effect,
      .create = [](ApiClient& api, const std::string& key, const Scope& scope, const PlannedAction& a,
                   const std::string& source_id) {
        return shown_of(source_id.empty() ? api.create_service(key, scope.project_id, service_request(a))
                                          : api.fork_service(key, scope.project_id, source_id, fork_request(a)));
      },
      .list = [](ApiClient& api, const std::string& key, const Scope& scope) {
        return shown_all(api.list_services(key, scope.project_id));
      },
      .get = [](ApiClient& api, const std::string& key, const Scope& scope, const std::string& id) {
        return shown_if(api.get_service(key, scope.project_id, id));
      },
      .update = [](ApiClient& api, const std::string& key, const Scope& scope, const std::string& id,
                   const std::string& call, const nlohmann::json& body) {
        return shown_if(api.update_service(key, scope.project_id, id, call, body));
      },
      .remove = [](ApiClient& api, const std::string& key, const Scope& scope, const std::string& id) {
        return api.delete_service(key, scope.project_id, id);
      },
  };
  return row;
}

}  // namespace dbform
