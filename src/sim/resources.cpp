#include "sim/resources.h"

#include <cmath>
#include <initializer_list>

namespace dbform::sim {

namespace {

using nlohmann::json;

// What a service gets when the create leaves cpu_millis or memory_gbs out, or asks for "shared":
// the vendor's smallest plan, 0.5 CPU and 2 GB. Responses always carry numbers, never "shared".
constexpr long long kDefaultCpuMillis = 500;
constexpr long long kDefaultMemoryGbs = 2;

json cpu_millis_of(const json& request) {
  if (!request.contains("cpu_millis") || request["cpu_millis"] == "shared") return kDefaultCpuMillis;
  return std::stoll(request["cpu_millis"].get<std::string>());
}

// "4" answers 4 (an integer, as the document's example); "0.5" answers 0.5.
json memory_gbs_of(const json& request) {
  if (!request.contains("memory_gbs") || request["memory_gbs"] == "shared") return kDefaultMemoryGbs;
  double gbs = std::stod(request["memory_gbs"].get<std::string>());
  if (gbs == std::floor(gbs)) return static_cast<long long>(gbs);
  return gbs;
}

bool has_addon(const json& request, const std::string& addon) {
  if (!request.contains("addons")) return false;
  for (const auto& item : request["addons"]) {
    if (item == addon) return true;
  }
  return false;
}

json endpoint(const std::string& host, long long port) { return json{{"host", host}, {"port", port}}; }

// `fields` with the request's values of `names` beside them, as the API answers them back.
json with_request_fields(json fields, const json& request, std::initializer_list<const char*> names) {
  for (const char* name : names) fields[name] = request[name];
  return fields;
}

}  // namespace

SimService make_service(const json& request, const std::string& project_id, const std::string& service_id,
                        RandomSource& random, Clock::TimePoint created_at, const std::string& created_utc,
                        ServiceFate fate) {
  SimService service;
  service.project_id = project_id;
  service.service_id = service_id;
  service.name = request["name"].get<std::string>();
  service.initial_password = random.chars_from(
      "abcdefghijkmnopqrstuvwxyzABCDEFGHJKLMNPQRSTUVWXYZ23456789", 20);
  service.created_at = created_at;
  service.fate = fate;

  std::string host = service_id + "." + project_id + ".tsdb.sim.local";
  long long port = random.between(30000, 39999);
  json spec = {{"cpu_millis", cpu_millis_of(request)}, {"memory_gbs", memory_gbs_of(request)}, {"volume_type", "gp3"}};
  service.fields = {
      {"service_id", service_id},
      {"project_id", project_id},
      {"name", service.name},
      {"region_code", request.value("region_code", std::string("us-east-1"))},
      {"service_type", has_addon(request, "time-series") ? "TIMESCALEDB" : "POSTGRES"},
      {"created", created_utc},
      {"resources", json::array({{{"id", random.lower_alnum(10)}, {"spec", spec}}})},
      {"metadata", {{"environment", request.value("environment_tag", std::string("DEV"))}}},
      {"endpoint", endpoint(host, port)},
      {"ha_replicas", {{"replica_count", request.value("replica_count", 0LL)}, {"sync_replica_count", 0}}},
  };
  return service;
}

SimVpc make_vpc(const json& request, const std::string& project_id, const std::string& vpc_id,
               Clock::TimePoint created_at) {
  SimVpc vpc;
  vpc.project_id = project_id;
  vpc.created_at = created_at;
  vpc.fields = with_request_fields({{"id", vpc_id}}, request, {"name", "cidr", "region_code"});
  return vpc;
}

SimReplicaSet make_replica_set(const json& request, const SimService& service, const std::string& set_id,
                               RandomSource& random, Clock::TimePoint created_at, ServiceFate fate) {
  SimReplicaSet set;
  set.project_id = service.project_id;
  set.service_id = service.service_id;
  set.created_at = created_at;
  set.fate = fate;
  set.fields = with_request_fields(
      {
          {"id", set_id},
          {"metadata", {{"environment", "DEV"}}},
          {"endpoint", endpoint(set_id + "." + service.service_id + ".tsdb.sim.local", random.between(30000, 39999))},
      },
      request, {"name", "nodes", "cpu_millis", "memory_gbs"});
  return set;
}

SimPeering make_peering(const json& request, const std::string& project_id, const std::string& vpc_id,
                        const std::string& peering_id, RandomSource& random, Clock::TimePoint created_at) {
  SimPeering peering;
  peering.project_id = project_id;
  peering.vpc_id = vpc_id;
  peering.created_at = created_at;
  peering.fields = with_request_fields(
      {{"id", peering_id}, {"provisioned_id", "pcx-" + random.lower_alnum(17)}, {"status", "pending"}}, request,
      {"peer_account_id", "peer_region_code", "peer_vpc_id"});
  return peering;
}

}  // namespace dbform::sim
