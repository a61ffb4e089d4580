// Sealed secrets, through the real binary: with a key each password the state
// holds is sealed on its own, bound to its record, and everything else reads without the key. The
// commands that never need the key work on a sealed state without it and print no password; those
// that read or record a password say, before any call, which variable to set; a value copied onto
// another record never opens there; a state sealed whole by an older dbform is read with its key
// and converted at its next write.
#include <fstream>
#include <iterator>

#include "common.h"
#include "../pg/test_server.h"
#include "whole_sealed.h"

using namespace e2e;

namespace {


// orders and billing applied with the key; their passwords, read with it.
std::map<std::string, std::string> two_sealed_services(Sandbox& sb) {
  sb.write("dbform.yaml", manifest({}, {service_yaml("orders"), service_yaml("billing")}));
  RunResult r = sb.apply({}, kSealingKey);
  INFO(r.describe());
  REQUIRE(r.exit_code == 0);
  std::map<std::string, std::string> passwords;
  for (const char* name : {"orders", "billing"}) {
    RunResult out = sb.run({"output", service_address(name) + ".password"}, kSealingKey);
    REQUIRE(out.exit_code == 0);
    passwords[name] = out.out.substr(0, out.out.find('\n'));
    REQUIRE(passwords[name].size() > 8);
  }
  return passwords;
}

void holds_no_password(const RunResult& r, const std::map<std::string, std::string>& passwords) {
  for (const auto& [name, password] : passwords) {
    INFO(name);
    CHECK_FALSE(contains(r.out + r.err, password));
  }
}

// The message of a command that needs the key and has none: both variables, and the key id.
void says_to_set_the_state_key(const RunResult& r, const std::string& command) {
  INFO(r.describe());
  CHECK(r.exit_code == 1);
  CHECK(contains(r.err, command + " needs the state's key"));
  CHECK(contains(r.err, "DBFORM_STATE_PASSPHRASE"));
  CHECK(contains(r.err, "DBFORM_STATE_KEY_FILE"));
  CHECK(contains(r.err, "key id "));
}

}  // namespace

TEST_CASE("e2e: sealed: the state file holds ids, addresses and endpoints in clear and no password") {
  Sandbox sb;
  const auto passwords = two_sealed_services(sb);
  const std::string file = sb.read("dbform.state.json");
  const json doc = json::parse(file);
  CHECK(doc["version"] == 2);
  CHECK(doc["secrets_key_id"].is_string());
  const json orders = find_resource(doc, service_address("orders"));
  CHECK(orders["id"].get<std::string>().size() > 3);
  CHECK(orders["status"] == "READY");
  CHECK(orders["endpoint"]["host"].is_string());
  CHECK(orders["initial_password"]["format"] == "dbform-secret");
  for (const auto& [name, password] : passwords) CHECK_FALSE(contains(file, password));
}

TEST_CASE("e2e: sealed: every command that never needs the key works on a sealed state without it and prints no password") {
  Sandbox sb;
  const auto passwords = two_sealed_services(sb);
  sb.write("rules/policy.yaml", "version: 1\nrules: []\n");
  const std::string legacy = console_service(sb, {{"name", "legacy"}, {"region_code", "us-east-1"}});
  auto keyless = [&](const std::vector<std::string>& args) {
    RunResult r = sb.run(args);
    INFO(r.describe());
    CHECK(r.exit_code == 0);
    holds_no_password(r, passwords);
    return r;
  };
  keyless({"validate"});
  // A pull request's plan: refreshing with the API key, no state key; its comment holds no password.
  CHECK(contains(keyless({"plan", "--detailed-exitcode"}).out, "No changes"));
  keyless({"plan", "--no-refresh", "--format", "markdown"});
  keyless({"plan", "--out", "saved.plan"});
  keyless({"show", "saved.plan"});
  CHECK(contains(keyless({"state", "list"}).out, service_address("billing")));
  RunResult show = keyless({"state", "show", "orders"});
  CHECK(contains(show.out, "\"initial_password\": \"(sealed)\""));
  CHECK(contains(keyless({"output"}).out, "password (sealed)"));
  keyless({"output", "--json"});
  CHECK(keyless({"output", "orders.host"}).out.size() > 3);
  keyless({"output", "orders.id"});
  keyless({"preview", "list"});
  keyless({"whoami"});
  keyless({"policy", "check", "--policy", "rules/policy.yaml"});
  // Writes that record no password: sealed values are carried as they are.
  sb.write("dbform.yaml", manifest({}, {service_yaml("orders", 2000, 8), service_yaml("billing"), service_yaml("legacy")}));
  keyless({"import", service_address("legacy"), legacy});
  keyless({"state", "mv", "billing", "invoices"});
  keyless({"state", "rm", "legacy"});
  sb.write("dbform.yaml", manifest({}, {service_yaml("orders", 2000, 8), service_yaml("invoices")}));
  RunResult resize = keyless({"apply", "--auto-approve", "--poll-interval", "100ms"});  // an update records no password
  CHECK(contains(resize.out, "orders"));
  CHECK(find_resource(sb.state(), service_address("orders"))["settings"]["cpu_millis"] == "2000");
  // With the key, each password opens where it belongs (the moved record's under its new address).
  RunResult orders = sb.run({"output", "orders.password"}, kSealingKey);
  CHECK(orders.out == passwords.at("orders") + "\n");
  RunResult invoices = sb.run({"output", "invoices.password"}, kSealingKey);
  INFO(invoices.describe());
  CHECK(invoices.out == passwords.at("billing") + "\n");
  for (const auto& [name, password] : passwords) CHECK_FALSE(contains(sb.read("dbform.state.json"), password));
}

