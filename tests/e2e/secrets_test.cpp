// Secrets at rest and hostile input, through the real binary: an encrypted state leaves
// no password in any file, hostile answers and files are clear errors of one call or file, and no
// secret or terminal escape reaches the output.
#include <unistd.h>

#include <regex>

#include "common.h"
#include "../pg/test_server.h"

using namespace e2e;

namespace {

const std::string kPassphrase = "correct horse battery staple";

// Every byte of every file under `dir`, with the name of the first file holding `needle`.
std::string file_holding(const fs::path& dir, const std::string& needle) {
  for (const auto& entry : fs::recursive_directory_iterator(dir)) {
    if (!entry.is_regular_file()) continue;
    std::ifstream in(entry.path(), std::ios::binary);
    std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    if (bytes.find(needle) != std::string::npos) return entry.path().string();
  }
  return "";
}

// The passwords dbform recorded, read with the key.
std::vector<std::string> recorded_passwords(Sandbox& sb, const std::vector<std::string>& more_args = {}) {
  std::vector<std::string> args = {"output", "--show-secrets", "--format", "json"};
  args.insert(args.end(), more_args.begin(), more_args.end());
  RunResult r = sb.run(args, {{"DBFORM_STATE_PASSPHRASE", kPassphrase}});
  REQUIRE(r.exit_code == 0);
  std::vector<std::string> passwords;
  const json outputs = json::parse(r.out);
  for (const auto& [address, values] : outputs.items())
    if (values.value("password", "") != "") passwords.push_back(values["password"]);
  return passwords;
}

bool has_terminal_control(const std::string& text) {
  for (unsigned char c : text)
    if ((c < 0x20 && c != '\n' && c != '\t') || c == 0x7f) return true;
  return false;
}

}  // namespace

TEST_CASE("e2e: with a passphrase, no byte of a password is in the state, its backup, its journal or a recovery file") {
  auto config = default_sim_config();
  config.configuring_delay = dbform::Duration(1500);
  config.faults.create_answer_delay = dbform::Duration(1000);
  Sandbox sb(config);
  fs::create_directories(sb.dir() / "tmp");
  fs::create_directories(sb.dir() / "statedir");
  const std::string state_path = (sb.dir() / "statedir" / "dbform.state.json").string();
  const std::map<std::string, std::string> keyed = {{"DBFORM_STATE_PASSPHRASE", kPassphrase},
                                                    {"TMPDIR", (sb.dir() / "tmp").string()}};
  sb.write("dbform.yaml", manifest({}, {service_yaml("s1"), service_yaml("s2"), service_yaml("s3")}));
  auto run = sb.start({"apply", "--auto-approve", "--poll-interval", "100ms", "--parallelism", "1", "--state",
                       state_path}, keyed);
  // Once s1 is created and recorded (in the journal: the document holds only the intents), the
  // state's directory refuses writes, and what the run learns next goes to a recovery file.
  auto s1_recorded = [&] {
    RunResult out = sb.run({"output", "--format", "json", "--state", state_path}, keyed);
    return out.exit_code == 0 && json::parse(out.out).value(service_address("s1"), json::object()).value("id", "") != "";
  };
  REQUIRE(eventually(s1_recorded, std::chrono::seconds(20)));
  const std::string journal_bytes = sb.read("statedir/dbform.state.json.journal");
  CHECK(!journal_bytes.empty());
  UnwritableDir ro(sb.dir() / "statedir");
  RunResult r = run->wait();
  ro.release();
  INFO(r.describe());
  std::smatch m;
  REQUIRE(std::regex_search(r.err, m, std::regex("dbform state push (\\S+) --state")));
  const std::string recovery = m[1];
  CHECK(fs::exists(recovery));
  REQUIRE(sb.run({"state", "push", recovery, "--state", state_path}, keyed).exit_code == 0);
  const auto passwords = recorded_passwords(sb, {"--state", state_path});
  CHECK(passwords.size() >= 2);
  for (const auto& password : passwords) {
    INFO(password);
    CHECK(file_holding(sb.dir() / "statedir", password) == "");
    CHECK(file_holding(sb.dir() / "tmp", password) == "");
    CHECK(journal_bytes.find(password) == std::string::npos);
    CHECK(r.out.find(password) == std::string::npos);
    CHECK(r.err.find(password) == std::string::npos);
  }
}

