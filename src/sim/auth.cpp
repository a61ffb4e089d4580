#include "sim/auth.h"

#include <strings.h>

#include "util/crypto.h"

namespace dbform::sim {

namespace {

bool starts_with_word(const std::string& header, const char* scheme) {
  size_t n = std::char_traits<char>::length(scheme);
  return header.size() > n && strncasecmp(header.c_str(), scheme, n) == 0 && header[n] == ' ';
}

}  // namespace

std::optional<std::string> key_from_authorization(const std::string& header) {
  std::string key;
  if (starts_with_word(header, "Bearer")) {
    key = header.substr(7);
  } else if (starts_with_word(header, "Basic")) {
    auto decoded = base64_decode(header.substr(6));
    if (!decoded) return std::nullopt;
    key = *decoded;
  } else {
    return std::nullopt;
  }
  if (key.empty()) return std::nullopt;
  return key;
}

std::string public_key_of(const std::string& key) {
  size_t colon = key.find(':');
  if (colon != std::string::npos && colon > 0) return key.substr(0, colon);
  return "simkey_" + hex(sha256(key).substr(0, 6));
}

nlohmann::json auth_info_json(const SimKey& key, const std::string& created_utc) {
  nlohmann::json api_key = {
      {"public_key", public_key_of(key.key)},
      {"name", key.name},
      {"created", created_utc},
      {"project", {{"id", key.project_id}, {"name", "Simulated project " + key.project_id}, {"plan_type", "FREE"}}},
      {"issuing_user", {{"id", "sim-user-1"}, {"email", "sim@example.com"}, {"name", "Simulator User"}}},
  };
  return {{"type", "apiKey"}, {"api_key", api_key}, {"apiKey", api_key}};
}

}  // namespace dbform::sim
