// Every whole rewrite of the state survives SIGKILL at any point (docs/safety.md): compaction,
// `state encrypt | decrypt | rekey | push | rm` and import. Each command first runs once under
// strace to count its file-changing system calls; then, for every one of them, a fresh copy of the
// state is rewritten again by the same command, killed (strace delivers SIGKILL just before that
// call is made). Between two such calls nothing on disk changes, so this kills it at every point
// that can leave a different file behind. Afterwards the state must read, with the key it had before
// or the new one, holding every record as before or as after, and a read with the wrong key must
// name the key it needs.
#include <signal.h>

#include <fstream>
#include <set>

#include "common.h"
#include "state/cipher.h"
#include "state/codec.h"
#include "state/file_store.h"
#include "util/text.h"

using namespace e2e;

namespace {

// The calls that create, write, rename, link, truncate or remove a file, or make it durable.
const std::vector<std::string> kChangingCalls = {"openat", "write",    "pwrite64",  "fsync",   "fdatasync",
                                                 "rename", "renameat", "renameat2", "unlink",  "unlinkat",
                                                 "link",   "linkat",   "ftruncate", "fchmod",  "fchmodat"};

const std::string kOldPassphrase = "the old passphrase of this state";
const std::string kNewPassphrase = "the new passphrase of this state";

// What a state holds that must survive: every record's address, id and passwords.
std::set<std::string> records_of(const dbform::State& s) {
  std::set<std::string> out;
  for (const auto& r : s.resources)
    out.insert(r.address + " " + r.id + " " + r.initial_password.text() + " " + r.pending_password.text());
  return out;
}

// The state in `dir`, read with one of `keys` (a passphrase, or "" for none): the records and the
// key that opened it (every password opened, none left sealed). Fails the test when no key opens
// it; a read with a wrong key must say which key it needs.
// One cipher per passphrase for the whole test: a key keeps what scrypt derived from it for each salt,
// so the hundreds of reads below derive it once per salt instead of once per read.
std::shared_ptr<dbform::StateCipher> cipher_of(const std::string& passphrase) {
  static std::map<std::string, std::shared_ptr<dbform::StateCipher>> ciphers;
  auto& c = ciphers[passphrase];
  if (!c) c = std::make_shared<dbform::StateCipher>(dbform::StateKey::passphrase(passphrase, "test"));
  return c;
}

// Whether any record holds a password sealed and not opened (the state read without its key).
bool holds_sealed_passwords(const dbform::State& state) {
  for (const auto& r : state.resources)
    if (r.initial_password.is_sealed() || r.pending_password.is_sealed()) return true;
  return false;
}

std::pair<std::set<std::string>, std::string> read_with_any(const fs::path& dir, const std::vector<std::string>& keys) {
  std::string errors;
  for (const auto& key : keys) {
    dbform::FileStateStore store((dir / "dbform.state.json").string());
    if (!key.empty()) store.set_cipher(cipher_of(key));
    try {
      auto state = store.read();
      REQUIRE(state);
      // Read without the key its passwords are sealed: that key does not open it whole.
      if (holds_sealed_passwords(*state)) {
        errors += "\n  with " + (key.empty() ? std::string("no key") : key) + ": passwords sealed with key id " +
                  state->secrets_key_id;
        continue;
      }
      return {records_of(*state), key};
    } catch (const dbform::StateError& e) {
      const std::string what = e.what();
      // A sealed state read without its key, or with another, names the key id it is sealed with.
      if (contains(what, "sealed") || contains(what, "encrypted")) CHECK(contains(what, "key id"));
      errors += "\n  with " + (key.empty() ? std::string("no key") : key) + ": " + what;
    }
  }
  FAIL("no key reads the state:" << errors);
  return {};
}

void copy_state(const fs::path& from, const fs::path& to) {
  fs::remove_all(to);
  fs::create_directories(to);
  for (const auto& entry : fs::directory_iterator(from))
    if (entry.is_regular_file()) fs::copy_file(entry.path(), to / entry.path().filename());
}

// How often `command` (a shell command run in `dir`) makes each of kChangingCalls.
std::map<std::string, int> count_calls(Sandbox& sb, const fs::path& dir, const std::string& command,
                                       const std::map<std::string, std::string>& env) {
  const fs::path trace = sb.dir() / "trace.txt";
  RunResult r = sb.run_shell("cd '" + dir.string() + "' && strace -f -qq -o '" + trace.string() + "' -e trace=" +
                                 dbform::join(kChangingCalls, ",") + " " + command,
                             env);
  INFO(r.describe());
  REQUIRE(r.exit_code == 0);
  std::map<std::string, int> counts;
  std::ifstream in(trace);
  for (std::string line; std::getline(in, line);)
    for (const auto& call : kChangingCalls)
      if (contains(line, " " + call + "(") || line.rfind(call + "(", 0) == 0) ++counts[call];
  return counts;
}

struct Rewrite {
  std::string name;
  std::string command;                     // run in a copy of the state's directory; "$DBFORM" is dbform
  std::map<std::string, std::string> env;  // its key variables
  std::vector<std::string> keys;           // the keys the state may be read with afterwards
  // Also read through the binary (`state list`), with these passphrases ("" for none): one must
  // open it. The in-process read above is this build's reader, whatever binary wrote.
  std::vector<std::string> binary_keys = {};
};

// Kills `rewrite` before every file-changing call it makes, each time on a fresh copy of the
// state in `template_dir`; checks that the state reads as before or as after every time.
void kill_everywhere(Sandbox& sb, const fs::path& template_dir, const Rewrite& rewrite) {
  const fs::path work = sb.dir() / "work";
  copy_state(template_dir, work);
  const auto before = read_with_any(work, rewrite.keys).first;
  auto stored = [&] {
    return sb.read("work/dbform.state.json") +
           (sb.exists("work/dbform.state.json.journal") ? sb.read("work/dbform.state.json.journal") : "");
  };
  const std::string stored_before = stored();
  const auto counts = count_calls(sb, work, rewrite.command, rewrite.env);
  const auto after = read_with_any(work, rewrite.keys).first;
  INFO(rewrite.name);
  REQUIRE(stored() != stored_before);  // the command really writes the state
  int kills = 0;
  for (const auto& [call, count] : counts) {
    for (int n = 1; n <= count; ++n) {
      copy_state(template_dir, work);
      RunResult r = sb.run_shell("cd '" + work.string() + "' && strace -f -qq -o /dev/null -e trace=" + call +
                                     " -e inject=" + call + ":signal=KILL:when=" + std::to_string(n) + " " +
                                     rewrite.command,
                                 rewrite.env);
      INFO(rewrite.name << ": killed before " << call << " #" << n << "\n" << r.describe());
      kills += r.exit_code != 0;
      const auto [records, key] = read_with_any(work, rewrite.keys);
      CHECK((records == before || records == after));
      int opened = 0;
      std::string errors;
      // One key that opens it is enough (each try costs the binary a key derivation).
      for (const auto& passphrase : rewrite.binary_keys) {
        RunResult list = sb.run_shell("cd '" + work.string() + "' && \"$DBFORM\" state list",
                                      {{"DBFORM_STATE_PASSPHRASE", passphrase}});
        opened += list.exit_code == 0;
        errors += list.err;
        if (opened) break;
      }
      INFO(errors);
      if (!rewrite.binary_keys.empty()) CHECK(opened > 0);
    }
  }
  INFO(rewrite.name);
  CHECK(kills > 0);
}

// Each rewrite is a test case of its own, so that ctest runs them side by side (each kills its
// command at every point, which takes a while).
const std::string kDbform = "\"$DBFORM\"";
const std::map<std::string, std::string> kOldKey = {{"DBFORM_STATE_PASSPHRASE", kOldPassphrase}};
const std::map<std::string, std::string> kRekeyKeys = {{"DBFORM_STATE_PASSPHRASE", kOldPassphrase},
                                                       {"DBFORM_STATE_NEW_PASSPHRASE", kNewPassphrase}};

// The state every rewrite below starts from: the base applied, with a journal to fold (a password
// change appended to it), copied to `plain` without its manifest.
fs::path plain_state(Sandbox& sb) {
  apply_base(sb);
  REQUIRE(sb.run({"rotate-password", "billing"}).exit_code == 0);
  REQUIRE(sb.exists("dbform.state.json.journal"));
  const fs::path plain = sb.dir() / "plain";
  copy_state(sb.dir(), plain);
  fs::remove(plain / "dbform.yaml");
  return plain;
}

std::map<std::string, std::string> api_of(Sandbox& sb) {
  return {{"DBFORM_API_URL", sb.api_url()}, {"DBFORM_API_KEY", kKey}};
}

// `plain`, sealed with the old key.
fs::path sealed_state(Sandbox& sb, const fs::path& plain) {
  const fs::path sealed = sb.dir() / "sealed";
  copy_state(plain, sealed);
  REQUIRE(sb.run_shell("cd '" + sealed.string() + "' && " + kDbform + " state encrypt", kOldKey).exit_code == 0);
  return sealed;
}

#define REWRITE_KILL_CASE(what) \
  TEST_CASE("e2e: every whole rewrite of the state, killed before any file-changing call, leaves it readable: " what)
#define SKIP_WHEN_SANITIZED()                                                          \
  if (kSanitized) {                                                                    \
    WARN("not run in a sanitized build: LeakSanitizer does not run under strace");    \
    return;                                                                            \
  }

}  // namespace

