// Mapping between the API's JSON and dbform's typed views.
//
// Tolerance policy, the same for every field: the API marks every response field optional and
// may add fields, so a missing, null or wrong-typed optional field reads as absent. Only the
// identifiers dbform records and later addresses resources by (`service_id`, a VPC's `id`) must be
// strings when present: a wrong type there is an error, never a silently empty id.
#include "api/models.h"

#include <limits>

#include "util/error.h"
#include "util/json_limits.h"
#include "util/text.h"

namespace dbform {
namespace {

using nlohmann::json;

const json* field(const json& object, const char* name) {
  auto it = object.find(name);
  return it == object.end() ? nullptr : &*it;
}

const json* object_field(const json& object, const char* name) {
  const json* value = field(object, name);
  return value && value->is_object() ? value : nullptr;
}

// Text the API sent, fit to show (scrub): no control characters, no secret.
std::string string_field(const json& object, const char* name) {
  const json* value = field(object, name);
  return value && value->is_string() ? scrub(value->get<std::string>()) : std::string();
}

std::string nested_string(const json& object, const char* outer, const char* inner) {
  const json* nested = object_field(object, outer);
  return nested ? string_field(*nested, inner) : std::string();
}

std::string required_type_string(const json& object, const char* name, const char* what) {
  const json* value = field(object, name);
  if (!value || value->is_null()) return "";
  if (!value->is_string()) {
    throw Error(std::string(what) + ": field `" + name + "` must be a string, but the API sent " +
                value->type_name());
  }
  return value->get<std::string>();
}

void require_object(const json& j, const char* what) {
  if (!j.is_object()) {
    throw Error(std::string(what) + ": expected a JSON object, but the API sent " + j.type_name());
  }
}

std::optional<long long> integer_field(const json& object, const char* name) {
  const json* value = field(object, name);
  if (!value) return std::nullopt;
  if (value->is_number_unsigned()) {
    auto n = value->get<unsigned long long>();
    if (n > static_cast<unsigned long long>(std::numeric_limits<long long>::max())) return std::nullopt;
    return static_cast<long long>(n);
  }
  if (value->is_number_integer()) return value->get<long long>();
  return std::nullopt;
}

Endpoint parse_endpoint(const json* object) {
  Endpoint endpoint;
  if (!object) return endpoint;
  endpoint.host = string_field(*object, "host");
  auto port = integer_field(*object, "port");
  if (port && *port >= 0 && *port <= 65535) endpoint.port = static_cast<int>(*port);
  return endpoint;
}

// connection_pooler.endpoint (of a service or a read replica set); empty without a pooler.
Endpoint pooler_endpoint_of(const json& j) {
  const json* pooler = object_field(j, "connection_pooler");
  return parse_endpoint(pooler ? object_field(*pooler, "endpoint") : nullptr);
}

// The documented `vpc_endpoint` wins over the deprecated `vpcEndpoint` when both are sent.
json vpc_endpoint_of(const json& j) {
  for (const char* name : {"vpc_endpoint", "vpcEndpoint"}) {
    const json* value = field(j, name);
    if (value && !value->is_null()) return *value;
  }
  return json();
}

}  // namespace

const std::unordered_set<std::string>& api_field_names() {
  static const std::unordered_set<std::string> names = {
      // Service (and its nested objects)
      "service_id", "project_id", "name", "region_code", "service_type", "status", "created", "initial_password",
      "endpoint", "host", "port", "connection_pooler", "vpc_endpoint", "vpcEndpoint", "vpc_id", "ha_replicas",
      "replica_count", "sync_replica_count", "metadata", "environment", "resources", "id", "spec", "cpu_millis",
      "memory_gbs", "volume_type", "paused", "forked_from",
      // VPC, ReadReplicaSet, Peering
      "cidr", "nodes", "read_replica_sets", "peer_account_id", "peer_region_code", "peer_vpc_id", "provisioned_id",
      "error_message",
      // AuthInfo
      "type", "api_key", "apiKey", "public_key", "project", "plan_type", "issuing_user", "email",
      // Error and SuccessMessage
      "code", "message", "error", "details"};
  return names;
}

AuthInfo parse_auth_info(const json& j) {
  require_object(j, "auth info");
  AuthInfo info;
  info.type = string_field(j, "type");
  // `api_key` is current; `apiKey` is the deprecated spelling some deployments still send.
  const json* key = object_field(j, "api_key");
  if (!key) key = object_field(j, "apiKey");
  if (!key) return info;
  info.key_name = string_field(*key, "name");
  info.public_key = string_field(*key, "public_key");
  info.created = string_field(*key, "created");
  info.project_id = nested_string(*key, "project", "id");
  info.project_name = nested_string(*key, "project", "name");
  info.plan_type = nested_string(*key, "project", "plan_type");
  info.user_name = nested_string(*key, "issuing_user", "name");
  info.user_email = nested_string(*key, "issuing_user", "email");
  return info;
}

Service parse_service(json j) {
  require_object(j, "service");
  Service s;
  s.service_id = required_type_string(j, "service_id", "service");
  s.project_id = string_field(j, "project_id");
  s.name = string_field(j, "name");
  s.region_code = string_field(j, "region_code");
  s.service_type = string_field(j, "service_type");
  s.status = string_field(j, "status");
  s.created = string_field(j, "created");
  // The one field taken as sent: it is the secret, and remembered as one.
  if (const json* password = field(j, "initial_password"); password && password->is_string())
    s.initial_password = password->get<std::string>();
  remember_secret(s.initial_password);
  s.endpoint = parse_endpoint(object_field(j, "endpoint"));
  s.pooler_endpoint = pooler_endpoint_of(j);

  if (const json* ha = object_field(j, "ha_replicas")) {
    s.replica_count = integer_field(*ha, "replica_count");
    s.sync_replica_count = integer_field(*ha, "sync_replica_count");
  }
  s.environment = nested_string(j, "metadata", "environment");
  s.raw = std::move(j);
  s.raw.erase("initial_password");  // the password lives in one field only, never in `raw`
  // Nor echoed anywhere else in it (`metadata.details`, `connection_pooler.details`): every text of
  // an answer kept whole is scrubbed once, here, whatever later reads or shows it.
  scrub_strings(s.raw);
  s.vpc_endpoint = vpc_endpoint_of(s.raw);
  return s;
}

Vpc parse_vpc(json j) {
  require_object(j, "VPC");
  Vpc v;
  v.id = required_type_string(j, "id", "VPC");
  v.name = string_field(j, "name");
  v.cidr = string_field(j, "cidr");
  v.region_code = string_field(j, "region_code");
  v.raw = std::move(j);
  scrub_strings(v.raw);
  return v;
}

ReplicaSet parse_replica_set(json j) {
  require_object(j, "replica set");
  ReplicaSet r;
  r.id = required_type_string(j, "id", "replica set");
  r.name = string_field(j, "name");
  r.status = string_field(j, "status");
  r.nodes = integer_field(j, "nodes");
  r.cpu_millis = integer_field(j, "cpu_millis");
  r.memory_gbs = integer_field(j, "memory_gbs");
  r.environment = nested_string(j, "metadata", "environment");
  r.endpoint = parse_endpoint(object_field(j, "endpoint"));
  r.pooler_endpoint = pooler_endpoint_of(j);
  r.raw = std::move(j);
  scrub_strings(r.raw);
  return r;
}

Peering parse_peering(json j) {
  require_object(j, "peering");
  Peering p;
  p.id = required_type_string(j, "id", "peering");
  p.peer_account_id = string_field(j, "peer_account_id");
  p.peer_region_code = string_field(j, "peer_region_code");
  p.peer_vpc_id = string_field(j, "peer_vpc_id");
  p.provisioned_id = string_field(j, "provisioned_id");
  p.status = string_field(j, "status");
  p.error_message = string_field(j, "error_message");
  p.raw = std::move(j);
  scrub_strings(p.raw);
  return p;
}

ApiObject parse_api_object(json j, const char* what, const char* id_field) {
  require_object(j, what);
  ApiObject o;
  o.id = required_type_string(j, id_field, what);
  o.raw = std::move(j);
  scrub_strings(o.raw);
  return o;
}

std::string text_field(const json& object, const char* name) { return string_field(object, name); }

json to_json(const ReplicaSetCreateRequest& r) {
  return {{"name", r.name}, {"nodes", r.nodes}, {"cpu_millis", r.cpu_millis}, {"memory_gbs", r.memory_gbs}};
}

json to_json(const PeeringCreateRequest& r) {
  return {{"peer_account_id", r.peer_account_id}, {"peer_region_code", r.peer_region_code}, {"peer_vpc_id", r.peer_vpc_id}};
}

json to_json(const ServiceCreateRequest& r) {
  json body = json::object();
  body["name"] = r.name;
  if (!r.addons.empty()) body["addons"] = r.addons;
  // The API wants cpu_millis and memory_gbs as strings ("1000", "4", "shared").
  if (r.cpu_millis) body["cpu_millis"] = *r.cpu_millis;
  if (r.memory_gbs) body["memory_gbs"] = *r.memory_gbs;
  if (r.environment_tag) body["environment_tag"] = *r.environment_tag;
  if (r.region_code) body["region_code"] = *r.region_code;
  if (r.replica_count) body["replica_count"] = *r.replica_count;
  return body;
}

json to_json(const VpcCreateRequest& r) {
  return json{{"name", r.name}, {"cidr", r.cidr}, {"region_code", r.region_code}};
}

}  // namespace dbform
