// Read replica sets as the API makes them, in a service: listed only (no GET of one), watched
// until `active`, replaced by `--prune` when their node count changes.
#include "plan/kind_rows.h"

namespace dbform {

namespace {

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

}  // namespace

const ResourceType& replica_set_type() {
  static const ResourceType row = {
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
      .runs_in_parent = true,
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
  return row;
}

}  // namespace dbform