REWRITE_KILL_CASE("state rm and state mv") {
  SKIP_WHEN_SANITIZED();
  Sandbox sb;
  const fs::path plain = plain_state(sb);
  kill_everywhere(sb, plain, {"state rm", kDbform + " state rm analytics", {}, {""}});
  kill_everywhere(sb, plain, {"state mv", kDbform + " state mv analytics reports", {}, {""}});
}

REWRITE_KILL_CASE("compaction") {
  SKIP_WHEN_SANITIZED();
  Sandbox sb;
  const fs::path plain = plain_state(sb);
  // The journal folded into the document at the end of an apply (one that prunes `analytics`: the
  // first run deletes it, the later ones find it gone and forget it just the same).
  sb.write("plain/dbform.yaml", manifest({vpc_yaml("main")}, {service_yaml("orders"), service_yaml("billing")}));
  kill_everywhere(sb, plain,
                  {"compaction", kDbform + " apply --auto-approve --prune --poll-interval 50ms", api_of(sb), {""}});
}

REWRITE_KILL_CASE("state encrypt") {
  SKIP_WHEN_SANITIZED();
  Sandbox sb;
  const fs::path plain = plain_state(sb);
  kill_everywhere(sb, plain, {"state encrypt", kDbform + " state encrypt", kOldKey, {"", kOldPassphrase}});
}

