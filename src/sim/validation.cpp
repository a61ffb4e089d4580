#include "sim/validation.h"
#include "util/json_limits.h"

#include <arpa/inet.h>

#include <cctype>
#include <charconv>
#include <set>

namespace dbform::sim {

namespace {

using nlohmann::json;

std::string json_type(const json& value) {
  if (value.is_number()) return "a number";
  if (value.is_null()) return "null";
  if (value.is_string()) return "a string";
  if (value.is_boolean()) return "a boolean";
  if (value.is_array()) return "an array";
  return "an object";
}

size_t utf8_length(const std::string& text) {
  size_t count = 0;
  for (unsigned char c : text) count += (c & 0xC0) != 0x80;
  return count;
}

std::optional<std::string> unknown_field(const json& body, const std::set<std::string>& known) {
  for (const auto& [key, value] : body.items()) {
    if (!known.count(key)) return "unknown field '" + key + "'";
  }
  return std::nullopt;
}

std::optional<std::string> check_required_string(const json& body, const std::string& field) {
  if (!body.contains(field)) return field + " is required";
  const json& value = body[field];
  if (!value.is_string()) return field + " must be a string, got " + json_type(value);
  if (value.get<std::string>().empty()) return field + " must not be empty";
  return std::nullopt;
}

// cpu_millis and memory_gbs are strings in a create: the check a client most easily gets wrong.
std::optional<std::string> check_resource_text(const json& body, const std::string& field, bool integer) {
  if (!body.contains(field)) return std::nullopt;
  const json& value = body[field];
  std::string example = integer ? "\"1000\"" : "\"4\"";
  if (!value.is_string()) {
    return field + " must be a string such as " + example + " or \"shared\", got " + json_type(value);
  }
  std::string text = value.get<std::string>();
  if (text == "shared") return std::nullopt;
  bool ok = integer ? is_positive_integer_text(text) : is_positive_number_text(text);
  if (!ok) {
    return field + " must be a positive " + (integer ? "integer" : "number") + " as a string or \"shared\", got \"" +
           text + "\"";
  }
  return std::nullopt;
}

std::optional<std::string> check_addons(const json& body) {
  if (!body.contains("addons")) return std::nullopt;
  const json& addons = body["addons"];
  if (!addons.is_array()) return "addons must be an array of strings, got " + json_type(addons);
  for (const auto& item : addons) {
    if (!item.is_string() || (item != "time-series" && item != "ai")) {
      return "addons items must be \"time-series\" or \"ai\", got " + dump_json(item);
    }
  }
  return std::nullopt;
}

std::optional<std::string> check_optional_fields(const json& body) {
  if (body.contains("environment_tag")) {
    const json& tag = body["environment_tag"];
    if (!tag.is_string() || (tag != "DEV" && tag != "PROD")) {
      return "environment_tag must be \"DEV\" or \"PROD\", got " + dump_json(tag);
    }
  }
  if (body.contains("region_code")) {
    const json& region = body["region_code"];
    if (!region.is_string() || region.get<std::string>().empty()) {
      return "region_code must be a non-empty string, got " + dump_json(region);
    }
  }
  if (body.contains("replica_count")) {
    const json& replicas = body["replica_count"];
    bool non_negative_integer =
        replicas.is_number_unsigned() || (replicas.is_number_integer() && replicas.get<long long>() >= 0);
    if (!non_negative_integer) return "replica_count must be an integer >= 0, got " + dump_json(replicas);
  }
  return std::nullopt;
}

bool is_cidr(const std::string& text) {
  size_t slash = text.find('/');
  if (slash == std::string::npos || slash + 1 == text.size()) return false;
  std::string address = text.substr(0, slash), prefix_text = text.substr(slash + 1);
  if (!is_positive_integer_text(prefix_text) && prefix_text != "0") return false;
  int prefix = 0;
  std::from_chars(prefix_text.data(), prefix_text.data() + prefix_text.size(), prefix);
  unsigned char buffer[16];
  if (inet_pton(AF_INET, address.c_str(), buffer) == 1) return prefix <= 32;
  if (inet_pton(AF_INET6, address.c_str(), buffer) == 1) return prefix <= 128;
  return false;
}

}  // namespace

bool is_positive_integer_text(const std::string& text) {
  if (text.empty() || text.size() > 9) return false;
  for (char c : text) {
    if (!std::isdigit(static_cast<unsigned char>(c))) return false;
  }
  return std::stol(text) > 0;
}

bool is_positive_number_text(const std::string& text) {
  if (text.empty() || text.size() > 12) return false;
  double value = 0;
  auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  return error == std::errc() && end == text.data() + text.size() && value > 0 &&
         std::isdigit(static_cast<unsigned char>(text[0])) && text.find_first_of("eE") == std::string::npos;
}

std::optional<std::string> check_service_create(const json& body) {
  if (!body.is_object()) return "request body must be a JSON object";
  if (auto error = unknown_field(body, {"name", "addons", "region_code", "replica_count", "cpu_millis",
                                        "memory_gbs", "environment_tag"})) {
    return error;
  }
  if (auto error = check_required_string(body, "name")) return error;
  if (utf8_length(body["name"].get<std::string>()) > 128) return "name must be at most 128 characters";
  if (auto error = check_addons(body)) return error;
  if (auto error = check_resource_text(body, "cpu_millis", true)) return error;
  if (auto error = check_resource_text(body, "memory_gbs", false)) return error;
  return check_optional_fields(body);
}

std::optional<std::string> check_fork(const json& body) {  // ForkServiceCreate
  if (!body.is_object()) return "request body must be a JSON object";
  if (auto error = unknown_field(body, {"name", "cpu_millis", "memory_gbs", "fork_strategy", "target_time",
                                        "environment_tag"}))
    return error;
  if (auto error = check_required_string(body, "fork_strategy")) return error;
  const std::string strategy = body["fork_strategy"];
  if (strategy != "LAST_SNAPSHOT" && strategy != "NOW" && strategy != "PITR")
    return "fork_strategy must be LAST_SNAPSHOT, NOW or PITR, got \"" + strategy + "\"";
  if (strategy == "PITR" && (!body.contains("target_time") || !body["target_time"].is_string()))
    return "target_time (date-time) is required when fork_strategy is PITR";
  if (body.contains("target_time") && !body["target_time"].is_string()) return "target_time must be a date-time string";
  if (body.contains("name") && (!body["name"].is_string() || body["name"].get<std::string>().empty() ||
                                utf8_length(body["name"].get<std::string>()) > 128))
    return "name must be a string of 1 to 128 characters";
  if (auto error = check_resource_text(body, "cpu_millis", true)) return error;
  if (auto error = check_resource_text(body, "memory_gbs", false)) return error;
  return check_optional_fields(body);
}

std::optional<std::string> check_vpc_create(const json& body) {
  if (!body.is_object()) return "request body must be a JSON object";
  if (auto error = unknown_field(body, {"name", "cidr", "region_code"})) return error;
  for (const char* field : {"name", "cidr", "region_code"}) {
    if (auto error = check_required_string(body, field)) return error;
  }
  std::string cidr = body["cidr"].get<std::string>();
  if (!is_cidr(cidr)) return "cidr must be an address range such as \"10.0.0.0/16\", got \"" + cidr + "\"";
  return std::nullopt;
}

std::optional<std::string> check_replica_set_create(const json& body) {  // ReadReplicaSetCreate
  if (!body.is_object()) return "request body must be a JSON object";
  if (auto error = unknown_field(body, {"name", "nodes", "cpu_millis", "memory_gbs"})) return error;
  if (auto error = check_required_string(body, "name")) return error;
  if (utf8_length(body["name"].get<std::string>()) > 128) return "name must be at most 128 characters";
  // Integers here, unlike a service's create and a replica set's resize: the check a client most
  // easily gets wrong.
  for (const char* field : {"nodes", "cpu_millis", "memory_gbs"}) {
    if (!body.contains(field)) return std::string(field) + " is required";
    const json& value = body[field];
    if (!value.is_number_integer()) return std::string(field) + " must be an integer, got " + json_type(value);
    if (value.get<long long>() < 1) return std::string(field) + " must be at least 1, got " + dump_json(value);
  }
  return std::nullopt;
}

std::optional<std::string> check_peering_create(const json& body) {  // PeeringCreate
  if (!body.is_object()) return "request body must be a JSON object";
  if (auto error = unknown_field(body, {"peer_account_id", "peer_region_code", "peer_vpc_id"})) return error;
  for (const char* field : {"peer_account_id", "peer_region_code", "peer_vpc_id"})
    if (auto error = check_required_string(body, field)) return error;
  return std::nullopt;
}

std::optional<std::string> check_resize(const json& body) {
  if (!body.is_object()) return "request body must be a JSON object";
  if (auto error = unknown_field(body, {"cpu_millis", "memory_gbs"})) return error;
  for (const char* field : {"cpu_millis", "memory_gbs"}) {
    if (auto error = check_required_string(body, field)) return error;
    // ResizeInput's pattern is ^[0-9]+$: whole numbers only, never "shared".
    if (!is_positive_integer_text(body[field].get<std::string>()))
      return std::string(field) + " must be a positive whole number as a string (pattern ^[0-9]+$), got " +
             dump_json(body[field]);
  }
  return std::nullopt;
}

std::optional<std::string> check_set_environment(const json& body) {
  if (!body.is_object()) return "request body must be a JSON object";
  if (auto error = unknown_field(body, {"environment"})) return error;
  if (!body.contains("environment")) return "environment is required";
  if (body["environment"] != "PROD" && body["environment"] != "DEV")
    return "environment must be \"PROD\" or \"DEV\", got " + dump_json(body["environment"]);
  return std::nullopt;
}

std::optional<std::string> check_rename(const json& body) {  // ServiceRename, VPCRename
  if (!body.is_object()) return "request body must be a JSON object";
  if (auto error = unknown_field(body, {"name"})) return error;
  if (!body.contains("name") || !body["name"].is_string() || body["name"].get<std::string>().empty())
    return "name is required: a non-empty string";
  return std::nullopt;
}

std::optional<std::string> check_set_ha(const json& body) {
  if (!body.is_object()) return "request body must be a JSON object";
  if (auto error = unknown_field(body, {"replica_count", "sync_replica_count"})) return error;
  if (!body.contains("replica_count") && !body.contains("sync_replica_count"))
    return "at least one of replica_count or sync_replica_count must be provided";
  for (const char* field : {"replica_count", "sync_replica_count"}) {
    if (!body.contains(field)) continue;
    const json& n = body[field];
    if (!n.is_number_integer() || n.get<long long>() < 0)
      return std::string(field) + " must be an integer >= 0, got " + dump_json(n);
  }
  return std::nullopt;
}

std::optional<std::string> check_vpc_attachment(const json& body) {
  if (!body.is_object()) return "request body must be a JSON object";
  if (auto error = unknown_field(body, {"vpc_id"})) return error;
  if (auto error = check_required_string(body, "vpc_id")) return error;
  const std::string id = body["vpc_id"].get<std::string>();
  for (char c : id)
    if (!std::isdigit(static_cast<unsigned char>(c))) return "vpc_id must match ^[0-9]+$, got \"" + id + "\"";
  return std::nullopt;
}

}  // namespace dbform::sim
