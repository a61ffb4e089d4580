#pragma once
// The few cryptographic primitives dbform uses, all through OpenSSL's EVP interface: random bytes,
// SHA-256, base64, scrypt and AES-256-GCM. Nothing here knows what it protects.
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace dbform {

// `n` bytes from the operating system's generator (RAND_bytes); throws Error when none are had.
std::string random_bytes(size_t n);
std::string sha256(std::string_view data);  // 32 raw bytes
std::string hex(std::string_view bytes);
std::string base64_encode(std::string_view bytes);
std::optional<std::string> base64_decode(std::string_view text);  // nullopt when not base64

struct ScryptCost {
  uint64_t n = 1u << 15;  // CPU/memory cost (a power of two)
  uint64_t r = 8;
  uint64_t p = 1;
};
// A 32-byte key from a passphrase (EVP_PBE_scrypt). Throws Error for costs OpenSSL refuses.
std::string scrypt_key(std::string_view passphrase, std::string_view salt, const ScryptCost& cost);

constexpr size_t kAesKeyBytes = 32;
constexpr size_t kGcmNonceBytes = 12;
// AES-256-GCM: the ciphertext followed by the 16-byte tag; `aad` is authenticated, not encrypted.
std::string aes_gcm_seal(std::string_view key, std::string_view nonce, std::string_view plaintext,
                         std::string_view aad);
// The plaintext, or nullopt when the tag does not match (a wrong key, or any byte of the
// ciphertext, tag, nonce or aad changed).
std::optional<std::string> aes_gcm_open(std::string_view key, std::string_view nonce, std::string_view sealed,
                                        std::string_view aad);

}  // namespace dbform
