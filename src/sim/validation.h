#pragma once
// Request-body checks as strict as the vendor's document (ServiceCreate, VPCCreate): a client that
// passes them sends what the real API accepts. Internal to the simulator.
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

namespace dbform::sim {

// nullopt when the body is a valid ServiceCreate, else the message of the 400 answer.
std::optional<std::string> check_service_create(const nlohmann::json& body);

// nullopt when the body is a valid VPCCreate, else the message of the 400 answer.
std::optional<std::string> check_vpc_create(const nlohmann::json& body);
// The same for ReadReplicaSetCreate (whose sizes are integers) and PeeringCreate.
std::optional<std::string> check_replica_set_create(const nlohmann::json& body);
std::optional<std::string> check_peering_create(const nlohmann::json& body);

// The bodies of the update calls, as strict as ResizeInput, SetEnvironmentInput, SetHAReplicaInput
// and ServiceVPCInput: nullopt when valid, else the message of the 400 answer.
std::optional<std::string> check_resize(const nlohmann::json& body);
std::optional<std::string> check_set_environment(const nlohmann::json& body);
std::optional<std::string> check_set_ha(const nlohmann::json& body);
std::optional<std::string> check_rename(const nlohmann::json& body);
std::optional<std::string> check_fork(const nlohmann::json& body);
std::optional<std::string> check_vpc_attachment(const nlohmann::json& body);

// "1000" yes; "0", "-1", "1.5", " 1" no.
bool is_positive_integer_text(const std::string& text);
// "4", "0.5" yes; "0", "-1", ".5", "1e3" no (plain decimal forms only).
bool is_positive_number_text(const std::string& text);

}  // namespace dbform::sim
