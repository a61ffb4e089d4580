#pragma once
// API keys as the simulator sees them. Internal to the simulator.
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "sim/simulator.h"

namespace dbform::sim {

// The key an Authorization header carries: "Bearer KEY", or "Basic base64(KEY)" where KEY is
// usually "public:secret". nullopt when the header is missing or malformed.
std::optional<std::string> key_from_authorization(const std::string& header);

// A name for the key that is safe to show: the public half of "public:secret", otherwise an id
// derived from a hash of the key (never a piece of the secret itself).
std::string public_key_of(const std::string& key);

// The AuthInfo answer for `key`, under both spellings, api_key and the deprecated apiKey.
nlohmann::json auth_info_json(const SimKey& key, const std::string& created_utc);

}  // namespace dbform::sim
