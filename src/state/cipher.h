#pragma once
// Encryption of the state's secrets at rest: AES-256-GCM over each password on its own, bound to
// its record, with a key from a key file (32 raw bytes) or a passphrase stretched by scrypt with a
// stored salt. A sealed value is an envelope whose header (format, version, scheme, KDF parameters,
// key id, nonce) is in the clear and authenticated together with its record's binding (kind,
// project, id). Documents and journal entries sealed whole (the form dbform wrote before) are still
// opened; they are no longer written.
#include <functional>
#include <memory>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

namespace dbform {

class StateError;  // state/errors.h

// The key, wherever it came from. Copies share one cache of scrypt derivations (one per salt and
// process: scrypt is slow on purpose).
class StateKey {
 public:
  // `origin` names where it came from in messages: "DBFORM_STATE_PASSPHRASE", "key file F".
  static StateKey passphrase(std::string passphrase, std::string origin);
  // Throws StateError unless `bytes` is exactly 32 bytes.
  static StateKey raw(std::string bytes, std::string origin);
  const std::string& origin() const;

 private:
  friend class StateCipher;
  struct Impl;
  explicit StateKey(std::shared_ptr<Impl> impl) : impl_(std::move(impl)) {}
  std::shared_ptr<Impl> impl_;
};

// What a store reads with and writes with. Without keys it reads and writes plaintext and refuses
// sealed documents; with a key it reads both and writes sealed. `state decrypt` and `state rekey`
// read with one key and write with none or another.
class StateCipher {
 public:
  StateCipher() = default;
  explicit StateCipher(std::optional<StateKey> key) : open_with_(key), seal_with_(std::move(key)) {}
  StateCipher(std::optional<StateKey> open_with, std::optional<StateKey> seal_with)
      : open_with_(std::move(open_with)), seal_with_(std::move(seal_with)) {}
  static const StateCipher& plaintext();

  bool seals() const { return seal_with_.has_value(); }
  bool has_key() const { return open_with_.has_value(); }
  // One secret's envelope ("format": "dbform-secret"), bound to `binding` (secret_binding of its
  // record): its authenticated data is the envelope's header and the binding. Only when sealing.
  nlohmann::json seal_secret(const std::string& clear, const std::string& binding) const;
  // A secret's clear text. Throws StateError naming `source` (the record and field, never the
  // value) when there is no key, the key is another one, or the value was sealed for another
  // record (copied by hand) or changed.
  std::string open_secret(const nlohmann::json& envelope, const std::string& binding, const std::string& source) const;
  // The key id this cipher seals with ("" when it does not): 16 hex digits that name a key without
  // revealing it.
  std::string sealing_key_id() const;

  // Whether a parsed document is an envelope, and the key id it names ("" when plaintext).
  static bool is_sealed(const nlohmann::json& doc);
  static std::string key_id_of(const nlohmann::json& doc);
  // An envelope's plaintext. Throws StateError naming `source` when there is no key, the key is
  // another one, or the envelope was changed or damaged; the message never quotes its content.
  std::string open(const nlohmann::json& envelope, const std::string& source) const;

 private:
  // `extra_aad` is authenticated after the header: "" for whole documents, a secret's binding.
  std::string open_bytes(const nlohmann::json& envelope, const std::string& source, const std::string& extra_aad,
                         const std::string& forged) const;
  // open_bytes with one key (`damaged` makes the error of a damaged envelope).
  std::string open_with_key(const StateKey& with, const nlohmann::json& envelope, const std::string& source,
                            const std::string& extra_aad, const std::string& forged,
                            const std::function<StateError(const std::string&)>& damaged) const;
  std::optional<StateKey> open_with_;
  std::optional<StateKey> seal_with_;
};

}  // namespace dbform
