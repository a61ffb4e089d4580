#include "util/crypto.h"

#include <openssl/evp.h>
#include <openssl/rand.h>

#include <memory>

#include "util/error.h"

namespace dbform {

namespace {

constexpr size_t kTagBytes = 16;
using CipherCtx = std::unique_ptr<EVP_CIPHER_CTX, void (*)(EVP_CIPHER_CTX*)>;

CipherCtx new_gcm(std::string_view key, std::string_view nonce, bool encrypt) {
  if (key.size() != kAesKeyBytes || nonce.size() != kGcmNonceBytes)
    throw Error("AES-256-GCM needs a 32-byte key and a 12-byte nonce");
  CipherCtx ctx(EVP_CIPHER_CTX_new(), EVP_CIPHER_CTX_free);
  const auto* k = reinterpret_cast<const unsigned char*>(key.data());
  const auto* iv = reinterpret_cast<const unsigned char*>(nonce.data());
  if (!ctx || EVP_CipherInit_ex(ctx.get(), EVP_aes_256_gcm(), nullptr, k, iv, encrypt ? 1 : 0) != 1)
    throw Error("OpenSSL could not set up AES-256-GCM");
  return ctx;
}

const unsigned char* bytes(std::string_view s) { return reinterpret_cast<const unsigned char*>(s.data()); }

// EVP's lengths are int: no input dbform seals comes near 2 GiB, but a hostile one is refused.
int checked_length(std::string_view s) {
  if (s.size() > (1u << 30)) throw Error("refusing to encrypt or decrypt more than 1 GiB at once");
  return static_cast<int>(s.size());
}

}  // namespace

std::string random_bytes(size_t n) {
  std::string out(n, '\0');
  if (n && RAND_bytes(reinterpret_cast<unsigned char*>(out.data()), static_cast<int>(n)) != 1)
    throw Error("the operating system's random generator gave no random bytes");
  return out;
}

std::string sha256(std::string_view data) {
  unsigned char md[EVP_MAX_MD_SIZE];
  unsigned int size = 0;
  if (EVP_Digest(data.data(), data.size(), md, &size, EVP_sha256(), nullptr) != 1) throw Error("SHA-256 failed");
  return std::string(reinterpret_cast<char*>(md), size);
}

std::string hex(std::string_view data) {
  static const char* digits = "0123456789abcdef";
  std::string out;
  out.reserve(data.size() * 2);
  for (unsigned char c : data) {
    out += digits[c >> 4];
    out += digits[c & 15];
  }
  return out;
}

std::string base64_encode(std::string_view data) {
  std::string out(4 * ((data.size() + 2) / 3) + 1, '\0');
  int n = EVP_EncodeBlock(reinterpret_cast<unsigned char*>(out.data()), bytes(data), checked_length(data));
  out.resize(static_cast<size_t>(n));
  return out;
}

std::optional<std::string> base64_decode(std::string_view text) {
  if (text.size() % 4 != 0) return std::nullopt;
  std::string out(3 * (text.size() / 4), '\0');
  int n = EVP_DecodeBlock(reinterpret_cast<unsigned char*>(out.data()), bytes(text), checked_length(text));
  if (n < 0) return std::nullopt;
  // EVP_DecodeBlock counts the bytes the '=' padding stands for; they are not data.
  size_t padding = 0;
  for (size_t i = text.size(); i > 0 && text[i - 1] == '=' && padding < 2; --i) ++padding;
  out.resize(static_cast<size_t>(n) - padding);
  return out;
}

std::string scrypt_key(std::string_view passphrase, std::string_view salt, const ScryptCost& cost) {
  std::string key(kAesKeyBytes, '\0');
  // Enough memory for the cost (128 * r * n bytes) and its bookkeeping; OpenSSL's default cap is 32 MiB.
  const uint64_t maxmem = 256ull * cost.r * cost.n + (1u << 20);
  if (EVP_PBE_scrypt(passphrase.data(), passphrase.size(), bytes(salt), salt.size(), cost.n, cost.r, cost.p, maxmem,
                     reinterpret_cast<unsigned char*>(key.data()), key.size()) != 1)
    throw Error("scrypt refused its parameters (N=" + std::to_string(cost.n) + ", r=" + std::to_string(cost.r) +
                ", p=" + std::to_string(cost.p) + ")");
  return key;
}

std::string aes_gcm_seal(std::string_view key, std::string_view nonce, std::string_view plaintext,
                         std::string_view aad) {
  CipherCtx ctx = new_gcm(key, nonce, true);
  int n = 0;
  std::string out(plaintext.size() + kTagBytes, '\0');
  auto* o = reinterpret_cast<unsigned char*>(out.data());
  if (EVP_EncryptUpdate(ctx.get(), nullptr, &n, bytes(aad), checked_length(aad)) != 1 ||
      EVP_EncryptUpdate(ctx.get(), o, &n, bytes(plaintext), checked_length(plaintext)) != 1 ||
      EVP_EncryptFinal_ex(ctx.get(), o + n, &n) != 1 ||
      EVP_CIPHER_CTX_ctrl(ctx.get(), EVP_CTRL_GCM_GET_TAG, kTagBytes, o + plaintext.size()) != 1)
    throw Error("AES-256-GCM encryption failed");
  return out;
}

std::optional<std::string> aes_gcm_open(std::string_view key, std::string_view nonce, std::string_view sealed,
                                        std::string_view aad) {
  if (sealed.size() < kTagBytes) return std::nullopt;
  CipherCtx ctx = new_gcm(key, nonce, false);
  const std::string_view body = sealed.substr(0, sealed.size() - kTagBytes);
  std::string tag(sealed.substr(body.size()));
  std::string out(body.size(), '\0');
  auto* o = reinterpret_cast<unsigned char*>(out.data());
  int n = 0;
  if (EVP_DecryptUpdate(ctx.get(), nullptr, &n, bytes(aad), checked_length(aad)) != 1 ||
      EVP_DecryptUpdate(ctx.get(), o, &n, bytes(body), checked_length(body)) != 1 ||
      EVP_CIPHER_CTX_ctrl(ctx.get(), EVP_CTRL_GCM_SET_TAG, kTagBytes, tag.data()) != 1)
    return std::nullopt;
  if (EVP_DecryptFinal_ex(ctx.get(), o + n, &n) != 1) return std::nullopt;
  return out;
}

}  // namespace dbform
