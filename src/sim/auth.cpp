#include "sim/auth.h"

#include <openssl/evp.h>
#include <openssl/sha.h>
#include <strings.h>

#include <cstdio>
#include <vector>

namespace dbform::sim {

namespace {

bool starts_with_word(const std::string& header, const char* scheme) {
  size_t n = std::char_traits<char>::length(scheme);
  return header.size() > n && strncasecmp(header.c_str(), scheme, n) == 0 && header[n] == ' ';
}

std::optional<std::string> decode_base64(const std::string& text) {
  if (text.empty() || text.size() % 4 != 0) return std::nullopt;
  std::vector<unsigned char> out(text.size() / 4 * 3 + 1);
  int length = EVP_DecodeBlock(out.data(), reinterpret_cast<const unsigned char*>(text.data()),
                               static_cast<int>(text.size()));
  if (length < 0) return std::nullopt;
  // EVP_DecodeBlock counts the bytes the '=' padding stands for; they are not part of the key.
  if (text.ends_with("==")) length -= 2;
  else if (text.ends_with("=")) length -= 1;
  return std::string(reinterpret_cast<const char*>(out.data()), static_cast<size_t>(length));
}

}  // namespace

std::optional<std::string> key_from_authorization(const std::string& header) {
  std::string key;
  if (starts_with_word(header, "Bearer")) {
    key = header.substr(7);
  } else if (starts_with_word(header, "Basic")) {
    auto decoded = decode_base64(header.substr(6));
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
  unsigned char digest[SHA256_DIGEST_LENGTH];
  SHA256(reinterpret_cast<const unsigned char*>(key.data()), key.size(), digest);
  std::string id = "simkey_";
  char hex[3];
  for (int i = 0; i < 6; ++i) {
    std::snprintf(hex, sizeof hex, "%02x", digest[i]);
    id += hex;
  }
  return id;
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
