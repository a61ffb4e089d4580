#include "state/cipher.h"

#include <map>
#include <mutex>

#include "state/codec.h"
#include "util/crypto.h"
#include "util/text.h"

namespace dbform {

using nlohmann::json;

namespace {

constexpr const char* kScheme = "AES-256-GCM";
constexpr int kSealedVersion = 2;
constexpr const char* kSecretFormat = "dbform-secret";  // a version older dbforms refuse with "upgrade dbform"
constexpr size_t kSaltBytes = 16;
// The most a stored header may ask of scrypt (its memory is 128 * N * r bytes, here at most 256 MiB):
// a hostile file must not make reading cost gigabytes.
constexpr uint64_t kMaxScryptN = 1u << 20, kMaxScryptR = 32, kMaxScryptP = 4, kMaxScryptNr = 1u << 21;

std::string key_id(const std::string& key) { return hex(sha256("dbform state key id\n" + key)).substr(0, 16); }

std::string authenticated_header(const json& envelope) {
  // Canonical: nlohmann keeps object keys sorted, so the same header always gives the same bytes.
  // A field a hostile file left out is null here, so the tag no longer matches.
  return json{{"format", envelope.value("format", json())}, {"version", envelope.value("version", json())},
              {"encryption", envelope.value("encryption", json())}}
      .dump();
}

// Text from the file, which may be hostile, fit for a message.
std::string shown(const std::string& s) { return one_line_excerpt(s, 40); }

}  // namespace

struct StateKey::Impl {
  bool is_passphrase = false;
  std::string secret;
  std::string origin;
  std::mutex mu;
  std::map<std::string, std::string> derived;  // salt -> key
  std::string seal_salt;  // the salt of the first document opened with it, else a new one

