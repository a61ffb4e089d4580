#include <sys/stat.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>

#include "state/codec.h"
#include "state/file_store.h"
#include "state/test_support.h"
#include "util/atomic_file.h"

using namespace dbform;
namespace fs = std::filesystem;

namespace {

struct TempDir {
  fs::path path;
  TempDir() {
    char tmpl[] = "/tmp/dbform-state-test-XXXXXX";
    path = ::mkdtemp(tmpl);
  }
  ~TempDir() { fs::remove_all(path); }
  std::string file(const std::string& name) const { return (path / name).string(); }
};

ResourceRecord service_record(const std::string& name) {
  ResourceRecord r = test::ready_service(name);
  r.last_response = {{"service_id", r.id}};
  return r;
}

std::string slurp(const std::string& path) { return *read_file_if_exists(path); }

}  // namespace

TEST_CASE("state: codec round-trips every field") {
  State s = new_state();
  s.serial = 7;
  s.upsert(service_record("orders"));
  ResourceRecord intent = test::record_of(ResourceKind::Vpc, "p1", "main");
  intent.create_pending = true;
  s.upsert(intent);
  State back = parse_state(serialize_state(s), "mem");
  CHECK(back.lineage == s.lineage);
  CHECK(back.serial == 7);
  REQUIRE(back.resources.size() == 2);
  const ResourceRecord* r = back.find("p1/services/orders");
  REQUIRE(r);
  CHECK(r->id == "svc-orders");
  CHECK(r->endpoint_port == 5432);
  CHECK(r->initial_password == "pw-orders");
  CHECK(r->settings == nlohmann::json({{"cpu_millis", "1000"}}));
  CHECK(back.find("p1/vpcs/main")->create_pending);
  CHECK(serialize_state(back) == serialize_state(s));
}

TEST_CASE("state: with_serial gives the document of the same state at another serial, whatever its records hold") {
  State s = new_state();
  s.serial = 41;
  s.refreshed = RefreshStamp{"2026-11-28T20:00:00Z", "apply", 40, std::nullopt};  // a nested "serial" of its own
  ResourceRecord r = service_record("serial");
  r.last_response = {{"serial", 99}, {"note", "\n  \"serial\": 7,\n"}};  // a top-level key's text, escaped
  s.upsert(r);
  const std::string at_41 = serialize_state(s);
  s.serial = 40;
  CHECK(with_serial(at_41, 40) == serialize_state(s));
  s.serial = 1000;
  CHECK(with_serial(at_41, 1000) == serialize_state(s));
  CHECK_THROWS_WITH(with_serial(at_41, -1), Catch::Contains("serial"));
}

TEST_CASE("state: unusable documents are refused with a clear message") {
  auto refused = [](const std::string& text) {
    try {
      parse_state(text, "x.json");
    } catch (const StateError& e) {
      return std::string(e.what());
    }
    return std::string();
  };
  CHECK_THAT(refused("{not json"), Catch::Contains("x.json: not valid JSON"));
  CHECK_THAT(refused(R"({"format":"terraform"})"), Catch::Contains("not a dbform state"));
  CHECK_THAT(refused(R"({"format":"dbform-state","version":99,"lineage":"l","serial":1,"resources":[]})"),
             Catch::Contains("newer dbform"));
  CHECK_THAT(refused(R"({"format":"dbform-state","version":1,"lineage":"l","serial":-1,"resources":[]})"),
             Catch::Contains("serial"));
  CHECK_THAT(
      refused(R"({"format":"dbform-state","version":1,"lineage":"l","serial":1,"resources":[{"address":"p/services/a","project_id":"p","kind":"service","name":"b"}]})"),
      Catch::Contains("resources[0].address"));
  CHECK_THAT(
      refused(R"({"format":"dbform-state","version":1,"lineage":"l","serial":1,"resources":[{"address":"p/services/a","project_id":"p","kind":"service","name":"a","endpoint":{"port":"x"}}]})"),
      Catch::Contains("resources[0].endpoint.port: expected a port number from 1 to 65535"));
  CHECK_THAT(
      refused(R"({"format":"dbform-state","version":1,"lineage":"l","serial":1,"resources":[{"address":"p/services/a","project_id":"p","kind":"service","name":"a","endpoint":{"port":4294972728}}]})"),
      Catch::Contains("resources[0].endpoint.port: expected a port number from 1 to 65535"));
  CHECK_THAT(refused(R"({"format":"dbform-state","version":1,"lineage":"l","serial":9223372036854775807,"resources":[]})"),
             Catch::Contains("\"serial\" must be an integer from 0 to 9007199254740991"));
  CHECK_THAT(refused("{\"format\":\"dbform-state\",\"x\":" + std::string(100000, '[') + std::string(100000, ']') + "}"),
             Catch::Contains("nested more than 64 levels deep"));
}