TEST_CASE("e2e: state encrypt, rekey and decrypt, and a wrong key and a flipped byte are refused and change nothing") {
  Sandbox sb;
  sb.write("dbform.yaml", manifest({}, {service_yaml("orders")}));
  REQUIRE(sb.apply().exit_code == 0);
  const std::string password = recorded_passwords(sb).at(0);
  // What a write killed before its rename leaves: the state in the clear, beside it.
  sb.write("dbform.state.json.tmp-k1lled", sb.read("dbform.state.json"));
  sb.write("dbform.state.json.backup.tmp-Xy9z0Q", sb.read("dbform.state.json"));
  sb.write("dbform.state.json.tmp-notours", "kept");  // not a name a write of ours leaves
  RunResult enc = sb.run({"state", "encrypt"}, {{"DBFORM_STATE_PASSPHRASE", kPassphrase}});
  INFO(enc.describe());
  REQUIRE(enc.exit_code == 0);
  CHECK(contains(enc.out, "plain -> passwords sealed with key id"));
  CHECK(file_holding(sb.dir(), password) == "");
  CHECK(sb.read("dbform.state.json.tmp-notours") == "kept");

  const std::string sealed = sb.read("dbform.state.json");
  for (const auto& wrong : std::map<std::string, std::string>{{"DBFORM_STATE_PASSPHRASE", "not the passphrase"}}) {
    RunResult r = sb.run({"plan"}, {wrong});
    CHECK(r.exit_code == 1);
    CHECK(contains(r.err, "wrong key"));
  }
  // Without the key everything but the password reads (plan, output of its id).
  RunResult none = sb.run({"plan", "--detailed-exitcode"});
  CHECK(none.exit_code == 0);
  CHECK_FALSE(contains(none.out + none.err, password));
  std::string flipped = sealed;
  const size_t at = flipped.find("\"ciphertext\": \"") + 20;  // inside the sealed password
  flipped[at] = flipped[at] == 'A' ? 'B' : 'A';
  sb.write("dbform.state.json", flipped);
  RunResult tampered = sb.run({"apply", "--auto-approve"}, {{"DBFORM_STATE_PASSPHRASE", kPassphrase}});
  CHECK(tampered.exit_code == 1);
  CHECK(contains(tampered.err, "does not open"));
  CHECK(sb.read("dbform.state.json") == flipped);
  CHECK(sb.count(kPostService) == 1);
  sb.write("dbform.state.json", sealed);

  sb.write("new.key", std::string(32, 'n'));
  RunResult rekey = sb.run({"state", "rekey"}, {{"DBFORM_STATE_PASSPHRASE", kPassphrase},
                                                {"DBFORM_STATE_NEW_KEY_FILE", (sb.dir() / "new.key").string()}});
  INFO(rekey.describe());
  REQUIRE(rekey.exit_code == 0);
  CHECK(sb.run({"plan"}, {{"DBFORM_STATE_PASSPHRASE", kPassphrase}}).exit_code == 1);
  const std::map<std::string, std::string> new_key = {{"DBFORM_STATE_KEY_FILE", (sb.dir() / "new.key").string()}};
  RunResult plan = sb.run({"plan", "--detailed-exitcode"}, new_key);
  CHECK(plan.exit_code == 0);
  RunResult dec = sb.run({"state", "decrypt"}, new_key);
  REQUIRE(dec.exit_code == 0);
  CHECK(sb.state()["resources"][0]["initial_password"] == password);
  CHECK(file_holding(sb.dir(), password) != "");
}