TEST_CASE("e2e: sealed: every command that reads or records a password says which variable to set, before any call") {
  Sandbox sb;
  const auto passwords = two_sealed_services(sb);
  const std::string state_before = sb.read("dbform.state.json");
  const long long posts = sb.count(kPostService);
  sb.write("dbform.yaml", manifest({}, {service_yaml("orders"), service_yaml("billing"), service_yaml("reports")}));
  RunResult create = sb.run({"apply", "--auto-approve"});
  says_to_set_the_state_key(create, "this apply");
  CHECK(sb.count(kPostService) == posts);
  sb.write("dbform.yaml", manifest({}, {service_yaml("orders"), service_yaml("billing")}));
  const long long requests = sb.total_requests();
  says_to_set_the_state_key(sb.run({"rotate-password", "orders"}), "rotate-password");
  says_to_set_the_state_key(sb.run({"output", "orders.password"}), "output " + service_address("orders") + ".password");
  says_to_set_the_state_key(sb.run({"output", "orders.connection_string"}),
                      "output " + service_address("orders") + ".connection_string");
  says_to_set_the_state_key(sb.run({"output", "--show-secrets"}), "output --show-secrets");
  says_to_set_the_state_key(sb.run({"output", "--format", "env"}), "output --format env");
  says_to_set_the_state_key(sb.run({"output", "--format", "pgpass"}), "output --format pgpass");
  says_to_set_the_state_key(sb.run({"connect", "orders", "--check"}), "connect");
  says_to_set_the_state_key(sb.run({"preview", "diff", "pr-1"}), "preview diff");
  CHECK(contains(sb.run({"state", "decrypt"}).err, "needs the state's key"));
  CHECK(contains(sb.run({"state", "rekey"}, {{"DBFORM_STATE_NEW_PASSPHRASE", "another one"}}).err,
                 "needs the state's key"));
  CHECK(sb.total_requests() == requests);
  CHECK(sb.read("dbform.state.json") == state_before);

  // With the key, the same commands work.
  sb.write("dbform.yaml", manifest({}, {service_yaml("orders"), service_yaml("billing"), service_yaml("reports")}));
  RunResult keyed = sb.apply({}, kSealingKey);
  INFO(keyed.describe());
  CHECK(keyed.exit_code == 0);
  CHECK(sb.count(kPostService) == posts + 1);
  CHECK(sb.run({"rotate-password", "orders"}, kSealingKey).exit_code == 0);
  RunResult reports = sb.run({"output", "reports.password"}, kSealingKey);
  CHECK(reports.exit_code == 0);
  CHECK_FALSE(contains(sb.read("dbform.state.json"), reports.out.substr(0, reports.out.find('\n'))));
}