TEST_CASE("state: a serial at its maximum is not written past it, and a port out of range is not recorded") {
  State s = new_state();
  s.serial = kMaxSerial;
  CHECK_THROWS_WITH(journal_entry(s, {}), Catch::Contains("would pass 9007199254740991"));
  CHECK_NOTHROW(serialize_state(s));
  ++s.serial;
  CHECK_THROWS_WITH(serialize_state(s), Catch::Contains("would pass"));
  State p = new_state();
  ResourceRecord r = service_record("a");
  r.endpoint_port = 70000;
  p.upsert(r);
  CHECK_THROWS_WITH(serialize_state(p), Catch::Contains("refusing to record port 70000"));
}

TEST_CASE("state: file store writes atomically with mode 0600, a backup and a growing serial") {
  TempDir dir;
  FileStateStore store(dir.file("s.json"));
  CHECK_FALSE(store.read());
  State s = new_state();
  s.upsert(service_record("a"));
  store.write(s);
  CHECK(s.serial == 1);
  struct stat st {};
  REQUIRE(::stat(dir.file("s.json").c_str(), &st) == 0);
  CHECK((st.st_mode & 0777) == 0600);
  CHECK_FALSE(fs::exists(dir.file("s.json.backup")));
  std::string first = slurp(dir.file("s.json"));

  s.upsert(service_record("b"));
  store.write(s);
  CHECK(s.serial == 2);
  CHECK(slurp(dir.file("s.json.backup")) == first);
  std::vector<std::string> left;  // no temporary file stays behind
  for (const auto& entry : fs::directory_iterator(dir.file("")))
    if (entry.path().filename().string().find(".tmp") != std::string::npos) left.push_back(entry.path());
  CHECK(left.empty());
  FileStateStore again(dir.file("s.json"));
  auto read = again.read();
  REQUIRE(read);
  CHECK(read->serial == 2);
  CHECK(read->resources.size() == 2);
}

TEST_CASE("state: a write after someone else's write is refused and overwrites nothing") {
  TempDir dir;
  FileStateStore a(dir.file("s.json")), b(dir.file("s.json"));
  State s = new_state();
  a.write(s);
  State sa = *a.read(), sb = *b.read();
  sa.upsert(service_record("from-a"));
  a.write(sa);
  std::string after_a = slurp(dir.file("s.json"));
  sb.upsert(service_record("from-b"));
  CHECK_THROWS_WITH(b.write(sb), Catch::Contains("changed since it was read"));
  CHECK(slurp(dir.file("s.json")) == after_a);
}

TEST_CASE("state: a corrupt state file is refused and left byte for byte") {
  TempDir dir;
  std::string garbage = "{\"format\": \"dbform-state\", truncated";
  std::ofstream(dir.file("s.json")) << garbage;
  FileStateStore store(dir.file("s.json"));
  CHECK_THROWS_AS(store.read(), StateError);
  CHECK(slurp(dir.file("s.json")) == garbage);
}

TEST_CASE("state: the lock refuses a second holder, names the first, and is freed on release") {
  TempDir dir;
  FileStateStore a(dir.file("s.json")), b(dir.file("s.json"));
  {
    auto held = a.lock("apply", Duration(0));
    try {
      b.lock("apply", Duration(0));
      FAIL("second lock was granted");
    } catch (const LockError& e) {
      std::string msg = e.what();
      CHECK_THAT(msg, Catch::Contains("pid " + std::to_string(::getpid())));
      CHECK_THAT(msg, Catch::Contains("`apply`"));
      CHECK_THAT(msg, Catch::Contains("--lock-timeout"));
    }
  }
  CHECK(b.lock("state rm", Duration(0)) != nullptr);
}

TEST_CASE("state: find and remove keep the address index right") {
  State s = new_state();
  for (int i = 0; i < 100; ++i) s.upsert(service_record("s" + std::to_string(i)));
  CHECK(s.find("p1/services/s42")->id == "svc-s42");
  CHECK(s.remove("p1/services/s10"));
  CHECK_FALSE(s.remove("p1/services/s10"));
  CHECK_FALSE(s.find("p1/services/s10"));
  CHECK(s.find("p1/services/s99")->id == "svc-s99");
  CHECK(s.resources.size() == 99);
}