REWRITE_KILL_CASE("state rekey") {
  SKIP_WHEN_SANITIZED();
  Sandbox sb;
  const fs::path sealed = sealed_state(sb, plain_state(sb));
  kill_everywhere(sb, sealed, {"state rekey", kDbform + " state rekey", kRekeyKeys, {kOldPassphrase, kNewPassphrase}});
}

REWRITE_KILL_CASE("state decrypt") {
  SKIP_WHEN_SANITIZED();
  Sandbox sb;
  const fs::path sealed = sealed_state(sb, plain_state(sb));
  kill_everywhere(sb, sealed, {"state decrypt", kDbform + " state decrypt", kOldKey, {kOldPassphrase, ""}});
}

REWRITE_KILL_CASE("state push") {
  SKIP_WHEN_SANITIZED();
  Sandbox sb;
  const fs::path plain = plain_state(sb);
  // A push of an older copy with one record fewer, over the state.
  const fs::path pushed = sb.dir() / "pushed";
  copy_state(plain, pushed);
  REQUIRE(sb.run_shell("cd '" + pushed.string() + "' && " + kDbform + " state rm orders").exit_code == 0);
  fs::copy_file(pushed / "dbform.state.json", plain / "other.json");
  kill_everywhere(sb, plain, {"state push", kDbform + " state push --force other.json", {}, {""}});
}

