#include <catch2/catch.hpp>

#include "error_of.h"
#include "state/codec.h"
#include "whole_sealed.h"

using namespace dbform;
using nlohmann::json;

namespace {

ResourceRecord sealable_service(const std::string& name, const std::string& id, const std::string& password) {
  ResourceRecord r;
  r.project_id = "p1";
  r.name = name;
  r.address = resource_address("p1", ResourceKind::Service, name);
  r.id = id;
  r.initial_password = password;
  return r;
}

State one_sealable_service(const std::string& password) {
  State s = new_state();
  s.upsert(sealable_service("orders", "svc-1", password));
  return s;
}

const std::string kCipherKeyBytes(32, 'k');

}  // namespace

TEST_CASE("state: cipher: with a passphrase each password is sealed on its own, and the rest reads without the key") {
  StateCipher cipher(StateKey::passphrase("correct horse battery staple", "DBFORM_STATE_PASSPHRASE"));
  State s = one_sealable_service("pw-0123456789");
  s.resources[0].pending_password = "pw-pending-98765";
  const std::string written = serialize_state(s, cipher);
  CHECK(written.find("pw-0123456789") == std::string::npos);
  CHECK(written.find("pw-pending-98765") == std::string::npos);
  auto doc = json::parse(written);
  CHECK(doc["format"] == "dbform-state");
  CHECK(doc["version"] == 2);  // an older dbform refuses it as newer rather than misread it
  CHECK(doc["secrets_key_id"] == cipher.sealing_key_id());
  const json& rec = doc["resources"][0];
  CHECK(rec["id"] == "svc-1");
  CHECK(rec["address"] == "p1/services/orders");
  CHECK(rec["initial_password"]["format"] == "dbform-secret");
  CHECK(rec["initial_password"]["encryption"]["kdf"]["name"] == "scrypt");
  CHECK(rec["initial_password"]["encryption"]["key_id"] == cipher.sealing_key_id());
  // Each value has its own nonce; the salt (and so the key id, and one derivation) is shared.
  CHECK(rec["pending_password"]["encryption"]["nonce"] != rec["initial_password"]["encryption"]["nonce"]);
  CHECK(rec["pending_password"]["encryption"]["kdf"]["salt"] == rec["initial_password"]["encryption"]["kdf"]["salt"]);

  // Another process with the same passphrase opens them.
  StateCipher reader(StateKey::passphrase("correct horse battery staple", "DBFORM_STATE_PASSPHRASE"));
  std::string key_id;
  const State opened = parse_state(written, "f", reader, &key_id);
  CHECK(opened.resources[0].initial_password == "pw-0123456789");
  CHECK(opened.resources[0].pending_password == "pw-pending-98765");
  CHECK(key_id == cipher.sealing_key_id());
  CHECK(reader.sealing_key_id() == key_id);

  // Without a key: everything but the passwords, which are carried through a write unchanged.
  const State unopened = parse_state(written, "f", StateCipher::plaintext(), &key_id);
  CHECK(key_id == cipher.sealing_key_id());
  CHECK(unopened.secrets_key_id == key_id);
  CHECK(unopened.resources[0].id == "svc-1");
  CHECK(unopened.resources[0].initial_password.is_sealed());
  CHECK_FALSE(unopened.resources[0].initial_password.empty());
  CHECK_THAT(error_of([&] { (void)unopened.resources[0].initial_password.text(); }),
             Catch::Contains("DBFORM_STATE_PASSPHRASE") && Catch::Contains("DBFORM_STATE_KEY_FILE"));
  const json rewritten = json::parse(serialize_state(unopened));
  CHECK(rewritten["resources"][0]["initial_password"] == rec["initial_password"]);
  CHECK(rewritten["secrets_key_id"] == key_id);

  StateCipher wrong(StateKey::passphrase("wrong horse", "DBFORM_STATE_PASSPHRASE"));
  CHECK_THAT(error_of([&] { parse_state(written, "f", wrong); }),
             Catch::Contains("wrong key") && Catch::Contains("p1/services/orders"));
  StateCipher key_file(StateKey::raw(kCipherKeyBytes, "DBFORM_STATE_KEY_FILE (k)"));
  CHECK_THAT(error_of([&] { parse_state(written, "f", key_file); }),
             Catch::Contains("encrypted with a passphrase") && Catch::Contains("is a key file"));
}