TEST_CASE("e2e: sealed: a sealed password copied by hand onto another record never opens there") {
  Sandbox sb;
  const auto passwords = two_sealed_services(sb);
  json doc = json::parse(sb.read("dbform.state.json"));
  json* orders = nullptr;
  json* billing = nullptr;
  REQUIRE(doc.value("resources", json()).is_array());
  for (auto& r : doc["resources"]) (r["name"] == "orders" ? orders : billing) = &r;
  REQUIRE(orders);
  REQUIRE(billing);
  (*billing)["initial_password"] = (*orders)["initial_password"];
  sb.write("dbform.state.json", doc.dump(2));
  RunResult r = sb.run({"output", "billing.password"}, kSealingKey);
  INFO(r.describe());
  CHECK(r.exit_code == 1);
  CHECK(contains(r.err, service_address("billing")));
  CHECK(contains(r.err, "sealed for another record"));
  holds_no_password(r, passwords);
  const long long requests = sb.total_requests();
  CHECK(sb.apply({}, kSealingKey).exit_code == 1);  // refused whole, nothing sent
  CHECK(sb.total_requests() == requests);
}

TEST_CASE("e2e: sealed: without any key an apply that records a password warns naming both variables, and one that records none does not") {
  Sandbox sb;
  sb.write("dbform.yaml", manifest({}, {service_yaml("orders")}));
  RunResult create = sb.apply();
  INFO(create.describe());
  REQUIRE(create.exit_code == 0);
  CHECK(contains(create.err, "kept in clear"));
  CHECK(contains(create.err, "DBFORM_STATE_PASSPHRASE or DBFORM_STATE_KEY_FILE"));
  sb.write("dbform.yaml", manifest({}, {service_yaml("orders", 2000, 8)}));
  RunResult resize = sb.apply();
  CHECK(resize.exit_code == 0);
  CHECK_FALSE(contains(resize.err, "kept in clear"));
  RunResult rotate = sb.run({"rotate-password", "orders"});
  CHECK(rotate.exit_code == 0);
  CHECK(contains(rotate.err, "kept in clear"));
  CHECK(find_resource(sb.state(), service_address("orders"))["initial_password"].is_string());
}

TEST_CASE("e2e: sealed: a state sealed whole by an older dbform is read with its key, refused without it, and sealed per password at its next write") {
  Sandbox sb;
  sb.write("dbform.yaml", manifest({}, {service_yaml("orders")}));
  REQUIRE(sb.apply().exit_code == 0);
  const std::string password = sb.state()["resources"][0]["initial_password"];
  const std::string key(32, 'q');
  sb.write("state.key", key);
  const std::map<std::string, std::string> keyed = {{"DBFORM_STATE_KEY_FILE", (sb.dir() / "state.key").string()}};
  sb.write("dbform.state.json", whole_sealed::seal(key, sb.read("dbform.state.json"), "dbform-state") + "\n");
  RunResult none = sb.run({"plan"});
  CHECK(none.exit_code == 1);
  CHECK(contains(none.err, "is encrypted"));
  CHECK(contains(none.err, "DBFORM_STATE_KEY_FILE"));
  CHECK(sb.run({"plan", "--detailed-exitcode"}, keyed).exit_code == 0);
  RunResult convert = sb.run({"state", "encrypt"}, keyed);
  INFO(convert.describe());
  CHECK(convert.exit_code == 0);
  const std::string file = sb.read("dbform.state.json");
  CHECK(json::parse(file).contains("secrets_key_id"));
  CHECK_FALSE(json::parse(file).contains("ciphertext"));
  CHECK_FALSE(contains(file, password));
  CHECK_FALSE(contains(sb.read("dbform.state.json.backup"), password));
  CHECK(sb.run({"output", "orders.host"}).exit_code == 0);
  CHECK(sb.run({"output", "orders.password"}, keyed).out == password + "\n");
}

