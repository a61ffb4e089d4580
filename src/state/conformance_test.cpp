// One suite, every state backend: what the commands and the apply engine rely on must hold for the
// state file and for PostgreSQL alike. Each case runs once per backend (GENERATE).
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <chrono>
#include <filesystem>
#include <fstream>

#include "error_of.h"
#include "pg/test_server.h"
#include "state/codec.h"
#include "state/file_store.h"
#include "state/pg_secrets.h"
#include "state/test_support.h"
#include "util/json_limits.h"
#include "state/pg_store.h"
#include "util/atomic_file.h"

using namespace dbform;
namespace fs = std::filesystem;

namespace {

// A stored state that several clients open, and raw access to it for what only a person or a
// crash would do (hand edits).
class Backend {
 public:
  virtual ~Backend() = default;
  // Another client of the same stored state, as another process would open it.
  virtual std::unique_ptr<StateStore> open() = 0;
  // The stored document, byte for byte; nullopt when there is none.
  virtual std::optional<std::string> raw() = 0;
  // Every byte stored for this state: document, backup and journal.
  virtual std::string everything_stored() = 0;
  // Replaces the stored document by `text`, as a careless hand edit would.
  virtual void put_raw(const std::string& text) = 0;
  // Returns once the backend has noticed that a lock holder died (the kernel drops an flock
  // before the parent can reap the child; a server needs to see the connection close).
  virtual void settle_after_crash() {}
};

class FileBackend : public Backend {
 public:
  FileBackend() {
    char tmpl[] = "/tmp/dbform-conformance-XXXXXX";
    dir_ = ::mkdtemp(tmpl);
    path_ = (dir_ / "dbform.state.json").string();
  }
  ~FileBackend() override { fs::remove_all(dir_); }
  std::unique_ptr<StateStore> open() override { return std::make_unique<FileStateStore>(path_); }
  std::optional<std::string> raw() override { return read_file_if_exists(path_); }
  std::string everything_stored() override {
    std::string all;
    for (const auto& entry : fs::directory_iterator(dir_)) all += read_file_if_exists(entry.path()).value_or("");
    return all;
  }
  void put_raw(const std::string& text) override { std::ofstream(path_, std::ios::trunc) << text; }

 private:
  fs::path dir_;
  std::string path_;
};

class PgBackend : public Backend {
 public:
  PgBackend() : url_(pgtest::server_url()), workspace_(pgtest::unique_name("conformance")) {}
  std::unique_ptr<StateStore> open() override { return std::make_unique<PgStateStore>(url_, workspace_); }
  // The document with its passwords put back from dbform_secrets: the state as a file would hold it.
  std::optional<std::string> raw() override {
    dbform::PgConnection c(url_);
    auto r = c.exec("SELECT document FROM dbform_states WHERE workspace = $1", {workspace_});
    if (r.rows.empty()) return std::nullopt;
    nlohmann::json doc = nlohmann::json::parse(r.rows[0][0].value_or(""), nullptr, false);
    if (!doc.is_object() || !doc.contains("resources") ||
        r.rows[0][0]->find("\"stored_in\"") == std::string::npos)
      return r.rows[0][0];
    pg_secrets::Rows secrets;
    for (const auto& row : c.exec("SELECT kind, project_id, resource_id, field, value FROM dbform_secrets "
                                  "WHERE workspace = $1", {workspace_}).rows)
      secrets[{*row[0], *row[1], *row[2], *row[3]}] = *row[4];
    pg_secrets::restore(doc["resources"], secrets);
    return dump_json(doc, 2) + "\n";
  }
  std::string everything_stored() override {
    std::string all;
    for (const char* sql : {"SELECT lineage || document FROM dbform_states WHERE workspace = $1",
                            "SELECT entry FROM dbform_journal WHERE workspace = $1",
                            "SELECT value FROM dbform_secrets WHERE workspace = $1"})
      for (const auto& row : pgtest::query_rows(sql, {workspace_})) all += row;
    return all;
  }
  void put_raw(const std::string& text) override {
    open()->lock("hand edit", Duration(0));  // creates the tables (a store makes them on its first lock)
    dbform::PgConnection c(url_);
    // Its passwords go to dbform_secrets, where the store keeps them (a document that is no state
    // goes as it is).
    std::string document = text;
    nlohmann::json doc = nlohmann::json::parse(text, nullptr, false);
    if (doc.is_object() && doc.contains("resources") && pg_secrets::held_inline(doc["resources"])) {
      c.exec("DELETE FROM dbform_secrets WHERE workspace = $1", {workspace_});
      for (const auto& [key, value] : pg_secrets::take(doc["resources"]))
        c.exec("INSERT INTO dbform_secrets VALUES ($1, $2, $3, $4, $5, $6)",
               {workspace_, std::get<0>(key), std::get<1>(key), std::get<2>(key), std::get<3>(key), value});
      document = dump_json(doc, 2) + "\n";
    }
    c.exec("INSERT INTO dbform_states (workspace, lineage, serial, document) VALUES ($1, 'hand', 1, $2) "
           "ON CONFLICT (workspace) DO UPDATE SET document = EXCLUDED.document",
           {workspace_, document});
  }
  void settle_after_crash() override {
    // The dead holder's row is still there (it could not clean up); its server process ends as
    // soon as the server reads the closed connection.
    std::string backend = pgtest::query_value("SELECT backend_pid FROM dbform_locks WHERE workspace = $1", {workspace_});
    REQUIRE(!backend.empty());
    auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    while (pgtest::query_value("SELECT count(*) FROM pg_stat_activity WHERE pid = $1", {backend}) != "0") {
      REQUIRE(std::chrono::steady_clock::now() < deadline);
      ::usleep(10000);
    }
  }