TEST_CASE("e2e: pg: with a key, no password is in the state's rows", "[pg]") {
  Sandbox sb;
  const std::string workspace = pgtest::unique_name("sealed");
  const std::map<std::string, std::string> env = {{"DBFORM_STATE", pgtest::server_url()},
                                                  {"DBFORM_WORKSPACE", workspace},
                                                  {"DBFORM_STATE_PASSPHRASE", kPassphrase}};
  sb.write("dbform.yaml", manifest({}, {service_yaml("orders"), service_yaml("billing")}));
  RunResult r = sb.apply({}, env);
  INFO(r.describe());
  REQUIRE(r.exit_code == 0);
  RunResult out = sb.run({"output", "--show-secrets", "--format", "json"}, env);
  REQUIRE(out.exit_code == 0);
  std::string rows;
  for (const char* sql : {"SELECT lineage || document FROM dbform_states WHERE workspace = $1",
                          "SELECT entry FROM dbform_journal WHERE workspace = $1"})
    for (const auto& row : pgtest::query_rows(sql, {workspace})) rows += row;
  CHECK(!rows.empty());
  int checked = 0;
  const json outputs = json::parse(out.out);
  for (const auto& [address, values] : outputs.items()) {
    INFO(address << ": " << values.dump());
    REQUIRE(values.value("password", "").size() > 8);
    CHECK(rows.find(values["password"].get<std::string>()) == std::string::npos);
    ++checked;
  }
  CHECK(checked == 2);
}

TEST_CASE("e2e: hostile answers (nested 200,000 deep, 1 GiB decompressed, escape sequences) fail one read each, and the apply completes") {
  auto config = default_sim_config();
  config.faults.deep_answer_every = 2;
  config.faults.huge_answer_every = 3;
  config.faults.escape_statuses = true;
  Sandbox sb(config);
  sb.write("dbform.yaml", manifest({}, {service_yaml("a"), service_yaml("b"), service_yaml("c")}));
  RunResult r = sb.apply({}, {{"DBFORM_LOG", "info"}});
  INFO(r.describe() << "\nfaults: " << sb.sim().fault_counts().dump());
  CHECK(r.exit_code == 0);
  CHECK(sb.sim().fault_counts().value("answer nested 200,000 deep", 0) > 0);
  CHECK(sb.sim().fault_counts().value("answer of 1 GiB once decompressed", 0) > 0);
  CHECK_FALSE(has_terminal_control(r.out));
  CHECK_FALSE(has_terminal_control(r.err));
  json state = sb.state();
  for (const char* name : {"a", "b", "c"}) {
    json rec = find_resource(state, service_address(name));
    CHECK(rec["status"] == "READY");
    CHECK(rec["initial_password"].get<std::string>().size() > 8);
  }
  CHECK(sb.count(kPostService) == 3);
}

TEST_CASE("e2e: an API error that quotes the key or the password shows neither") {
  auto config = default_sim_config();
  config.faults.echo_secrets = true;
  Sandbox sb(config);
  sb.write("dbform.yaml", manifest({}, {service_yaml("orders")}));
  REQUIRE(sb.apply().exit_code == 0);
  const std::string password = "Sup3r-Secret-Passw0rd-\"quoted\"";
  // A service id the API does not know: the call is refused with a 404 that echoes the request.
  json state = sb.state();
  state["resources"][0]["id"] = "gone-service";
  sb.write("dbform.state.json", state.dump());
  RunResult rotate = sb.run({"rotate-password", service_address("orders"), "--password-stdin"}, {}, password + "\n");
  INFO(rotate.describe());
  CHECK(rotate.exit_code == 1);
  CHECK(contains(rotate.err, "ECHO"));
  CHECK_FALSE(contains(rotate.out + rotate.err, "Sup3r-Secret"));
  CHECK_FALSE(contains(rotate.out + rotate.err, kKey));

  RunResult wrong_key = sb.run({"plan", "--refresh"}, {{"DBFORM_API_KEY", "wrong-key-0123456789"}});
  CHECK(wrong_key.exit_code != 0);
  CHECK(contains(wrong_key.err, "ECHO"));
  CHECK_FALSE(contains(wrong_key.out + wrong_key.err, "wrong-key-0123456789"));
}

