#include "plan/kinds.h"

#include <algorithm>
#include <stdexcept>

#include "util/json_limits.h"

namespace dbform {

StatusVerdict classify_status(const std::string& status) {
  if (status == "READY") return StatusVerdict::Ready;
  if (status == "PAUSED") return StatusVerdict::Paused;
  if (is_failed_status(status)) return StatusVerdict::Failed;
  return StatusVerdict::KeepWaiting;
}

const std::vector<CallType>& call_types() {
  static const std::vector<CallType> all = {
      {"rename", false},      {"start", true},          {"resize", true},
      {"setEnvironment", false}, {"setHA", true},       {"enablePooler", false},
      {"disablePooler", false},  {"attachToVPC", true}, {"detachFromVPC", true},
      {"stop", true},
  };
  return all;
}

bool is_async_call(const std::string& call) {
  for (const CallType& c : call_types())
    if (call == c.name) return c.async;
  return false;
}

Shown shown_of(Service s) {
  return {std::move(s.service_id), std::move(s.name),  std::move(s.status),          std::move(s.endpoint),
          std::move(s.pooler_endpoint), std::move(s.initial_password), std::move(s.raw)};
}

Shown shown_of(ReplicaSet r) {
  return {std::move(r.id), std::move(r.name), std::move(r.status), std::move(r.endpoint), std::move(r.pooler_endpoint),
          "", std::move(r.raw)};
}

Scope scope_of(const State& state, const std::string& project_id, ResourceKind kind, const std::string& parent) {
  Scope scope{project_id, ""};
  if (auto outer = parent_kind(kind))
    if (const ResourceRecord* rec = state.find(resource_address(project_id, *outer, parent))) scope.parent_id = rec->id;
  return scope;
}

std::string fork_source(const PlannedAction& a) {
  const nlohmann::json fork = a.after.is_object() ? a.after.value("fork", nlohmann::json()) : nlohmann::json();
  return fork.is_object() && fork.value("from", nlohmann::json()).is_string()
             ? resource_address(a.project_id, ResourceKind::Service, fork["from"].get<std::string>())
             : "";
}

namespace {

// Fields set by calls after the create, never in the create's body.
constexpr const char* kSetAfterCreate[] = {"vpc", "connection_pooler", "sync_replica_count", "paused"};

// What every kind's create leaves to calls; new resources have no pooler, so declaring none needs
// no call.
nlohmann::json created_without_calls(const nlohmann::json& declared) {
  nlohmann::json j = declared;
  for (const char* field : kSetAfterCreate) j.erase(field);
  if (declared.contains("connection_pooler") && declared["connection_pooler"] == false) j["connection_pooler"] = false;
  return j;
}

// Every field of a VPC or a peering needs a new one.
bool always_replaced(const FieldChange&) { return true; }

template <typename T>
std::vector<Shown> shown_all(std::vector<T> listed) {
  std::vector<Shown> out;
  out.reserve(listed.size());
  for (auto& item : listed) out.push_back(shown_of(std::move(item)));
  return out;
}

template <typename T>
std::optional<Shown> shown_if(std::optional<T> found) {
  return found ? std::optional<Shown>(shown_of(std::move(*found))) : std::nullopt;
}

// --- Services -------------------------------------------------------------------------------

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

const ResourceType kServiceType = {
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

// --- VPCs -----------------------------------------------------------------------------------

// A VPC is made when its create is answered, and changed when its call is: nothing to watch. It
// goes after the services of its project, which may be attached to it.
const ResourceType kVpcType = {
    .kind = ResourceKind::Vpc,
    .has_password = false,
    .watched = false,
    .deleted_after = {ResourceKind::Service, ResourceKind::Peering},
    .unready_call = "",
    .busy_delete_hint = " (is a service still attached to it?)",
    .deleting_status = "",
    .deleted_status = "",
    .verdict = [](const std::string&) { return StatusVerdict::Ready; },  // no status: one read shows it is there
    .needs_replacement = always_replaced,
    .replaceable = false,
    .call_inputs = {},
    .created_with = created_without_calls,
    .needs = [](const PlannedAction&) { return std::vector<Dependency>(); },
    .observe = [](const Shown& shown, const nlohmann::json&, const VpcNames&) {
      const Vpc v = parse_vpc(shown.raw);
      nlohmann::json seen = nlohmann::json::object();
      if (!v.cidr.empty()) seen["cidr"] = v.cidr;
      if (!v.region_code.empty()) seen["region_code"] = v.region_code;
      return seen;
    },
    .took_effect = [](const std::string&, const nlohmann::json&, const nlohmann::json&) { return false; },
    .route = kVpcRoute,
    .name_field = "name",
    .status_field = "",
    .create_body = [](const PlannedAction& a) {
      return to_json(VpcCreateRequest{a.name, a.after.value("cidr", ""), a.after.value("region_code", "")});
    },
    .create = routed_create<ResourceKind::Vpc>,
    .list = routed_list<ResourceKind::Vpc>,
    .get = routed_get<ResourceKind::Vpc>,
    .update = routed_update<ResourceKind::Vpc>,  // rename
    .remove = routed_remove<ResourceKind::Vpc>,
};

// --- Read replica sets (in a service) ---------------------------------------------------------

// Created once its service is READY, and each call made while it is; watched until `active`.
std::vector<Dependency> replica_set_needs(const PlannedAction& a) {
  const std::string service = resource_address(a.project_id, ResourceKind::Service, a.parent);
  std::vector<Dependency> needs = {{service, "service", true, false, kBeforeCreate}};
  for (size_t c = 0; c < a.calls.size(); ++c) needs.push_back({service, "service", true, false, c});
  return needs;
}

nlohmann::json observe_replica_set(const ReplicaSet& r) {
  nlohmann::json seen = nlohmann::json::object();
  if (r.nodes) seen["nodes"] = *r.nodes;
  if (r.cpu_millis) seen["cpu_millis"] = *r.cpu_millis;
  if (r.memory_gbs) seen["memory_gbs"] = *r.memory_gbs;
  if (!r.environment.empty()) seen["environment_tag"] = r.environment;
  seen["connection_pooler"] = r.raw.contains("connection_pooler") && r.raw["connection_pooler"].is_object();
  return seen;
}

bool replica_set_took_effect(const std::string& call, const nlohmann::json& body, const nlohmann::json& shown) {
  const nlohmann::json seen = observe_replica_set(parse_replica_set(shown));
  auto shows = [&](const char* field, const nlohmann::json& value) {
    return !value.is_null() && seen.value(field, nlohmann::json()) == value;
  };
  auto sent_number = [&](const char* field) {  // a resize sends digit strings; the set shows integers
    const nlohmann::json v = body.is_object() ? body.value(field, nlohmann::json()) : nlohmann::json();
    return v.is_string() ? nlohmann::json(std::stoll(v.get<std::string>())) : v;
  };
  if (call == "resize") return shows("cpu_millis", sent_number("cpu_millis")) && shows("memory_gbs", sent_number("memory_gbs"));
  if (call == "setEnvironment") return shows("environment_tag", body.value("environment", nlohmann::json()));
  if (call == "enablePooler") return shows("connection_pooler", true);
  if (call == "disablePooler") return shows("connection_pooler", false);
  return false;
}

const ResourceType kReplicaSetType = {
    .kind = ResourceKind::ReplicaSet,
    .has_password = false,  // it shares its service's password
    .watched = true,
    .listed_only = true,
    .deleted_after = {},
    .unready_call = "",
    .busy_delete_hint = "",
    .deleting_status = "deleting",
    .deleted_status = "",
    .verdict = [](const std::string& status) {
      if (status == "active") return StatusVerdict::Ready;
      if (status == "error" || status == "deleting") return StatusVerdict::Failed;
      return StatusVerdict::KeepWaiting;
    },
    .needs_replacement = [](const FieldChange& c) { return c.field == "nodes"; },
    .replaceable = true,
    .call_inputs = {"cpu_millis", "memory_gbs"},
    .created_with = [](const nlohmann::json& declared) {  // created with its name, nodes and sizes; as DEV
      nlohmann::json j = created_without_calls(declared);
      if (j.value("environment_tag", nlohmann::json()) != "DEV") j.erase("environment_tag");
      return j;
    },
    .needs = replica_set_needs,
    .observe = [](const Shown& shown, const nlohmann::json&, const VpcNames&) {
      return observe_replica_set(parse_replica_set(shown.raw));
    },
    .took_effect = replica_set_took_effect,
    .create = [](ApiClient& api, const std::string& key, const Scope& scope, const PlannedAction& a,
                 const std::string&) {
      const ReplicaSetCreateRequest request{a.name, a.after.value("nodes", 1LL), a.after.value("cpu_millis", 0LL),
                                            a.after.value("memory_gbs", 0LL)};
      return shown_of(api.create_replica_set(key, scope.project_id, scope.parent_id, request));
    },
    .list = [](ApiClient& api, const std::string& key, const Scope& scope) {
      return shown_all(api.list_replica_sets(key, scope.project_id, scope.parent_id));
    },
    // The API has no GET of one set: its service's list answers for it.
    .get = [](ApiClient& api, const std::string& key, const Scope& scope, const std::string& id) {
      for (auto& set : api.list_replica_sets(key, scope.project_id, scope.parent_id))
        if (set.id == id) return std::optional<Shown>(shown_of(std::move(set)));
      return std::optional<Shown>();
    },
    .update = [](ApiClient& api, const std::string& key, const Scope& scope, const std::string& id,
                 const std::string& call, const nlohmann::json& body) {
      api.update_replica_set(key, scope.project_id, scope.parent_id, id, call, body);
      return std::optional<Shown>();
    },
    .remove = [](ApiClient& api, const std::string& key, const Scope& scope, const std::string& id) {
      return api.delete_replica_set(key, scope.project_id, scope.parent_id, id);
    },
};

// --- VPC peerings (in a VPC) ----------------------------------------------------------------

// Made when its create is answered (its acceptance by the peer is not waited for), once its VPC is.
const ResourceType kPeeringType = {
    .kind = ResourceKind::Peering,
    .has_password = false,
    .watched = false,
    .deleted_after = {},
    .unready_call = "",
    .busy_delete_hint = "",
    .deleting_status = "deleting",  // listed so while its routes go: neither ours after a lost answer nor a namesake
    .deleted_status = "",
    .verdict = [](const std::string&) { return StatusVerdict::Ready; },  // recorded as it is, accepted or not
    .needs_replacement = always_replaced,
    .replaceable = true,
    .call_inputs = {},
    .created_with = created_without_calls,
    .needs = [](const PlannedAction& a) {
      return std::vector<Dependency>{
          {resource_address(a.project_id, ResourceKind::Vpc, a.parent), "VPC", false, false, kBeforeCreate}};
    },
    .observe = [](const Shown& shown, const nlohmann::json&, const VpcNames&) {
      const Peering p = parse_peering(shown.raw);
      nlohmann::json seen = nlohmann::json::object();
      if (!p.peer_account_id.empty()) seen["peer_account_id"] = p.peer_account_id;
      if (!p.peer_region_code.empty()) seen["peer_region_code"] = p.peer_region_code;
      if (!p.peer_vpc_id.empty()) seen["peer_vpc_id"] = p.peer_vpc_id;
      return seen;
    },
    .took_effect = [](const std::string&, const nlohmann::json&, const nlohmann::json&) { return false; },
    .route = kPeeringRoute,
    .name_field = "peer_vpc_id",  // a peering has no name: it is known by its peer VPC's id
    .status_field = "status",
    .create_body = [](const PlannedAction& a) {
      return to_json(PeeringCreateRequest{a.after.value("peer_account_id", ""), a.after.value("peer_region_code", ""),
                                          a.after.value("peer_vpc_id", "")});
    },
    .create = routed_create<ResourceKind::Peering>,
    .list = routed_list<ResourceKind::Peering>,
    .get = routed_get<ResourceKind::Peering>,
    .update = [](ApiClient&, const std::string&, const Scope&, const std::string&, const std::string& call,
                 const nlohmann::json&) -> std::optional<Shown> {
      throw Error("a VPC peering has no `" + call + "` call: a change of its peer replaces it");
    },
    .remove = routed_remove<ResourceKind::Peering>,
};

}  // namespace

Shown shown_at(const ResourceType& type, ApiObject object) {
  Shown s;
  s.id = std::move(object.id);
  s.name = text_field(object.raw, type.name_field);
  if (*type.status_field) s.status = text_field(object.raw, type.status_field);
  s.raw = std::move(object.raw);
  return s;
}

const ResourceType& type_of(ResourceKind kind) {
  for (const ResourceType* type : resource_types())
    if (type->kind == kind) return *type;
  throw std::logic_error(std::string("no row in resource_types() for kind ") + kind_name(kind));
}

const std::vector<const ResourceType*>& resource_types() {
  static const std::vector<const ResourceType*> all = {&kVpcType, &kServiceType, &kReplicaSetType, &kPeeringType};
  return all;
}

nlohmann::json created_with(ResourceKind kind, const nlohmann::json& declared) {
  return type_of(kind).created_with(declared);
}

VpcNames recorded_vpc_names(const State& state, const std::string& project_id) {
  VpcNames names;
  for (const auto& r : state.resources)
    if (r.kind == ResourceKind::Vpc && r.project_id == project_id && !r.id.empty()) names[r.id] = r.name;
  return names;
}

void record_answer(ResourceRecord& rec, Shown&& shown, const std::string& now) {
  // An id, once recorded, is the resource's: an answer naming another one cannot move it.
  if (rec.id.empty() && !shown.id.empty()) rec.id = shown.id;
  if (!shown.status.empty()) rec.status = shown.status;
  if (!shown.endpoint.empty()) {
    rec.endpoint_host = shown.endpoint.host;
    rec.endpoint_port = shown.endpoint.port;
  }
  // An answer without a pooler has none (any more).
  rec.pooler_host = shown.pooler_endpoint.host;
  rec.pooler_port = shown.pooler_endpoint.port;
  if (!shown.initial_password.empty()) rec.initial_password = shown.initial_password;  // never overwritten by empty
  rec.last_response = std::move(shown.raw);
  rec.updated_at = now;
}

void record_answer(ResourceRecord& rec, const Shown& shown, const std::string& now) {
  record_answer(rec, Shown(shown), now);
}

bool answer_recorded(const ResourceRecord& rec, const Shown& shown) {
  return (!rec.id.empty() || shown.id.empty()) && (shown.status.empty() || shown.status == rec.status) &&
         (shown.endpoint.empty() ||
          (rec.endpoint_host == shown.endpoint.host && rec.endpoint_port == shown.endpoint.port)) &&
         rec.pooler_host == shown.pooler_endpoint.host && rec.pooler_port == shown.pooler_endpoint.port &&
         rec.last_response == shown.raw;
}

bool call_took_effect(const ResourceType& type, const std::string& call, const nlohmann::json& body,
                      const nlohmann::json& shown) {
  if (!shown.is_object()) return false;
  if (call == "rename") return shown.value("name", nlohmann::json()) == body.value("name", nlohmann::json());
  return type.took_effect(call, body, shown);
}

}  // namespace dbform