TEST_CASE("e2e: sealed: state pull without the key keeps passwords sealed, and a clear state is not pushed over a sealed one without it") {
  Sandbox sb;
  const auto passwords = two_sealed_services(sb);
  RunResult pull = sb.run({"state", "pull"});
  INFO(pull.describe());
  CHECK(pull.exit_code == 0);
  holds_no_password(pull, passwords);
  CHECK(json::parse(pull.out)["secrets_key_id"].is_string());
  // A copy in clear (decrypted elsewhere) pushed over the sealed state without the key.
  json clear = json::parse(sb.run({"state", "pull"}, kSealingKey).out);
  CHECK(find_resource(clear, service_address("orders"))["initial_password"].is_object());  // pull with the key: sealed too
  clear.erase("secrets_key_id");
  clear["version"] = 1;
  for (auto& r : clear["resources"]) r["initial_password"] = "a-clear-password-0123";
  sb.write("clear.json", clear.dump(2));
  RunResult push = sb.run({"state", "push", "--force", "clear.json"});
  CHECK(push.exit_code == 1);
  CHECK(contains(push.err, "in clear"));
  CHECK_FALSE(contains(sb.read("dbform.state.json"), "a-clear-password-0123"));
  RunResult keyed = sb.run({"state", "push", "--force", "clear.json"}, kSealingKey);
  INFO(keyed.describe());
  CHECK(keyed.exit_code == 0);
  CHECK_FALSE(contains(sb.read("dbform.state.json"), "a-clear-password-0123"));
}

TEST_CASE("e2e: sealed: pg: a sealed workspace plans, lists and shows without the key, and its passwords need it", "[pg]") {
  Sandbox sb;
  const std::string workspace = pgtest::unique_name("sealed46");
  const std::map<std::string, std::string> at = {{"DBFORM_STATE", pgtest::server_url()}, {"DBFORM_WORKSPACE", workspace}};
  std::map<std::string, std::string> keyed = at;
  keyed.insert(kSealingKey.begin(), kSealingKey.end());
  sb.write("dbform.yaml", manifest({}, {service_yaml("orders")}));
  REQUIRE(sb.apply({}, keyed).exit_code == 0);
  RunResult password = sb.run({"output", "orders.password"}, keyed);
  REQUIRE(password.exit_code == 0);
  const std::map<std::string, std::string> passwords = {{"orders", password.out.substr(0, password.out.find('\n'))}};
  for (const auto& args : std::vector<std::vector<std::string>>{
           {"plan", "--detailed-exitcode"}, {"state", "list"}, {"state", "show", "orders"}, {"output", "orders.host"}}) {
    RunResult r = sb.run(args, at);
    INFO(r.describe());
    CHECK(r.exit_code == 0);
    holds_no_password(r, passwords);
  }
  says_to_set_the_state_key(sb.run({"output", "orders.password"}, at), "output " + service_address("orders") + ".password");
  sb.write("dbform.yaml", manifest({}, {service_yaml("orders"), service_yaml("billing")}));
  const long long posts = sb.count(kPostService);
  says_to_set_the_state_key(sb.run({"apply", "--auto-approve"}, at), "this apply");
  CHECK(sb.count(kPostService) == posts);
}

// A sealed value is bound to its record's project as well as its kind and id. A
// sealed workspace's record moved, with its row of dbform_secrets, to the same kind and id under
// another project never opens there.
TEST_CASE("e2e: sealed: pg: a sealed password moved to the same kind and id under another project never opens there",
          "[pg]") {
  Sandbox sb;
  const std::string workspace = pgtest::unique_name("sealed57");
  std::map<std::string, std::string> keyed = {{"DBFORM_STATE", pgtest::server_url()}, {"DBFORM_WORKSPACE", workspace}};
  keyed.insert(kSealingKey.begin(), kSealingKey.end());
  sb.write("dbform.yaml", manifest({}, {service_yaml("orders")}));
  REQUIRE(sb.apply({}, keyed).exit_code == 0);
  RunResult shown = sb.run({"output", "orders.password"}, keyed);
  REQUIRE(shown.exit_code == 0);
  const std::map<std::string, std::string> passwords = {{"orders", shown.out.substr(0, shown.out.find('\n'))}};

  dbform::PgConnection admin(pgtest::server_url());
  REQUIRE(admin.exec("SELECT count(*) FROM dbform_journal WHERE workspace = $1", {workspace}).rows[0][0] == "0");
  json doc = json::parse(*admin.exec("SELECT document FROM dbform_states WHERE workspace = $1", {workspace}).rows[0][0]);
  REQUIRE(doc["resources"].size() == 1);
  const std::string other = "acme-staging";
  doc["resources"][0]["project_id"] = other;
  doc["resources"][0]["address"] = service_address("orders", other);
  admin.exec("UPDATE dbform_states SET document = $2 WHERE workspace = $1", {workspace, doc.dump(2)});
  REQUIRE(admin.exec("UPDATE dbform_secrets SET project_id = $2 WHERE workspace = $1", {workspace, other}).affected == 1);

  sb.write("dbform.yaml", manifest({}, {service_yaml("orders")}, other));
  RunResult moved = sb.run({"output", service_address("orders", other) + ".password"}, keyed);
  INFO(moved.describe());
  CHECK(moved.exit_code == 1);
  CHECK(contains(moved.err, "sealed for another record"));
  holds_no_password(moved, passwords);
}

