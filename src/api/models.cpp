// Mapping between the API's JSON and dbform's typed views.
//
// Tolerance policy, the same for every field: the API marks every response field optional and
// may add fields, so a missing, null or wrong-typed optional field reads as absent. Only the
// identifiers dbform records and later addresses resources by (`service_id`, a VPC's `id`) must be
// strings when present: a wrong type there is an error, never a silently empty id.
#include "api/models.h"

#include <initializer_list>
#include <limits>
#include <utility>

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

// The text fields of `j` into the members they name, each as string_field reads it.
template <typename T>
void read_texts(const json& j, T& out, std::initializer_list<std::pair<std::string T::*, const char*>> fields) {
  for (const auto& [member, name] : fields) out.*member = string_field(j, name);
}

// An object the API answers with, known by its `id_field`: `read` takes the typed fields from it,
// then it is kept whole in `raw`, scrubbed.
template <typename T, typename Read>
T parse_known(json j, const char* what, const char* id_field, Read read) {
  require_object(j, what);
  T out;
  out.id = required_type_string(j, id_field, what);
  read(j, out);
  out.raw = std::move(j);
  scrub_strings(out.raw);
  return out;
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
  read_texts(j, s, {{&Service::project_id, "project_id"}, {&Service::name, "name"}, {&Service::region_code, "region_code"},
                    {&Service::service_type, "service_type"}, {&Service::status, "status"}, {&Service::created, "created"}});
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
  return parse_known<Vpc>(std::move(j), "VPC", "id", [](const json& o, Vpc& v) {
    read_texts(o, v, {{&Vpc::name, "name"}, {&Vpc::cidr, "cidr"}, {&Vpc::region_code, "region_code"}});
  });
}

ReplicaSet parse_replica_set(json j) {
  return parse_known<ReplicaSet>(std::move(j), "replica set", "id", [](const json& o, ReplicaSet& r) {
    read_texts(o, r, {{&ReplicaSet::name, "name"}, {&ReplicaSet::status, "status"}});
    r.nodes = integer_field(o, "nodes");
    r.cpu_millis = integer_field(o, "cpu_millis");
    r.memory_gbs = integer_field(o, "memory_gbs");
    r.environment = nested_string(o, "metadata", "environment");
    r.endpoint = parse_endpoint(object_field(o, "endpoint"));
    r.pooler_endpoint = pooler_endpoint_of(o);
  });
}

Peering parse_peering(json j) {
  return parse_known<Peering>(std::move(j), "peering", "id", [](const json& o, Peering& p) {
    read_texts(o, p, {{&Peering::peer_account_id, "peer_account_id"}, {&Peering::peer_region_code, "peer_region_code"},
                      {&Peering::peer_vpc_id, "peer_vpc_id"}, {&Peering::provisioned_id, "provisioned_id"},
                      {&Peering::status, "status"}, {&Peering::error_message, "error_message"}});
  });
}

ApiObject parse_api_object(json j, const char* what, const char* id_field) {
  return parse_known<ApiObject>(std::move(j), what, id_field, [](const json&, ApiObject&) {});
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
