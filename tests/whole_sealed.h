#pragma once
// A state document sealed whole, as dbform wrote one (with a key file) before each password was
// sealed on its own: the form a reader must still open with its key and convert at its next write.
// Built here, the way that dbform built it, because dbform no longer writes it.
#include <string>

#include <nlohmann/json.hpp>

#include "util/crypto.h"

namespace whole_sealed {

// `plaintext` (a state document or a journal entry in clear) sealed whole with the 32-byte `key`:
// an envelope of format `format` ("dbform-state" or "dbform-journal-entry"), one line.
inline std::string seal(const std::string& key, const std::string& plaintext, const std::string& format) {
  using nlohmann::json;
  const std::string nonce = dbform::random_bytes(dbform::kGcmNonceBytes);
  json encryption = {{"scheme", "AES-256-GCM"},
                     {"nonce", dbform::base64_encode(nonce)},
                     {"kdf", {{"name", "none"}}},
                     {"key_id", dbform::hex(dbform::sha256("dbform state key id\n" + key)).substr(0, 16)}};
  const std::string header = json{{"format", format}, {"version", 2}, {"encryption", encryption}}.dump();
  json envelope = {{"format", format}, {"version", 2}, {"encryption", encryption}};
  envelope["ciphertext"] = dbform::base64_encode(dbform::aes_gcm_seal(key, nonce, plaintext, header));
  return envelope.dump();
}

}  // namespace whole_sealed