TEST_CASE("state: cipher: a sealed value opens only on its record: copied onto another it is refused, moved with its record it opens") {
  StateCipher cipher(StateKey::raw(kCipherKeyBytes, "key file"));
  State s = one_sealable_service("pw-orders-secret");
  s.upsert(sealable_service("billing", "svc-2", "pw-billing-secret"));
  json doc = json::parse(serialize_state(s, cipher));
  // A rename (`state mv`) keeps the id: the value still opens under the new address.
  json moved = doc;
  moved["resources"][0]["name"] = "orders-v2";
  moved["resources"][0]["address"] = "p1/services/orders-v2";
  CHECK(parse_state(moved.dump(), "f", cipher).find("p1/services/orders-v2")->initial_password == "pw-orders-secret");
  // Copied by hand onto billing's record: it never opens there, and the message names the record.
  json copied = doc;
  copied["resources"][1]["initial_password"] = doc["resources"][0]["initial_password"];
  const std::string error = error_of([&] { parse_state(copied.dump(), "f", cipher); });
  CHECK_THAT(error, Catch::Contains("p1/services/billing") && Catch::Contains("initial_password") &&
                        Catch::Contains("sealed for another record"));
  CHECK(error.find("pw-") == std::string::npos);
  // Read without the key it is kept; a write without the key refuses to carry it to another id.
  State unopened = parse_state(doc.dump(), "f");
  unopened.resources[0].id = "svc-9";
  CHECK_THAT(error_of([&] { serialize_state(unopened); }), Catch::Contains("refusing to write p1/services/orders"));
}

TEST_CASE("state: cipher: the header is authenticated, a hostile one is refused, and messages quote none of it") {
  StateCipher cipher(StateKey::raw(kCipherKeyBytes, "key file"));
  const json doc = json::parse(serialize_state(one_sealable_service("pw-secret-1"), cipher));
  auto tampered = [&](const std::function<void(json&)>& edit) {
    json d = doc;
    edit(d["resources"][0]["initial_password"]);
    return error_of([&] { parse_state(d.dump(), "f", cipher); });
  };
  CHECK_THAT(tampered([](auto& v) { v["encryption"]["nonce"] = "AAAAAAAAAAAAAAAA"; }), Catch::Contains("does not open"));
  CHECK_THAT(tampered([](auto& v) { v["version"] = 3; }), Catch::Contains("does not open"));
  CHECK_THAT(tampered([](auto& v) { v.erase("version"); }), Catch::Contains("does not open"));
  CHECK_THAT(tampered([](auto& v) { v["encryption"]["key_id"] = "\x1b[31mred"; }),
             Catch::Contains("wrong key") && !Catch::Contains("\x1b"));
  CHECK_THAT(tampered([](auto& v) { v["ciphertext"] = "not base64!"; }), Catch::Contains("damaged"));
  CHECK_THAT(tampered([](auto& v) { v["encryption"]["scheme"] = "ROT13"; }), Catch::Contains("damaged"));
  CHECK_THAT(tampered([](auto& v) { v["format"] = "dbform-state"; }), Catch::Contains("expected a password"));
  CHECK_THAT(tampered([](auto& v) { v = 42; }), Catch::Contains("expected a password"));
  StateCipher passphrase(StateKey::passphrase("pass", "P"));
  CHECK_THAT(tampered([](auto& v) {
               v["encryption"]["kdf"] = {{"name", "scrypt"}, {"salt", "AAAA"}, {"n", 1ull << 40}, {"r", 8}, {"p", 1}};
             }),
             Catch::Contains("encrypted with a passphrase"));
  json d = doc;
  d["resources"][0]["initial_password"]["encryption"]["kdf"] = {
      {"name", "scrypt"}, {"salt", "AAAA"}, {"n", 1ull << 40}, {"r", 8}, {"p", 1}};
  CHECK_THAT(error_of([&] { parse_state(d.dump(), "f", passphrase); }), Catch::Contains("out of range"));
  d = doc;
  d["secrets_key_id"] = 7;
  CHECK_THAT(error_of([&] { parse_state(d.dump(), "f", cipher); }), Catch::Contains("secrets_key_id"));
}