namespace {

std::vector<std::string> lines_of(const std::string& path) {
  std::vector<std::string> out;
  std::ifstream in(path);
  for (std::string line; std::getline(in, line);) out.push_back(line);
  return out;
}

// A state of `count` services written whole, then `store` ready for changes.
State written_state(FileStateStore& store, int count) {
  State s = new_state();
  for (int i = 0; i < count; ++i) s.upsert(service_record("s" + std::to_string(i)));
  store.write(s);
  return s;
}

// A document of `written` records and a journal of one more (`journaled`).
State journaled_state(FileStateStore& store, int written = 1, const std::string& journaled = "journaled") {
  State s = written_state(store, written);
  s.upsert(service_record(journaled));
  store.write_changes(s, {"p1/services/" + journaled});
  return s;
}

}  // namespace

TEST_CASE("state: file store journal: a change costs its own size, not the state's") {
  TempDir dir;
  FileStateStore store(dir.file("s.json"));
  State s = written_state(store, 1000);
  const auto document = fs::file_size(dir.file("s.json"));
  s.find("p1/services/s7")->status = "CONFIGURING";
  store.write_changes(s, {"p1/services/s7"});
  CHECK(fs::file_size(dir.file("s.json")) == document);  // the document is not rewritten
  CHECK(fs::file_size(dir.file("s.json.journal")) < 1024);
  CHECK(lines_of(dir.file("s.json.journal")).size() == 1);
  CHECK(FileStateStore(dir.file("s.json")).read()->find("p1/services/s7")->status == "CONFIGURING");
}

TEST_CASE("state: file store journal: a torn last append is dropped and written over, never replayed") {
  TempDir dir;
  FileStateStore store(dir.file("s.json"));
  State s = journaled_state(store, 2, "acknowledged");
  {
    // A crash in the middle of the next append: half a line, no newline.
    std::ofstream torn(dir.file("s.json.journal"), std::ios::app);
    torn << R"({"lineage":")" << s.lineage << R"(","serial":4,"upsert":[{"address":"p1/services/ha)";
  }
  FileStateStore after_crash(dir.file("s.json"));
  State read = *after_crash.read();
  CHECK(read.serial == s.serial);
  CHECK(read.find("p1/services/acknowledged"));
  CHECK(read.resources.size() == 3);

  read.upsert(service_record("next"));
  after_crash.write_changes(read, {"p1/services/next"});
  for (const auto& line : lines_of(dir.file("s.json.journal"))) CHECK_NOTHROW(nlohmann::json::parse(line));
  State again = *FileStateStore(dir.file("s.json")).read();
  CHECK(again.find("p1/services/next"));
  CHECK(again.serial == read.serial);
}

TEST_CASE("state: file store journal: a damaged entry is refused without quoting it, and nothing is touched") {
  TempDir dir;
  FileStateStore store(dir.file("s.json"));
  State s = journaled_state(store, 1, "second");
  {
    std::ofstream damaged(dir.file("s.json.journal"), std::ios::app);
    damaged << R"({"lineage":")" << s.lineage << R"(","serial":3,"upsert":[{"initial_password":"pw-leak"}] oops)" << "\n";
  }
  const std::string journal = slurp(dir.file("s.json.journal"));
  FileStateStore reader(dir.file("s.json"));
  std::string message;
  try {
    reader.read();
  } catch (const StateError& e) {
    message = e.what();
  }
  CHECK_THAT(message, Catch::Contains("s.json.journal line 2") && !Catch::Contains("pw-leak"));
  CHECK(slurp(dir.file("s.json.journal")) == journal);
}

TEST_CASE("state: file store journal: compaction folds it in, and the backup is the state as it stood") {
  TempDir dir;
  FileStateStore store(dir.file("s.json"));
  State s = journaled_state(store);
  const std::string before = serialize_state(*FileStateStore(dir.file("s.json")).read());
  store.compact(s);
  CHECK_FALSE(fs::exists(dir.file("s.json.journal")));
  CHECK(slurp(dir.file("s.json")) == serialize_state(s));
  CHECK(slurp(dir.file("s.json.backup")) == before);  // the journaled record is in the backup too
  // A journal whose entries the document already holds (a crash between the compaction's rename
  // and the journal's removal) is skipped on reading.
  std::ofstream(dir.file("s.json.journal"))
      << R"({"lineage":")" << s.lineage << R"(","serial":)" << s.serial << R"(,"upsert":[],"remove":["p1/services/s0"]})"
      << "\n";
  CHECK(FileStateStore(dir.file("s.json")).read()->find("p1/services/s0"));
}

TEST_CASE("state: file store journal: after a failed append, the fold's backup is what was stored, not what was in memory") {
  TempDir dir;
  FileStateStore store(dir.file("s.json"));
  State s = journaled_state(store);
  const std::string stored = serialize_state(*FileStateStore(dir.file("s.json")).read());
  // A journal with another name (a hard link) is never written: this append fails.
  fs::create_hard_link(dir.file("s.json.journal"), dir.file("other-name"));
  s.upsert(service_record("unsaved"));
  CHECK_THROWS(store.write_changes(s, {"p1/services/unsaved"}));
  fs::remove(dir.file("other-name"));
  store.compact(s);
  CHECK(slurp(dir.file("s.json.backup")) == stored);  // not the memory, which holds `unsaved`
}

