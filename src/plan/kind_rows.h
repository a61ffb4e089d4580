#pragma once
// What the rows of resource_types() share: each kind's row is a function in its own file
// (type_vpc.cpp, type_service.cpp, ...), listed once in resource_types() (kinds.cpp), beside its
// manifest form (manifest/kind_NAME.cpp).
#include <optional>
#include <vector>

#include <nlohmann/json.hpp>

#include "plan/kinds.h"

namespace dbform {

const ResourceType& vpc_type();
const ResourceType& service_type();
const ResourceType& replica_set_type();
const ResourceType& peering_type();
// The row of a role, schema, extension or grant (KindForm::in_database): no API calls.
const ResourceType& database_object_type(ResourceKind kind);

// Fields set by calls after the create, never in the create's body.
inline constexpr const char* kSetAfterCreate[] = {"vpc", "connection_pooler", "sync_replica_count", "paused"};

// What every kind's create leaves to calls; new resources have no pooler, so declaring none needs
// no call.
inline nlohmann::json created_without_calls(const nlohmann::json& declared) {
  nlohmann::json j = declared;
  for (const char* field : kSetAfterCreate) j.erase(field);
  if (declared.contains("connection_pooler") && declared["connection_pooler"] == false) j["connection_pooler"] = false;
  return j;
}

// Every field of a VPC or a peering needs a new one.
inline bool always_replaced(const FieldChange&) { return true; }

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

}  // namespace dbform