 private:
  std::string url_;
  std::string workspace_;
};

// Each case runs once per backend: GENERATE makes Catch run the case again for the next one, and
// INFO names the backend in what a failure prints (a macro, as INFO lasts to the end of its scope).
#define EACH_BACKEND(backend)                                                          \
  const std::string backend##_kind = GENERATE(as<std::string>{}, "file", "postgres"); \
  INFO("backend: " << backend##_kind);                                                \
  auto backend = make_backend(backend##_kind)

std::unique_ptr<Backend> make_backend(const std::string& kind) {
  if (kind == "file") return std::make_unique<FileBackend>();
  return std::make_unique<PgBackend>();
}

// `name` READY, or (`pending`) its create's intent: declared, its outcome unknown.
ResourceRecord service(const std::string& name, bool pending = false) {
  if (!pending) return test::ready_service(name);
  ResourceRecord r = test::recorded_service("p1", name, "", "");
  r.settings = {{"cpu_millis", "1000"}};
  r.create_pending = true;
  return r;
}

}  // namespace

TEST_CASE("state: conformance: nothing stored reads as none, and writes round-trip with a growing serial") {
  EACH_BACKEND(backend);
  auto writer = backend->open();
  CHECK_FALSE(writer->read());

  State s = new_state();
  s.upsert(service("orders"));
  writer->write(s);
  CHECK(s.serial == 1);
  s.upsert(service("billing"));
  writer->write(s);
  CHECK(s.serial == 2);

  auto other = backend->open();
  auto read = other->read();
  REQUIRE(read);
  CHECK(read->lineage == s.lineage);
  CHECK(read->serial == 2);
  CHECK(serialize_state(*read) == serialize_state(s));
  CHECK(read->find("p1/services/orders")->initial_password == "pw-orders");
  CHECK(*backend->raw() == serialize_state(s));
}

TEST_CASE("state: conformance: every write is visible to another client at once (the intent journal)") {
  EACH_BACKEND(backend);
  auto engine = backend->open();
  auto observer = backend->open();
  State s = new_state();
  engine->write(s);

  s.upsert(service("orders", true));  // the intent, before the create call
  engine->write(s);
  auto seen = observer->read();
  REQUIRE(seen);
  REQUIRE(seen->find("p1/services/orders"));
  CHECK(seen->find("p1/services/orders")->create_pending);

  s.upsert(service("orders"));  // the answer, right after it
  engine->write(s);
  seen = observer->read();
  CHECK_FALSE(seen->find("p1/services/orders")->create_pending);
  CHECK(seen->find("p1/services/orders")->id == "svc-orders");
  CHECK(seen->serial == 3);
}

TEST_CASE("state: conformance: a writer that lost the race is refused and overwrites nothing") {
  EACH_BACKEND(backend);
  auto a = backend->open();
  auto b = backend->open();
  State first = new_state();
  a->write(first);

  State sa = *a->read(), sb = *b->read();
  sa.upsert(service("from-a"));
  a->write(sa);
  const std::string after_a = *backend->raw();

  sb.upsert(service("from-b"));
  std::string msg = error_of([&] { b->write(sb); });
  CHECK_THAT(msg, Catch::Contains("changed since it was read"));
  CHECK_THAT(msg, Catch::Contains("nothing was overwritten"));
  CHECK_THAT(msg, Catch::Contains(b->describe()));
  CHECK(sb.serial == 1);  // unchanged: the caller's state is still the one it read
  CHECK(*backend->raw() == after_a);

  // After reading again it may write.
  State again = *b->read();
  again.upsert(service("from-b"));
  b->write(again);
  CHECK(again.serial == 3);
}

TEST_CASE("state: conformance: a state of another lineage is never written over") {
  EACH_BACKEND(backend);
  auto a = backend->open();
  State s = new_state();
  s.upsert(service("orders"));
  a->write(s);
  const std::string stored = *backend->raw();

  State stranger = new_state();  // another lineage, as from another project's state
  stranger.serial = s.serial;
  auto b = backend->open();
  CHECK_THAT(error_of([&] { b->write(stranger); }), Catch::Contains("changed since it was read"));
  CHECK(*backend->raw() == stored);
  CHECK(b->read()->lineage == s.lineage);
}

TEST_CASE("state: conformance: a corrupt or unknown document is refused and left byte for byte") {
  auto kind = GENERATE(as<std::string>{}, "file", "postgres");
  auto text = GENERATE(as<std::string>{}, "{\"format\": \"dbform-state\", truncated",
                       R"({"format":"dbform-state","version":99,"lineage":"hand","serial":1,"resources":[]})");
  INFO("backend: " << kind << "\ndocument: " << text);
  auto backend = make_backend(kind);
  backend->put_raw(text);
  auto store = backend->open();
  std::string msg = error_of([&] { store->read(); });
  CHECK_THAT(msg, Catch::Contains(store->describe()));
  CHECK_THROWS_AS(store->read(), StateError);
  // A writer that never read it cannot replace it either.
  State fresh = new_state();
  CHECK_THROWS_AS(store->write(fresh), StateError);
  CHECK(*backend->raw() == text);
}

TEST_CASE("state: conformance: two records of one id are refused on every read, the journal's included") {
  EACH_BACKEND(backend);
  auto writer = backend->open();
  State s = new_state();
  s.upsert(service("orders"));
  writer->write(s);
  // A change appended to the journal gives a second record the id of the first (a hand-made entry,
  // a pasted record): the document alone is fine, the state it reads as is not.
  ResourceRecord copy = service("old-orders");
  copy.id = "svc-orders";
  s.upsert(copy);
  writer->write_changes(s, {copy.address});
  auto reader = backend->open();
  std::string msg;
  std::optional<State> as_read;
  try {
    reader->read();
  } catch (const DuplicateRecords& e) {
    msg = e.what();
    as_read = e.state;
  }
  CHECK_THAT(msg, Catch::Contains("p1/services/orders and p1/services/old-orders both record service id svc-orders"));
  CHECK_THAT(msg, Catch::Contains("dbform state rm"));
  // The repair (`state rm`) gets the state as read, and the same client writes it without the
  // wrong record; every client reads it again.
  REQUIRE(as_read);
  CHECK(as_read->resources.size() == 2);
  as_read->remove(copy.address);
  reader->write(*as_read);
  auto repaired = backend->open()->read();
  REQUIRE(repaired);
  CHECK(repaired->resources.size() == 1);
}

TEST_CASE("state: conformance: the lock refuses a second holder, names the first, and is freed on release") {
  EACH_BACKEND(backend);
  auto a = backend->open();
  auto b = backend->open();
  {
    auto held = a->lock("apply", Duration(0));
    std::string msg = error_of([&] { b->lock("apply", Duration(0)); });
    CHECK_THAT(msg, Catch::StartsWith("the state " + b->describe() + " is locked by pid " + std::to_string(::getpid())));
    char host[256] = {0};
    ::gethostname(host, sizeof host - 1);
    CHECK_THAT(msg, Catch::Contains(std::string(" on ") + host + ", running `apply` since 20"));
    CHECK_THAT(msg, Catch::EndsWith("Wait for it to finish, or pass --lock-timeout to wait for it"));
    // After a --lock-timeout that ran out, the message says so instead of suggesting the flag given.
    std::string waited = error_of([&] { b->lock("apply", Duration(50)); });
    CHECK_THAT(waited, Catch::EndsWith("It still held it after --lock-timeout 50ms: wait for it to finish, or pass a longer --lock-timeout"));
    CHECK_THROWS_AS(b->lock("state rm", Duration(0)), LockError);
  }
  auto next = b->lock("state rm", Duration(0));
  CHECK(next != nullptr);
}

TEST_CASE("state: conformance: --lock-timeout waits that long for a live holder, then names it") {
  EACH_BACKEND(backend);
  auto a = backend->open();
  auto b = backend->open();
  auto held = a->lock("apply", Duration(0));
  auto started = std::chrono::steady_clock::now();
  CHECK_THROWS_WITH(b->lock("apply", Duration(300)), Catch::Contains("pid " + std::to_string(::getpid())));
  CHECK(std::chrono::steady_clock::now() - started >= Duration(300));
}

TEST_CASE("state: conformance: the lock of a process killed with SIGKILL is free again") {
  EACH_BACKEND(backend);
  int ready[2];
  REQUIRE(::pipe(ready) == 0);
  pid_t child = ::fork();
  REQUIRE(child >= 0);
  if (child == 0) {
    // The holder: takes the lock on its own connection, says so, and waits to be killed.
    char ok = '0';
    std::unique_ptr<StateStore> store;
    std::unique_ptr<StateLock> lock;
    try {
      store = backend->open();
      lock = store->lock("apply", Duration(0));
      ok = '1';
    } catch (...) {
    }
    if (::write(ready[1], &ok, 1) != 1 || ok != '1') ::_exit(1);
    for (;;) ::pause();
  }
  ::close(ready[1]);
  char ok = 0;
  REQUIRE(::read(ready[0], &ok, 1) == 1);
  ::close(ready[0]);
  REQUIRE(ok == '1');

  auto other = backend->open();
  CHECK_THROWS_WITH(other->lock("apply", Duration(0)), Catch::Contains("pid " + std::to_string(child)));
  ::kill(child, SIGKILL);
  int status = 0;
  REQUIRE(::waitpid(child, &status, 0) == child);
  backend->settle_after_crash();
  // Free without any timeout, force-unlock or other cleanup.
  auto lock = other->lock("apply", Duration(0));
  CHECK(lock != nullptr);
}

TEST_CASE("state: conformance: changes written as changes read back whole, race like whole writes, and compact") {
  EACH_BACKEND(backend);
  auto engine = backend->open();
  auto observer = backend->open();
  State s = new_state();
  s.upsert(service("orders"));
  engine->write(s);

  s.upsert(service("billing", true));  // an intent
  engine->write_changes(s, {"p1/services/billing"});
  CHECK(s.serial == 2);
  auto seen = observer->read();
  REQUIRE(seen);
  CHECK(seen->serial == 2);
  CHECK(seen->find("p1/services/billing")->create_pending);

  s.upsert(service("billing"));  // its answer; and orders forgotten
  s.remove("p1/services/orders");
  engine->write_changes(s, {"p1/services/billing", "p1/services/orders"});
  seen = observer->read();
  REQUIRE(seen);
  CHECK(serialize_state(*seen) == serialize_state(s));

  // A writer holding an older serial is refused, as for a whole write.
  State stale = *seen;
  --stale.serial;
  stale.upsert(service("stale"));
  CHECK_THAT(error_of([&] { observer->write_changes(stale, {"p1/services/stale"}); }),
             Catch::Contains("changed since it was read"));
  CHECK(serialize_state(*backend->open()->read()) == serialize_state(s));

  engine->compact(s);
  CHECK(*backend->raw() == serialize_state(s));
  CHECK(serialize_state(*backend->open()->read()) == serialize_state(s));
}

TEST_CASE("state: conformance: the time of the last refresh is written with the records, whole or as a change") {
  EACH_BACKEND(backend);
  auto writer = backend->open();
  State s = new_state();
  s.upsert(service("orders"));
  s.refreshed = RefreshStamp{"2026-11-28T08:00:00Z", "apply", 1, std::nullopt};
  writer->write(s);
  auto seen = backend->open()->read();
  REQUIRE(seen);
  REQUIRE(seen->refreshed);
  CHECK(seen->refreshed->by == "apply");
  CHECK_FALSE(seen->refreshed->unchanged_since);

  // A refresh that found nothing: a change of no record, which carries the stamp alone.
  s.refreshed = RefreshStamp{"2026-11-28T09:00:00Z", "apply --refresh-only", 2, 1};
  writer->write_changes(s, {});
  seen = backend->open()->read();
  REQUIRE(seen);
  CHECK(seen->serial == 2);
  REQUIRE(seen->refreshed);
  CHECK(seen->refreshed->at == "2026-11-28T09:00:00Z");
  CHECK(seen->refreshed->serial == 2);
  CHECK(seen->refreshed->unchanged_since == 1);
  writer->compact(s);
  CHECK(serialize_state(*backend->open()->read()) == serialize_state(s));

  // One that does not read as written (a hand edit) is left out, never a reason to refuse the state.
  std::string text = *backend->raw();
  REQUIRE(text.find("2026-11-28T09:00:00Z") != std::string::npos);  // folded into the document
  text.replace(text.find("2026-11-28T09:00:00Z"), 20, "yesterday, at teatime");
  backend->put_raw(text);
  seen = backend->open()->read();
  REQUIRE(seen);
  CHECK_FALSE(seen->refreshed);
  CHECK(seen->find("p1/services/orders"));
}

TEST_CASE("state: conformance: with a key no password is stored in clear, the rest reads without it, a wrong key or a flipped byte is refused untouched, and rekey round-trips") {
  EACH_BACKEND(backend);
  auto with = [&](std::optional<StateKey> read_key, std::optional<StateKey> write_key) {
    auto store = backend->open();
    store->set_cipher(std::make_shared<StateCipher>(read_key, write_key));
    return store;
  };
  // The records as shown (a sealed value as its envelope), whatever form the passwords are in.
  auto records = [](const State& state) {
    nlohmann::json all = nlohmann::json::array();
    for (const auto& r : state.resources) all.push_back(record_to_json(r));
    return all.dump();
  };
  const StateKey a = StateKey::raw(std::string(32, 'a'), "key a"), b = StateKey::raw(std::string(32, 'b'), "key b");
  auto engine = with(a, a);
  State s = new_state();
  s.upsert(service("orders"));
  engine->write(s);
  engine->write(s);  // a backup
  s.upsert(service("billing"));
  engine->write_changes(s, {"p1/services/billing"});  // a journal entry
  const std::string stored = backend->everything_stored();
  CHECK(stored.find("pw-orders") == std::string::npos);
  CHECK(stored.find("pw-billing") == std::string::npos);
  CHECK(stored.find("svc-orders") != std::string::npos);  // ids, addresses, statuses read without the key
  CHECK(records(*with(a, a)->read()) == records(s));

  const std::string document = *backend->raw();
  const State unopened = *backend->open()->read();
  CHECK(unopened.find("p1/services/billing")->id == "svc-billing");
  CHECK(unopened.find("p1/services/billing")->initial_password.is_sealed());
  CHECK(unopened.secrets_key_id == engine->cipher().sealing_key_id());
  CHECK_THAT(error_of([&] { with(b, b)->read(); }), Catch::Contains("wrong key"));
  CHECK(*backend->raw() == document);

  engine->compact(s);
  const std::string compacted = *backend->raw();
  std::string flipped = compacted;
  const size_t at = flipped.find("\"ciphertext\": \"") + 20;  // inside a sealed password
  flipped[at] = flipped[at] == 'A' ? 'B' : 'A';
  backend->put_raw(flipped);
  CHECK_THAT(error_of([&] { with(a, a)->read(); }), Catch::Contains("does not open"));
  CHECK(*backend->raw() == flipped);
  backend->put_raw(compacted);

  // Rekey: read with a, written with b; then only b opens it, and nothing of a's form is left.
  auto rekey = with(a, b);
  State read = *rekey->read();
  rekey->write(read);
  CHECK(records(*with(b, b)->read()) == records(read));
  CHECK_THAT(error_of([&] { with(a, a)->read(); }), Catch::Contains("wrong key"));
  auto decrypt = with(b, std::nullopt);
  read = *decrypt->read();
  read.secrets_key_id.clear();  // as `state decrypt` does
  decrypt->write(read);
  CHECK(backend->open()->read()->find("p1/services/orders")->initial_password == "pw-orders");
}