TEST_CASE("state: a read replica set and a peering are recorded in their parent, which a rename carries along") {
  State s = new_state();
  s.upsert(service_record("orders"));
  ResourceRecord set = test::record_of(ResourceKind::ReplicaSet, "p1", "reporting", "orders");
  set.id = "rs-1";
  s.upsert(set);
  CHECK(set.address == "p1/services/orders/replicas/reporting");
  CHECK(resource_address("p1", ResourceKind::Peering, "vpc-0abc", "main") == "p1/vpcs/main/peerings/vpc-0abc");

  State back = parse_state(serialize_state(s), "mem");
  REQUIRE(back.find(set.address));
  CHECK(back.find(set.address)->parent == "orders");
  CHECK(serialize_state(back) == serialize_state(s));

  auto refused = [](const std::string& record) {
    try {
      parse_state(R"({"format":"dbform-state","version":1,"lineage":"l","serial":1,"resources":[)" + record + "]}", "x.json");
    } catch (const StateError& e) {
      return std::string(e.what());
    }
    return std::string();
  };
  CHECK_THAT(refused(R"({"address":"p/services/o/replicas/r","project_id":"p","kind":"replica_set","name":"r"})"),
             Catch::Contains("resources[0].parent: expected the name of the service it is in"));
  CHECK_THAT(refused(R"({"address":"p/services/x/replicas/r","project_id":"p","kind":"replica_set","parent":"o","name":"r"})"),
             Catch::Contains("\"p/services/o/replicas/r\""));
  CHECK_THAT(refused(R"({"address":"p/services/a","project_id":"p","kind":"service","parent":"o","name":"a"})"),
             Catch::Contains("resources[0].parent"));
  CHECK_THAT(refused(R"({"address":"p/widgets/a","project_id":"p","kind":"widget","name":"a"})"),
             Catch::Contains("\"replica_set\" or \"peering\""));

  const auto changed = move_record(back, "p1/services/orders", "p1/services/sales", "sales");
  CHECK_FALSE(back.find("p1/services/orders/replicas/reporting"));
  REQUIRE(back.find("p1/services/sales/replicas/reporting"));
  CHECK(back.find("p1/services/sales/replicas/reporting")->parent == "sales");
  CHECK(std::count(changed.begin(), changed.end(), "p1/services/sales/replicas/reporting") == 1);
}

// A whole rewrite to another key that was killed before it removed the journal leaves lines in the
// old form, no newer than its document: skipped. A line in another form newer than the document was
// not left so (a hand edit, a journal from another state): skipping it would lose a change.
TEST_CASE("state: a journal line in another key's form is skipped when no newer than its document, refused when newer") {
  TempDir dir;
  auto key_a = std::make_shared<StateCipher>(StateKey::raw(std::string(32, 'a'), "key a"));
  StateCipher key_b(StateKey::raw(std::string(32, 'b'), "key b"));
  FileStateStore store(dir.file("dbform.state.json"));
  store.set_cipher(key_a);
  State s = new_state();
  s.upsert(service_record("orders"));
  store.write(s);  // serial 1, sealed with key a
  auto append = [&](const std::string& line) {
    std::ofstream(dir.file("dbform.state.json.journal"), std::ios::app) << line << "\n";
  };

  State older = new_state();  // serial 0: its line makes serial 1, the document's
  older.lineage = s.lineage;
  older.upsert(service_record("orders"));
  append(journal_entry(older, {"p1/services/orders"}, key_b));
  FileStateStore reader(dir.file("dbform.state.json"));
  reader.set_cipher(key_a);
  auto read = reader.read();
  REQUIRE(read);
  CHECK(read->serial == 1);

  State newer = s;  // serial 1: its line makes serial 2
  newer.find("p1/services/orders")->status = "PAUSED";
  append(journal_entry(newer, {"p1/services/orders"}, key_b));
  FileStateStore again(dir.file("dbform.state.json"));
  again.set_cipher(key_a);
  try {
    again.read();
    FAIL("a newer line in another key's form was skipped");
  } catch (const StateError& e) {
    const std::string what = e.what();
    CHECK_THAT(what, Catch::Contains("line 2 (serial 2) is sealed with key id " + key_b.sealing_key_id()));
    CHECK_THAT(what, Catch::Contains("(serial 1) sealed with key id " + key_a->sealing_key_id()));
    CHECK_THAT(what, Catch::Contains("newer than the document"));
  }
}