  std::string derive(const std::string& salt, const ScryptCost& cost) {
    std::lock_guard<std::mutex> lock(mu);
    auto [it, added] = derived.try_emplace(salt);
    if (added) it->second = scrypt_key(secret, salt, cost);
    if (seal_salt.empty()) seal_salt = salt;
    return it->second;
  }
  std::string salt_for_sealing() {
    std::lock_guard<std::mutex> lock(mu);
    if (seal_salt.empty()) seal_salt = random_bytes(kSaltBytes);
    return seal_salt;
  }
};

StateKey StateKey::passphrase(std::string passphrase, std::string origin) {
  auto impl = std::make_shared<Impl>();
  impl->is_passphrase = true;
  impl->secret = std::move(passphrase);
  impl->origin = std::move(origin);
  return StateKey(impl);
}

StateKey StateKey::raw(std::string bytes, std::string origin) {
  if (bytes.size() != kAesKeyBytes)
    throw StateError(origin + " holds " + std::to_string(bytes.size()) +
                     " bytes; a state key is exactly 32 random bytes (e.g. `head -c 32 /dev/urandom > state.key`)");
  auto impl = std::make_shared<Impl>();
  impl->secret = std::move(bytes);
  impl->origin = std::move(origin);
  return StateKey(impl);
}

const std::string& StateKey::origin() const { return impl_->origin; }

const StateCipher& StateCipher::plaintext() {
  static const StateCipher none;
  return none;
}

std::string StateCipher::sealing_key_id() const {
  if (!seal_with_) return "";
  auto& k = *seal_with_->impl_;
  return key_id(k.is_passphrase ? k.derive(k.salt_for_sealing(), ScryptCost{}) : k.secret);
}

json StateCipher::seal_secret(const std::string& clear, const std::string& binding) const {
  if (!seal_with_) throw StateError("internal: a secret sealed without a key");
  auto& k = *seal_with_->impl_;
  json encryption = {{"scheme", kScheme}, {"nonce", base64_encode(random_bytes(kGcmNonceBytes))}};
  std::string key;
  if (k.is_passphrase) {
    const std::string salt = k.salt_for_sealing();
    const ScryptCost cost;
    key = k.derive(salt, cost);
    encryption["kdf"] = {{"name", "scrypt"}, {"salt", base64_encode(salt)}, {"n", cost.n}, {"r", cost.r}, {"p", cost.p}};
  } else {
    key = k.secret;
    encryption["kdf"] = {{"name", "none"}};
  }
  encryption["key_id"] = key_id(key);
  json envelope = {{"format", kSecretFormat}, {"version", kSealedVersion}, {"encryption", std::move(encryption)}};
  const std::string nonce = *base64_decode(envelope["encryption"]["nonce"].get<std::string>());
  envelope["ciphertext"] =
      base64_encode(aes_gcm_seal(key, nonce, clear, authenticated_header(envelope) + "\n" + binding));
  return envelope;
}

std::string StateCipher::open_secret(const json& envelope, const std::string& binding, const std::string& source) const {
  if (!envelope.is_object() || envelope.value("format", json()) != kSecretFormat || !is_sealed(envelope))
    throw StateError(source + ": expected a password (a string, or a sealed value with \"format\": \"" + kSecretFormat +
                     "\"); the state was left untouched. Restore it from a backup (a state file's .backup, or the "
                     "output of `dbform state pull`)");
  return open_bytes(envelope, source, "\n" + binding,
                    source + " does not open with the key from " + (open_with_ ? open_with_->origin() : "") +
                        ": it was sealed for another record (copied there by hand?) or changed after dbform wrote "
                        "it. Nothing was changed; restore the record from a backup (a state file's .backup, or the "
                        "output of `dbform state pull`), or remove the value to forget the password");
}

bool StateCipher::is_sealed(const json& doc) { return doc.is_object() && doc.contains("encryption"); }

std::string StateCipher::key_id_of(const json& doc) {
  if (!is_sealed(doc)) return "";
  const json& e = doc["encryption"];
  return e.is_object() && e.value("key_id", json()).is_string() ? e["key_id"].get<std::string>() : "";
}

std::string StateCipher::open(const json& envelope, const std::string& source) const {
  return open_bytes(envelope, source, "", "");
}

std::string StateCipher::open_bytes(const json& envelope, const std::string& source, const std::string& extra_aad,
                                    const std::string& forged) const {
  auto damaged = [&](const std::string& what) {
    return StateError(source + " is encrypted but its envelope is damaged (" + what +
                      "); nothing was changed. Restore it from a backup (a state file's .backup, or the output of "
                      "`dbform state pull`)");
  };
  const json& e = envelope["encryption"];
  if (!e.is_object()) throw damaged("\"encryption\" is not an object");
  auto text = [&](const json& j, const char* field) {
    auto it = j.find(field);
    if (it == j.end() || !it->is_string()) throw damaged(std::string("no \"") + field + "\"");
    return it->get<std::string>();
  };
  if (text(e, "scheme") != kScheme)
    throw damaged("scheme " + shown(text(e, "scheme")) + "; this dbform knows " + kScheme);
  const std::string id = text(e, "key_id");
  if (!open_with_)
    throw StateError(source + " is encrypted (" + kScheme + ", key id " + shown(id) +
                     "): set DBFORM_STATE_PASSPHRASE or DBFORM_STATE_KEY_FILE to the key it was encrypted with. "
                     "Nothing was changed");
  try {
    return open_with_key(*open_with_, envelope, source, extra_aad, forged, damaged);
  } catch (const StateError&) {
    // `state rekey` run again after it was stopped once it had sealed with the new key (the document
    // rewritten, its old journal not yet removed): what is sealed with the new key opens with it.
    if (!seal_with_ || seal_with_->impl_ == open_with_->impl_) throw;
    try {
      return open_with_key(*seal_with_, envelope, source, extra_aad, forged, damaged);
    } catch (const StateError&) {
    }
    throw;
  }
}

std::string StateCipher::open_with_key(const StateKey& with, const json& envelope, const std::string& source,
                                       const std::string& extra_aad, const std::string& forged,
                                       const std::function<StateError(const std::string&)>& damaged) const {
  const json& e = envelope["encryption"];
  auto text = [&](const json& j, const char* field) {
    auto it = j.find(field);
    if (it == j.end() || !it->is_string()) throw damaged(std::string("no \"") + field + "\"");
    return it->get<std::string>();
  };
  const std::string id = text(e, "key_id");
  auto& k = *with.impl_;
  const json kdf = e.value("kdf", json());
  if (!kdf.is_object()) throw damaged("no \"kdf\"");
  const std::string kdf_name = text(kdf, "name");
  std::string key;
  if (kdf_name == "scrypt" && k.is_passphrase) {
    auto salt = base64_decode(text(kdf, "salt"));
    auto number = [&](const char* field, uint64_t most) {
      auto it = kdf.find(field);
      if (it == kdf.end() || !it->is_number_unsigned() || it->get<uint64_t>() == 0 || it->get<uint64_t>() > most)
        throw damaged(std::string("scrypt's ") + field + " is missing or out of range");
      return it->get<uint64_t>();
    };
    if (!salt || salt->empty()) throw damaged("the salt is not base64");
    ScryptCost cost{number("n", kMaxScryptN), number("r", kMaxScryptR), number("p", kMaxScryptP)};
    if (cost.n * cost.r > kMaxScryptNr) throw damaged("scrypt's n * r asks for more than 256 MiB");
    key = k.derive(*salt, cost);
  } else if (kdf_name == "none" && !k.is_passphrase) {
    key = k.secret;
  } else if (kdf_name == "scrypt" || kdf_name == "none") {
    throw StateError(source + " is encrypted with " + (kdf_name == "none" ? "a key file" : "a passphrase") +
                     " (key id " + shown(id) + "), but the key configured is " +
                     (k.is_passphrase ? "a passphrase" : "a key file") + " (" + k.origin +
                     "). Nothing was changed");
  } else {
    throw damaged("key derivation " + shown(kdf_name));
  }
  if (key_id(key) != id)
    throw StateError(source + " is encrypted with key id " + shown(id) + ", not with the key from " + k.origin +
                     " (key id " + key_id(key) + "): wrong key. Nothing was changed");
  auto nonce = base64_decode(text(e, "nonce"));
  auto sealed = base64_decode(text(envelope, "ciphertext"));
  if (!nonce || nonce->size() != kGcmNonceBytes) throw damaged("the nonce is not 12 bytes of base64");
  if (!sealed) throw damaged("the ciphertext is not base64");
  auto plain = aes_gcm_open(key, *nonce, *sealed, authenticated_header(envelope) + extra_aad);
  if (!plain && !forged.empty()) throw StateError(forged);
  if (!plain)
    throw StateError(source + " failed authentication with the key from " + k.origin +
                     " (key id " + id + "): it was changed or damaged after dbform wrote it. Nothing was changed; "
                     "restore it from a backup (a state file's .backup, or the output of `dbform state pull`)");
  return *plain;
}

}  // namespace dbform
