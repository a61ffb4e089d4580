#pragma once
// Typed views of the API's objects. Every response field is optional; unknown fields are ignored.
#include <optional>
#include <string>
#include <unordered_set>
#include <vector>

#include <nlohmann/json.hpp>

namespace dbform {

struct AuthInfo {
  std::string type;          // "apiKey"
  std::string key_name;      // api_key.name
  std::string public_key;    // api_key.public_key (not a secret)
  std::string project_id;    // api_key.project.id
  std::string project_name;  // api_key.project.name
  std::string plan_type;
  std::string user_name;
  std::string user_email;
  std::string created;
};

struct Endpoint {
  std::string host;
  std::optional<int> port;
  bool empty() const { return host.empty() && !port; }
  std::string str() const { return port ? host + ":" + std::to_string(*port) : host; }
};

struct Service {
  std::string service_id;
  std::string project_id;
  std::string name;
  std::string region_code;
  std::string service_type;  // TIMESCALEDB/TIMESERIESDB, POSTGRES/SQLDB, VECTOR: kept as sent
  std::string status;        // as sent; "" when absent
  std::string created;
  std::string initial_password;  // "" when absent
  Endpoint endpoint;
  Endpoint pooler_endpoint;  // connection_pooler.endpoint
  nlohmann::json vpc_endpoint;  // raw, from vpcEndpoint or vpc_endpoint; null when absent
  std::optional<long long> replica_count;  // ha_replicas.replica_count
  std::optional<long long> sync_replica_count;  // ha_replicas.sync_replica_count
  std::string environment;                 // metadata.environment
  nlohmann::json raw;  // the whole response object, initial_password removed
};

struct Vpc {
  std::string id;
  std::string name;
  std::string cidr;
  std::string region_code;
  nlohmann::json raw;
};

// A read replica set of a service (ReadReplicaSet): its sizes are integers.
struct ReplicaSet {
  std::string id;
  std::string name;
  std::string status;  // creating, active, resizing, deleting, error; as sent
  std::optional<long long> nodes, cpu_millis, memory_gbs;
  std::string environment;   // metadata.environment
  Endpoint endpoint;
  Endpoint pooler_endpoint;  // connection_pooler.endpoint
  nlohmann::json raw;
};

// A VPC peering (Peering): no name; known by its peer.
struct Peering {
  std::string id;
  std::string peer_account_id, peer_region_code, peer_vpc_id;
  std::string provisioned_id;
  std::string status;  // as sent ("pending", "active", ...)
  std::string error_message;
  nlohmann::json raw;
};

// What a create-service call sends. Strings for cpu/memory, as the API wants.
struct ServiceCreateRequest {
  std::string name;
  std::vector<std::string> addons;
  std::optional<std::string> cpu_millis;
  std::optional<std::string> memory_gbs;
  std::optional<std::string> environment_tag;
  std::optional<std::string> region_code;
  std::optional<long long> replica_count;
};

struct VpcCreateRequest {
  std::string name;
  std::string cidr;
  std::string region_code;
};

// ReadReplicaSetCreate: integers, unlike a service's create and a replica set's resize.
struct ReplicaSetCreateRequest {
  std::string name;
  long long nodes = 1;
  long long cpu_millis = 0;
  long long memory_gbs = 0;
};

struct PeeringCreateRequest {
  std::string peer_account_id;
  std::string peer_region_code;
  std::string peer_vpc_id;
};

// An object of a kind the client reads by its route (ApiClient's *_at calls), as the API sent it:
// its id and the object itself, every text in it scrubbed.
struct ApiObject {
  std::string id;
  nlohmann::json raw;
};

// Every field name the mappings below read, at any depth: an answer is parsed keeping only these
// (unknown fields, however large or deep, are skipped unbuilt).
const std::unordered_set<std::string>& api_field_names();
// How deeply an answer may nest; the documented objects nest four levels.
constexpr size_t kMaxAnswerDepth = 32;

// JSON mapping (throws ApiError-free dbform::Error on a body that is not the expected shape).
AuthInfo parse_auth_info(const nlohmann::json& j);
Service parse_service(nlohmann::json j);  // `raw` takes `j` over
Vpc parse_vpc(nlohmann::json j);
ReplicaSet parse_replica_set(nlohmann::json j);
Peering parse_peering(nlohmann::json j);
// An object whose `id_field` is a string when present; `what` names it in messages ("VPC").
ApiObject parse_api_object(nlohmann::json j, const char* what, const char* id_field);
// A text field of an API object as the mappings read one: "" when absent or not text, scrubbed.
std::string text_field(const nlohmann::json& object, const char* name);
nlohmann::json to_json(const ServiceCreateRequest& r);  // unset fields omitted, never null
nlohmann::json to_json(const VpcCreateRequest& r);
nlohmann::json to_json(const ReplicaSetCreateRequest& r);
nlohmann::json to_json(const PeeringCreateRequest& r);

}  // namespace dbform