namespace {

// States written by dbform v0.1.0 (document version 2, each password sealed on its own), kept in
// tests/e2e/data: a change that made every existing sealed state unreadable fails here. One sealed
// with a passphrase, one with a key file (these 32 bytes, in hex); each holds one service.
const std::string kStoredPassphrase = "the passphrase of a state kept as test data";
const std::string kStoredKeyHex = "75b9d019d0687b0f70f74e71e2057c232602ed01494a6f4e06688fddb48b72df";

struct StoredState {
  std::string file, service, password;
  std::map<std::string, std::string> key;  // the environment that gives its key
};

std::vector<StoredState> stored_states(Sandbox& sb) {
  std::string key;
  for (size_t i = 0; i < kStoredKeyHex.size(); i += 2) key += static_cast<char>(std::stoi(kStoredKeyHex.substr(i, 2), nullptr, 16));
  sb.write("stored.key", key);
  return {{"sealed_v2_passphrase.json", "orders", "kRi5yVcviJ92eTNT2RHu",
           {{"DBFORM_STATE_PASSPHRASE", kStoredPassphrase}}},
          {"sealed_v2_key_file.json", "billing", "oVHrC42HvVsxkkYaH8dD",
           {{"DBFORM_STATE_KEY_FILE", (sb.dir() / "stored.key").string()}}}};
}

std::string stored(const std::string& file) {
  std::ifstream in(std::string(DBFORM_SOURCE_DIR "/tests/e2e/data/") + file, std::ios::binary);
  REQUIRE(in);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

}  // namespace

TEST_CASE("e2e: sealed: a sealed state file a released dbform wrote opens with its key and gives its password") {
  Sandbox sb;
  for (const StoredState& s : stored_states(sb)) {
    INFO(s.file);
    sb.write("dbform.state.json", stored(s.file));
    sb.write("dbform.yaml", manifest({}, {service_yaml(s.service)}));
    RunResult opened = sb.run({"output", s.service + ".password"}, s.key);
    INFO(opened.describe());
    CHECK(opened.exit_code == 0);
    CHECK(opened.out == s.password + "\n");
    RunResult list = sb.run({"state", "list"});  // the rest reads without the key
    CHECK(list.exit_code == 0);
    CHECK(contains(list.out, service_address(s.service)));
    RunResult wrong = sb.run({"output", s.service + ".password"}, {{"DBFORM_STATE_PASSPHRASE", "another passphrase"}});
    CHECK(wrong.exit_code == 1);
    CHECK(!contains(wrong.all(), s.password));
  }
}

TEST_CASE("e2e: sealed: pg: a sealed state file a released dbform wrote, pushed to PostgreSQL, gives its password there",
          "[pg]") {
  Sandbox sb;
  for (const StoredState& s : stored_states(sb)) {
    INFO(s.file);
    std::map<std::string, std::string> at = {{"DBFORM_STATE", pgtest::server_url()},
                                             {"DBFORM_WORKSPACE", pgtest::unique_name("stored57")}};
    at.insert(s.key.begin(), s.key.end());
    sb.write("stored.state.json", stored(s.file));
    sb.write("dbform.yaml", manifest({}, {service_yaml(s.service)}));
    RunResult pushed = sb.run({"state", "push", "stored.state.json"}, at);
    INFO(pushed.describe());
    REQUIRE(pushed.exit_code == 0);
    RunResult opened = sb.run({"output", s.service + ".password"}, at);
    INFO(opened.describe());
    CHECK(opened.exit_code == 0);
    CHECK(opened.out == s.password + "\n");
    dbform::PgConnection admin(pgtest::server_url());
    CHECK(admin.exec("SELECT count(*) FROM dbform_secrets WHERE workspace = $1 AND value LIKE '%ciphertext%'",
                     {at["DBFORM_WORKSPACE"]}).rows[0][0] == "1");
  }
}