TEST_CASE("e2e: interpolating an API key into a manifest value is an error that shows no key") {
  Sandbox sb;
  sb.write("dbform.yaml", "version: 1\nprojects:\n  - id: " + kProject + "\n    services:\n      - name: x\n"
                          "        environment_tag: ${DBFORM_API_KEY}\n");
  RunResult r = sb.run({"plan", "--format", "markdown"});
  INFO(r.describe());
  CHECK(r.exit_code == 1);
  CHECK(contains(r.err, "`${DBFORM_API_KEY}` names dbform's own variable `DBFORM_API_KEY`"));
  CHECK_FALSE(contains(r.out + r.err, kKey));
  sb.write("dbform.yaml", "version: 1\nprojects:\n  - id: " + kProject + "\n    services:\n      - name: ${ALIAS}\n");
  RunResult alias = sb.run({"plan"}, {{"DBFORM_VAR_ALIAS", kKey}});
  CHECK(alias.exit_code == 1);
  CHECK(contains(alias.err, "DBFORM_VAR_ALIAS (read by ${ALIAS}) holds the same value as DBFORM_API_KEY"));
  CHECK_FALSE(contains(alias.out + alias.err, kKey));
  CHECK(sb.total_requests() == 0);
}

TEST_CASE("e2e: a manifest file name that is not UTF-8 still gives valid JSON") {
  Sandbox sb;
  fs::create_directories(sb.dir() / "m");
  sb.write("m/caf\xe9.yaml", manifest({}, {service_yaml("orders")}));
  RunResult r = sb.run({"plan", "-f", "m", "--format", "json"});
  INFO(r.describe());
  CHECK(r.exit_code == 0);
  json plan = json::parse(r.out);  // strict: throws on invalid UTF-8
  CHECK(plan["manifests"]["files"][0].get<std::string>().find("\xef\xbf\xbd") != std::string::npos);
}

TEST_CASE("e2e: a serial at its maximum and a port out of range are refused, the state untouched") {
  Sandbox sb;
  sb.write("dbform.yaml", manifest({}, {service_yaml("orders")}));
  REQUIRE(sb.apply().exit_code == 0);
  json state = sb.state();
  const std::string good = sb.read("dbform.state.json");
  state["serial"] = 9007199254740991LL;
  sb.write("dbform.state.json", state.dump());
  sb.write("dbform.yaml", manifest({}, {service_yaml("orders"), service_yaml("billing")}));
  RunResult full = sb.apply();
  INFO(full.describe());
  CHECK(full.exit_code == 1);
  CHECK(contains(full.err, "would pass 9007199254740991"));
  CHECK(sb.count(kPostService) == 1);
  CHECK(json::parse(sb.read("dbform.state.json"))["serial"] == 9007199254740991LL);

  state = json::parse(good);
  state["resources"][0]["endpoint"]["port"] = 4294972728LL;  // 5432 + 2^32: truncated to 5432 before
  sb.write("dbform.state.json", state.dump());
  RunResult port = sb.run({"output"});
  CHECK(port.exit_code == 1);
  CHECK(contains(port.err, "endpoint.port: expected a port number from 1 to 65535"));
}

TEST_CASE("e2e: a symlinked --state is written through to its target, and a dangling one is an error") {
  Sandbox sb;
  fs::create_directories(sb.dir() / "real");
  sb.write("dbform.yaml", manifest({}, {service_yaml("orders")}));
  REQUIRE(sb.apply({"--state", (sb.dir() / "real" / "s.json").string()}).exit_code == 0);
  fs::create_symlink(sb.dir() / "real" / "s.json", sb.dir() / "link.json");
  sb.write("dbform.yaml", manifest({}, {service_yaml("orders"), service_yaml("billing")}));
  RunResult r = sb.apply({"--state", "link.json"});
  INFO(r.describe());
  REQUIRE(r.exit_code == 0);
  CHECK(fs::is_symlink(sb.dir() / "link.json"));
  CHECK(find_resource(sb.state("real/s.json"), service_address("billing")).is_object());
  CHECK(fs::exists(sb.dir() / "real" / "s.json.backup"));

  fs::create_symlink(sb.dir() / "gone" / "s.json", sb.dir() / "dangling.json");
  const long long requests = sb.total_requests();
  RunResult dangling = sb.apply({"--state", "dangling.json"});
  CHECK(dangling.exit_code == 1);
  CHECK(contains(dangling.err, "is a symbolic link to"));
  CHECK(contains(dangling.err, "refusing to read it as no state"));
  CHECK(sb.total_requests() == requests);
  CHECK(fs::is_symlink(sb.dir() / "dangling.json"));
}
