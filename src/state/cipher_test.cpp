#include <catch2/catch.hpp>

#include "error_of.h"
#include "state/codec.h"

using namespace dbform;

namespace {

State one_service(const std::string& password) {
  State s = new_state();
  ResourceRecord r;
  r.project_id = "p1";
  r.name = "orders";
  r.address = resource_address("p1", ResourceKind::Service, "orders");
  r.id = "svc-1";
  r.initial_password = password;
  s.upsert(r);
  return s;
}

}  // namespace

TEST_CASE("state: cipher: a passphrase seals with scrypt and a stored salt, and one derivation serves many writes") {
  StateCipher cipher(StateKey::passphrase("correct horse battery staple", "DBFORM_STATE_PASSPHRASE"));
  State s = one_service("pw-0123456789");
  const std::string sealed = serialize_state(s, cipher);
  CHECK(sealed.find("pw-0123456789") == std::string::npos);
  auto doc = nlohmann::json::parse(sealed);
  CHECK(doc["format"] == "dbform-state");
  CHECK(doc["version"] == 2);
  CHECK(doc["encryption"]["scheme"] == "AES-256-GCM");
  CHECK(doc["encryption"]["kdf"]["name"] == "scrypt");
  CHECK(doc["encryption"]["key_id"] == cipher.sealing_key_id());
  // Each write has its own nonce; the salt (and so the key id) stays.
  auto again = nlohmann::json::parse(serialize_state(s, cipher));
  CHECK(again["encryption"]["nonce"] != doc["encryption"]["nonce"]);
  CHECK(again["encryption"]["kdf"]["salt"] == doc["encryption"]["kdf"]["salt"]);

  // Another process with the same passphrase reads it, and keeps its salt when it writes.
  StateCipher reader(StateKey::passphrase("correct horse battery staple", "DBFORM_STATE_PASSPHRASE"));
  std::string key_id;
  CHECK(serialize_state(parse_state(sealed, "f", reader, &key_id)) == serialize_state(s));
  CHECK(key_id == cipher.sealing_key_id());
  CHECK(reader.sealing_key_id() == key_id);

  StateCipher wrong(StateKey::passphrase("wrong horse", "DBFORM_STATE_PASSPHRASE"));
  CHECK_THAT(error_of([&] { parse_state(sealed, "f", wrong); }), Catch::Contains("wrong key"));
  StateCipher key_file(StateKey::raw(std::string(32, 'k'), "DBFORM_STATE_KEY_FILE (k)"));
  CHECK_THAT(error_of([&] { parse_state(sealed, "f", key_file); }),
             Catch::Contains("encrypted with a passphrase") && Catch::Contains("is a key file"));
}

TEST_CASE("state: cipher: the header is authenticated, a hostile one is refused, and messages quote none of it") {
  StateCipher cipher(StateKey::raw(std::string(32, 'k'), "key file"));
  const std::string sealed = serialize_state(one_service("pw-secret-1"), cipher);
  auto tampered = [&](const std::function<void(nlohmann::json&)>& edit) {
    auto doc = nlohmann::json::parse(sealed);
    edit(doc);
    return error_of([&] { parse_state(doc.dump(), "f", cipher); });
  };
  CHECK_THAT(tampered([](auto& d) { d["encryption"]["nonce"] = "AAAAAAAAAAAAAAAA"; }),
             Catch::Contains("failed authentication"));
  CHECK_THAT(tampered([](auto& d) { d["version"] = 3; }), Catch::Contains("failed authentication"));
  // Found by fuzz_state: a header without "version" threw a JSON error instead of a StateError.
  CHECK_THAT(tampered([](auto& d) { d.erase("version"); }), Catch::Contains("failed authentication"));
  CHECK_THAT(tampered([](auto& d) { d["encryption"]["key_id"] = "\x1b[31mred"; }),
             Catch::Contains("wrong key") && !Catch::Contains("\x1b"));
  CHECK_THAT(tampered([](auto& d) { d["ciphertext"] = "not base64!"; }), Catch::Contains("damaged"));
  CHECK_THAT(tampered([](auto& d) { d["encryption"]["scheme"] = "ROT13"; }), Catch::Contains("damaged"));
  CHECK_THAT(tampered([](auto& d) { d["encryption"]["kdf"] = {{"name", "scrypt"}, {"salt", "AAAA"}, {"n", 1ull << 40}, {"r", 8}, {"p", 1}}; }),
             Catch::Contains("encrypted with a passphrase"));
  StateCipher passphrase(StateKey::passphrase("pass", "P"));
  auto doc = nlohmann::json::parse(sealed);
  doc["encryption"]["kdf"] = {{"name", "scrypt"}, {"salt", "AAAA"}, {"n", 1ull << 40}, {"r", 8}, {"p", 1}};
  CHECK_THAT(error_of([&] { parse_state(doc.dump(), "f", passphrase); }), Catch::Contains("out of range"));
  // An envelope whose plaintext is another envelope is not a state.
  const std::string nested = cipher.seal(sealed, "dbform-state");
  CHECK_THAT(error_of([&] { parse_state(nested, "f", cipher); }), Catch::Contains("is encrypted"));
}

TEST_CASE("state: cipher: journal entries are sealed one by one and replay like plain ones") {
  StateCipher cipher(StateKey::raw(std::string(32, 'k'), "key file"));
  State s = one_service("pw-a");
  State replayed = s;
  ResourceRecord second = s.resources[0];
  second.name = "billing";
  second.address = resource_address("p1", ResourceKind::Service, "billing");
  second.initial_password = "pw-billing-secret";
  s.upsert(second);
  const std::string entry = journal_entry(s, {second.address}, cipher);
  CHECK(entry.find("pw-billing-secret") == std::string::npos);
  CHECK(entry.find('\n') == std::string::npos);
  apply_journal_entry(replayed, entry, "journal line 1", cipher);
  CHECK(replayed.find(second.address)->initial_password == "pw-billing-secret");
  CHECK(replayed.serial == s.serial + 1);
  CHECK_THAT(error_of([&] { apply_journal_entry(replayed, entry, "journal line 1", StateCipher::plaintext()); }),
             Catch::Contains("is encrypted"));
}

TEST_CASE("state: cipher: a key file must be exactly 32 bytes") {
  CHECK_THAT(error_of([] { StateKey::raw("short", "DBFORM_STATE_KEY_FILE (k)"); }),
             Catch::Contains("holds 5 bytes") && Catch::Contains("exactly 32"));
}