TEST_CASE("state: cipher: a state whose passwords are sealed never gets a clear one without the key") {
  StateCipher cipher(StateKey::raw(kCipherKeyBytes, "key file"));
  State unopened = parse_state(serialize_state(one_sealable_service("pw-a-secret"), cipher), "f");
  unopened.upsert(sealable_service("billing", "svc-2", "pw-billing-clear"));
  const std::string error = error_of([&] { serialize_state(unopened); });
  CHECK_THAT(error, Catch::Contains("refusing to write p1/services/billing's initial_password in clear") &&
                        Catch::Contains("DBFORM_STATE_KEY_FILE"));
  CHECK(error.find("pw-billing-clear") == std::string::npos);
  CHECK_THAT(error_of([&] { journal_entry(unopened, {"p1/services/billing"}); }), Catch::Contains("in clear"));
  // With no key and nothing sealed, passwords are written in clear, as version 1.
  const json clear = json::parse(serialize_state(one_sealable_service("pw-clear")));
  CHECK(clear["version"] == 1);
  CHECK(clear["resources"][0]["initial_password"] == "pw-clear");
  CHECK_FALSE(clear.contains("secrets_key_id"));
}

TEST_CASE("state: cipher: journal entries seal their passwords and replay with the key, or keep them sealed without") {
  StateCipher cipher(StateKey::raw(kCipherKeyBytes, "key file"));
  State s = one_sealable_service("pw-a");
  State replayed = s, unopened = s;
  s.upsert(sealable_service("billing", "svc-2", "pw-billing-secret"));
  const std::string entry = journal_entry(s, {"p1/services/billing"}, cipher);
  CHECK(entry.find("pw-billing-secret") == std::string::npos);
  CHECK(entry.find('\n') == std::string::npos);
  CHECK(journal_entry_key_id(json::parse(entry)) == cipher.sealing_key_id());
  apply_journal_entry(replayed, entry, "journal line 1", cipher);
  CHECK(replayed.find("p1/services/billing")->initial_password == "pw-billing-secret");
  CHECK(replayed.serial == s.serial + 1);
  apply_journal_entry(unopened, entry, "journal line 1");
  CHECK(unopened.find("p1/services/billing")->initial_password.is_sealed());
  CHECK(unopened.find("p1/services/billing")->id == "svc-2");
}

TEST_CASE("state: cipher: a document and a journal entry sealed whole (the older form) are read with their key") {
  StateCipher cipher(StateKey::raw(kCipherKeyBytes, "key file"));
  State s = one_sealable_service("pw-old-form");
  const std::string old = whole_sealed::seal(kCipherKeyBytes, serialize_state(s), "dbform-state");
  std::string key_id;
  State read = parse_state(old, "f", cipher, &key_id);
  CHECK(read.sealed_whole);
  CHECK(key_id == cipher.sealing_key_id());
  CHECK(read.resources[0].initial_password == "pw-old-form");
  CHECK_THAT(error_of([&] { parse_state(old, "f"); }), Catch::Contains("is encrypted") && Catch::Contains("key id"));
  // An envelope whose plaintext is another envelope is not a state.
  CHECK_THAT(error_of([&] { parse_state(whole_sealed::seal(kCipherKeyBytes, old, "dbform-state"), "f", cipher); }),
             Catch::Contains("not a state document"));

  State more = s;
  more.upsert(sealable_service("billing", "svc-2", "pw-billing-old"));
  const std::string entry =
      whole_sealed::seal(kCipherKeyBytes, json::parse(journal_entry(more, {"p1/services/billing"})).dump(), "dbform-journal-entry");
  CHECK(journal_entry_key_id(json::parse(entry)) == cipher.sealing_key_id());
  apply_journal_entry(read, entry, "journal line 1", cipher);
  CHECK(read.find("p1/services/billing")->initial_password == "pw-billing-old");
  CHECK_THAT(error_of([&] { apply_journal_entry(s, entry, "journal line 1"); }), Catch::Contains("is encrypted"));
}

TEST_CASE("state: cipher: a key file must be exactly 32 bytes") {
  CHECK_THAT(error_of([] { StateKey::raw("short", "DBFORM_STATE_KEY_FILE (k)"); }),
             Catch::Contains("holds 5 bytes") && Catch::Contains("exactly 32"));
}