REWRITE_KILL_CASE("import") {
  SKIP_WHEN_SANITIZED();
  Sandbox sb;
  const fs::path plain = plain_state(sb);
  // An import of a database made in the console.
  const std::string id = console_service(sb, {{"name", "legacy"}, {"region_code", "us-east-1"}});
  sb.write("plain/dbform.yaml", base_manifest({"legacy"}));  // import records declared resources only
  kill_everywhere(sb, plain, {"import", kDbform + " import " + kProject + "/services/legacy " + id, api_of(sb), {""}});
}

namespace {

// A rekey of a sealed state whose journal holds lines (sealed with the old key)
// at the time, killed everywhere, the last step (the journal's removal) included: the document is
// then under the new key and the journal's lines under the old, and the state must still read.
fs::path sealed_with_journal(Sandbox& sb) {
  apply_base(sb);
  REQUIRE(sb.run({"state", "encrypt"}, kOldKey).exit_code == 0);
  REQUIRE_FALSE(sb.exists("dbform.state.json.journal"));
  // A password change appended to the journal, sealed with the old key.
  REQUIRE(sb.run({"rotate-password", "billing"}, kOldKey).exit_code == 0);
  REQUIRE(sb.exists("dbform.state.json.journal"));
  const fs::path sealed = sb.dir() / "sealed";
  copy_state(sb.dir(), sealed);
  fs::remove(sealed / "dbform.yaml");
  return sealed;
}

}  // namespace

TEST_CASE("e2e: state rekey of a state whose journal holds lines, killed before any file-changing call, leaves it readable") {
  SKIP_WHEN_SANITIZED();
  Sandbox sb;
  kill_everywhere(sb, sealed_with_journal(sb),
                  {"state rekey with a journal", kDbform + " state rekey", kRekeyKeys, {kOldPassphrase, kNewPassphrase},
                   {kOldPassphrase, kNewPassphrase}});
}

TEST_CASE("e2e: state decrypt of a state whose journal holds lines, killed before any file-changing call, leaves it readable") {
  SKIP_WHEN_SANITIZED();
  Sandbox sb;
  kill_everywhere(sb, sealed_with_journal(sb),
                  {"state decrypt with a journal", kDbform + " state decrypt", kOldKey, {kOldPassphrase, ""},
                   {kOldPassphrase, ""}});
}

