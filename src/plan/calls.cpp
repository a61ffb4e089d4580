#include "plan/calls.h"

#include "plan/differ.h"
#include "util/json_limits.h"

namespace dbform {

using nlohmann::json;

namespace {

// What the last answer seen (a Service object) showed of a field dbform has not set or observed,
// in the manifest's terms; null when it showed nothing of it. Read by the plan without a refresh,
// so that declaring what the service already has is no change.
json last_seen(const json& service, const std::string& field) {
  if (!service.is_object() || !service.contains("service_id")) return json();
  auto object = [&](const char* key) {
    return service.contains(key) && service[key].is_object() ? service[key] : json::object();
  };
  if (field == "cpu_millis" || field == "memory_gbs") {
    if (!service.contains("resources") || !service["resources"].is_array() || service["resources"].empty() ||
        !service["resources"][0].is_object())
      return json();
    const json spec = service["resources"][0].value("spec", json());
    if (!spec.is_object() || !spec.contains(field) || !spec[field].is_number_integer()) return json();
    return std::to_string(spec[field].get<long long>());
  }
  if (field == "region_code" && service.value("region_code", json()).is_string()) return service["region_code"];
  if (field == "environment_tag" && object("metadata").value("environment", json()).is_string())
    return service["metadata"]["environment"];
  for (const char* count : {"replica_count", "sync_replica_count"})
    if (field == count && object("ha_replicas").value(count, json()).is_number_integer())
      return service["ha_replicas"][count];
  if (field == "paused" && service.value("status", json()).is_string())
    return is_paused_status(service.value("status", ""));
  if (field == "connection_pooler") return service.contains("connection_pooler") && service["connection_pooler"].is_object();
  return json();
}

bool is_whole_number_text(const json& v) {
  if (!v.is_string()) return false;
  const std::string s = v.get<std::string>();
  return !s.empty() && s.find_first_not_of("0123456789") == std::string::npos;
}

// recorded_vpc_id() as the body wants it: null while unknown, which the engine fills when the call
// is due.
json vpc_id_of(const State& state, const std::string& project_id, const std::string& name) {
  const std::string id = recorded_vpc_id(state, project_id, name);
  return id.empty() ? json() : json(id);
}

}  // namespace

json current_value(const ResourceRecord& rec, const std::string& field) {
  const bool observed = rec.observed.is_object() && (rec.observed.contains(field) || field == "vpc");
  const json& from = observed ? rec.observed : rec.settings;
  if (from.contains(field)) return from[field];
  return last_seen(rec.last_response, field);
}

std::vector<FieldChange> changes_of(const ResourceRecord& rec, const json& declared) {
  std::vector<std::string> fields;
  for (auto it = declared.begin(); it != declared.end(); ++it) fields.push_back(it.key());
  // A reference undeclared means none (no `vpc`: in no VPC), unlike other settings left out.
  if (const auto refers = kind_form(rec.kind).refers; refers && !declared.contains(refers->field))
    fields.push_back(refers->field);
  std::vector<FieldChange> changes;
  for (const auto& field : fields) {
    if (field == "fork") continue;  // create-time only (see plan_declared)
    FieldChange c{field, current_value(rec, field), declared.contains(field) ? declared[field] : json(), false};
    if (c.before == c.after) continue;
    const json recorded = rec.settings.contains(field) ? rec.settings[field] : json();
    c.drift = rec.observed.is_object() && c.before != recorded && (!recorded.is_null() || field == "vpc");
    changes.push_back(std::move(c));
  }
  return changes;
}

CallPlan calls_between(const json& current, const json& declared, const json& observed, const State& state,
                       const std::string& project_id) {
  CallPlan out;
  static const json kNone;
  auto value = [](const json& j, const char* f) -> const json& {
    auto it = j.find(f);
    return it == j.end() ? kNone : *it;
  };
  auto differs = [&](const char* f) { return declared.contains(f) && value(current, f) != declared[f]; };
  if (differs("cpu_millis") || differs("memory_gbs")) {
    json body = json::object(), sets = json::object();
    for (const char* f : {"cpu_millis", "memory_gbs"}) {
      // An undeclared one is sent as the service has it now (resize takes both).
      json v = declared.contains(f) ? declared[f] : value(current, f);
      sets[f] = v;
      if (v.is_number_integer()) v = std::to_string(v.get<long long>());  // a read replica set's: sent as text
      if (!is_whole_number_text(v)) {
        out.problem = v.is_null()
                          ? std::string("a resize sends both cpu_millis and memory_gbs, and the current ") + f +
                                " is not known: declare it, or plan and apply without --no-refresh to read it"
                          : std::string("the API resizes to whole numbers only (") + f + " " + dump_json(v) +
                                "): declare a whole number";
        return out;
      }
      body[f] = v;
    }
    out.calls.push_back({"resize", body, "", sets});
  }
  if (differs("environment_tag"))
    out.calls.push_back({"setEnvironment", {{"environment", declared["environment_tag"]}}, "",
                         {{"environment_tag", declared["environment_tag"]}}});
  if (differs("replica_count") || differs("sync_replica_count")) {
    // One setHA with both counts: an undeclared replica_count is sent as the service has it now.
    json body = json::object(), sets = json::object();
    for (const char* f : {"replica_count", "sync_replica_count"}) {
      if (declared.contains(f)) sets[f] = declared[f];
      if (const json& v = declared.contains(f) ? declared[f] : value(current, f); !v.is_null()) body[f] = v;
    }
    if (body.contains("sync_replica_count") && body.contains("replica_count") &&
        body["sync_replica_count"].get<long long>() > body["replica_count"].get<long long>()) {
      out.problem = "sync_replica_count " + dump_json(body["sync_replica_count"]) + " is more than the service's " +
                    "replica_count " + dump_json(body["replica_count"]) + ": declare replica_count too";
      return out;
    }
    out.calls.push_back({"setHA", body, "", sets});
  }
  if (differs("connection_pooler")) {
    const bool on = declared["connection_pooler"].get<bool>();
    out.calls.push_back({on ? "enablePooler" : "disablePooler", json(), "", {{"connection_pooler", on}}});
  }
  const json from = value(current, "vpc"), to = value(declared, "vpc");
  if (from != to) {
    if (from.is_string()) {
      // A VPC dbform does not know is observed as "id:NNN".
      const std::string name = from.get<std::string>();
      json id = name.rfind("id:", 0) == 0 ? json(name.substr(3))
                : observed.is_object() && observed.contains("vpc_id") ? observed["vpc_id"]
                                                                      : vpc_id_of(state, project_id, name);
      out.calls.push_back({"detachFromVPC", {{"vpc_id", id}}, name.rfind("id:", 0) == 0 ? "" : name, {{"vpc", nullptr}}});
    }
    if (to.is_string())
      out.calls.push_back({"attachToVPC", {{"vpc_id", vpc_id_of(state, project_id, to.get<std::string>())}},
                           to.get<std::string>(), {{"vpc", to}}});
  }
  // A paused service is changed while it runs: started first, stopped last (docs/using.md), so
  // one declared paused, or whose pause is not managed, is paused again afterwards.
  const bool paused = value(current, "paused") == true;
  const json want = value(declared, "paused");
  const bool start = paused && (want == false || !out.calls.empty());
  const bool stop = want == true ? !paused || start : start && want.is_null();
  if (start) out.calls.insert(out.calls.begin(), {"start", json(), "", {{"paused", false}}});
  if (stop) out.calls.push_back({"stop", json(), "", {{"paused", true}}});
  return out;
}

}  // namespace dbform