namespace {

// A rewrite killed at its last step, the journal's removal, leaves the journal's
// lines beside the rewritten document in the old form: in clear after `state encrypt`, sealed with
// the old key after `state rekey`. Both still hold the rotated password. The same command run again
// must remove (or reseal) them: afterwards no file beside the state holds the password in clear, no
// journal line is sealed with the old key, and the state opens with the new key.
// `password`: the password the journal's line records.
void killed_at_journal_removal(Sandbox& sb, const fs::path& template_dir, const std::string& command,
                               const std::map<std::string, std::string>& env, const std::string& new_passphrase,
                               const std::string& password) {
  const fs::path work = sb.dir() / "work";
  copy_state(template_dir, work);
  const std::string journal = (work / "dbform.state.json.journal").string();
  // Which unlink (or unlinkat) of the run removes the journal.
  const fs::path trace = sb.dir() / "unlinks.txt";
  RunResult traced = sb.run_shell("cd '" + work.string() + "' && strace -f -qq -o '" + trace.string() +
                                      "' -e trace=unlink,unlinkat " + command,
                                  env);
  INFO(traced.describe());
  REQUIRE(traced.exit_code == 0);
  std::string call;
  int nth = 0;
  std::map<std::string, int> seen;
  std::ifstream in(trace);
  for (std::string line; std::getline(in, line);) {
    const std::string name = contains(line, "unlinkat(") ? "unlinkat" : contains(line, "unlink(") ? "unlink" : "";
    if (name.empty()) continue;
    ++seen[name];
    if (contains(line, "dbform.state.json.journal\"")) call = name, nth = seen[name];
  }
  REQUIRE(nth > 0);

  copy_state(template_dir, work);
  RunResult killed = sb.run_shell("cd '" + work.string() + "' && strace -f -qq -o /dev/null -e trace=" + call +
                                      " -e inject=" + call + ":signal=KILL:when=" + std::to_string(nth) + " " + command,
                                  env);
  INFO(killed.describe());
  REQUIRE(killed.exit_code != 0);
  REQUIRE(sb.exists("work/dbform.state.json.journal"));  // what the kill left
  const std::string left = sb.read("work/dbform.state.json.journal");

  RunResult again = sb.run_shell("cd '" + work.string() + "' && " + command, env);
  INFO(again.describe());
  CHECK(again.exit_code == 0);
  CHECK(!contains(again.all(), password));
  // No file beside the state holds the password in clear, and the journal (if any) is not the one left.
  for (const auto& entry : fs::directory_iterator(work)) {
    INFO(entry.path());
    CHECK(!contains(sb.read(entry.path().lexically_relative(sb.dir()).string()), password));
  }
  if (sb.exists("work/dbform.state.json.journal")) CHECK(sb.read("work/dbform.state.json.journal") != left);
  // The state opens with the new key, the password as recorded.
  const auto [records, key] = read_with_any(work, {new_passphrase});
  CHECK(key == new_passphrase);
  bool found = false;
  for (const auto& record : records) found = found || contains(record, password);
  CHECK(found);
}

// The password the journal's last line records for billing (the rotation plain_state and
// sealed_with_journal make), as the state in `dir` reads with `passphrase`.
std::string billing_password(const fs::path& dir, const std::string& passphrase) {
  dbform::FileStateStore store((dir / "dbform.state.json").string());
  if (!passphrase.empty()) store.set_cipher(cipher_of(passphrase));
  auto state = store.read();
  REQUIRE(state);
  for (const auto& r : state->resources)
    if (r.address == service_address("billing")) return r.initial_password.text();
  FAIL("no billing in " << dir);
  return "";
}

}  // namespace

TEST_CASE("e2e: state encrypt killed at the journal's removal, run again, leaves no password in clear beside the "
          "sealed state") {
  SKIP_WHEN_SANITIZED();
  Sandbox sb;
  const fs::path plain = plain_state(sb);
  const std::string password = billing_password(plain, "");
  REQUIRE(contains(sb.read("plain/dbform.state.json.journal"), password));  // in clear in the journal
  killed_at_journal_removal(sb, plain, kDbform + " state encrypt", kOldKey, kOldPassphrase, password);
}

TEST_CASE("e2e: state rekey killed at the journal's removal, run again, leaves no journal line under the old key") {
  SKIP_WHEN_SANITIZED();
  Sandbox sb;
  const fs::path sealed = sealed_with_journal(sb);
  const std::string password = billing_password(sealed, kOldPassphrase);
  killed_at_journal_removal(sb, sealed, kDbform + " state rekey", kRekeyKeys, kNewPassphrase, password);
  // No line is left that the old key opens.
  if (sb.exists("work/dbform.state.json.journal"))
    CHECK(!contains(sb.read("work/dbform.state.json.journal"), cipher_of(kOldPassphrase)->sealing_key_id()));
}
