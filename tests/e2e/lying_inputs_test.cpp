// Guards that hold when the inputs lie (docs/safety.md), through the real binary: unreadable
// manifests, hand-edited states, lost password answers, state locations in libpq's keyword form or
// looking like URLs, links, hard links and FIFOs where dbform keeps its files, hostile environment
// values and flags, API text written into a generated manifest, and manifest file names in any case.
#include <signal.h>
#include <sys/stat.h>

#include "common.h"

using namespace e2e;

namespace {

// The base project split over two files of a directory: main.yaml (the VPC and orders) and
// more.yaml (billing and analytics).
void write_split_manifests(Sandbox& sb) {
  sb.write("m/main.yaml", manifest({vpc_yaml("main")}, {service_yaml("orders")}));
  sb.write("m/more.yaml", manifest({}, {service_yaml("billing"), service_yaml("analytics")}));
}

// The state document with one more record: a copy of `from`'s record under `name`, carrying `id`.
void add_hand_edited_record(Sandbox& sb, const std::string& from, const std::string& name, const std::string& id) {
  json state = sb.state();
  json record = find_resource(state, service_address(from));
  record["address"] = service_address(name);
  record["name"] = name;
  record["id"] = id;
  state["resources"].push_back(record);
  fs::remove(sb.dir() / "dbform.state.json.journal");
  sb.write("dbform.state.json", state.dump(2));
}

}  // namespace

TEST_CASE("e2e: guards: a manifest that cannot be read is an error in every command, and --prune deletes nothing") {
  Sandbox sb;
  write_split_manifests(sb);
  RunResult first = sb.apply({"-f", "m"});
  INFO(first.describe());
  REQUIRE(first.exit_code == 0);
  const std::string state_before = sb.read("dbform.state.json");

  // more.yaml becomes a link whose target is gone (a checkout that lost a file, a moved volume).
  fs::remove(sb.dir() / "m/more.yaml");
  fs::create_symlink(sb.dir() / "shared/more.yaml", sb.dir() / "m/more.yaml");
  for (const auto& args : std::vector<std::vector<std::string>>{
           {"validate", "-f", "m"}, {"plan", "-f", "m", "--prune"}, {"plan", "-f", "m", "--refresh", "--prune"}}) {
    RunResult r = sb.run(args);
    INFO(args[0] << ": " << r.describe());
    CHECK(r.exit_code == 1);
    CHECK(contains(r.err, "m/more.yaml"));
    CHECK(contains(r.err, "cannot read this manifest"));
    CHECK_FALSE(contains(r.out, "delete"));
  }
  RunResult pruned = sb.apply({"-f", "m", "--prune"});
  INFO(pruned.describe());
  CHECK(pruned.exit_code == 1);
  CHECK(sb.count(kDeleteService) == 0);
  CHECK(sb.sim().all_services().size() == 3);
  CHECK(sb.read("dbform.state.json") == state_before);

  // A FIFO of that name is refused the same way, without waiting for a writer.
  fs::remove(sb.dir() / "m/more.yaml");
  REQUIRE(::mkfifo((sb.dir() / "m/more.yaml").c_str(), 0600) == 0);
  RunResult fifo = sb.apply({"-f", "m", "--prune"});
  INFO(fifo.describe());
  CHECK(fifo.exit_code == 1);
  CHECK_FALSE(fifo.timed_out);
  CHECK(contains(fifo.err, "not a regular file"));
  CHECK(sb.count(kDeleteService) == 0);
}

TEST_CASE("e2e: guards: a hand-edited record that shares a declared service's id is refused by every command") {
  Sandbox sb;
  apply_base(sb);
  const json orders = find_resource(sb.state(), service_address("orders"));
  const std::string id = orders["id"];
  // An orphan record carrying the id of the declared `orders`.
  add_hand_edited_record(sb, "orders", "old-orders", id);
  const std::string edited = sb.read("dbform.state.json");

  RunResult pruned = sb.apply({"--prune"});
  INFO(pruned.describe());
  CHECK(pruned.exit_code == 1);
  CHECK(contains(pruned.err, service_address("orders") + " and " + service_address("old-orders")));
  CHECK(contains(pruned.err, "service id " + id));
  CHECK(contains(pruned.err, "dbform state rm"));
  CHECK(sb.count(kDeleteService) == 0);
  CHECK(sb.sim().all_services().size() == 3);
  CHECK(sb.read("dbform.state.json") == edited);
  for (const auto& args : std::vector<std::vector<std::string>>{
           {"plan"}, {"plan", "--refresh"}, {"output", "orders.password"}, {"rotate-password", "orders"}}) {
    RunResult r = sb.run(args);
    INFO(args[0] << ": " << r.describe());
    CHECK(r.exit_code == 1);
    CHECK(contains(r.err, "both record service id " + id));
  }
  CHECK(sb.count(kUpdatePassword) == 0);

  // The repair the message names: state list shows both (with the warning), state rm removes the
  // wrong one, and everything works again with nothing deleted.
  RunResult list = sb.run({"state", "list"});
  CHECK(list.exit_code == 0);
  CHECK(contains(list.out, service_address("old-orders")));
  CHECK(contains(list.err, "warning"));
  RunResult rm = sb.run({"state", "rm", "old-orders"});
  INFO(rm.describe());
  REQUIRE(rm.exit_code == 0);
  RunResult clean = sb.run({"plan", "--prune", "--detailed-exitcode"});
  INFO(clean.describe());
  CHECK(clean.exit_code == 0);
  CHECK(sb.count(kDeleteService) == 0);
}

TEST_CASE("e2e: guards: a delete is made only when the API shows the recorded name under the recorded id") {
  Sandbox sb;
  apply_base(sb);
  // A database made in the console, which dbform never recorded...
  const std::string foreign = console_service(sb, {{"name", "console-db"}, {"region_code", "us-east-1"}});
  // ...and a hand-edited orphan record that points at it under another name.
  add_hand_edited_record(sb, "orders", "old-reports", foreign);
  RunResult pruned = sb.apply({"--prune"});
  INFO(pruned.describe());
  CHECK(pruned.exit_code == 1);
  CHECK(contains(pruned.all(), "named `console-db`, not `old-reports`"));
  CHECK(sb.count(kDeleteService) == 0);
  CHECK(sb.sim().all_services().size() == 4);
  // The record stays for a person to look at; the declared services are untouched.
  CHECK(find_resource(sb.state(), service_address("old-reports")).is_object());
  CHECK(find_resource(sb.state(), service_address("orders"))["status"] == "READY");
}

TEST_CASE("e2e: guards: a pending password is kept until the service is known to have another") {
  Sandbox sb;
  apply_base(sb);
  const std::string id = find_resource(sb.state(), service_address("orders"))["id"];
  // Every answer of the first rotation is lost (all six attempts); the second rotation's call is
  // refused.
  sb.sim().set_route_faults({{kUpdatePassword, dbform::RouteFault::Kind::LoseAnswer, 1, 6},
                             {kUpdatePassword, dbform::RouteFault::Kind::Refuse, 7, 1}});
  RunResult lost = sb.run({"rotate-password", "orders"});
  INFO(lost.describe());
  REQUIRE(lost.exit_code == 1);
  const std::string has = sb.sim().current_password(id);  // what the first rotation set
  CHECK(find_resource(sb.state(), service_address("orders"))["pending_password"] == has);

  RunResult refused = sb.run({"rotate-password", "orders"});
  INFO(refused.describe());
  CHECK(refused.exit_code == 1);
  CHECK(contains(refused.err, "still pending"));
  CHECK(sb.sim().current_password(id) == has);
  // The password the service really has is still recorded.
  json rec = find_resource(sb.state(), service_address("orders"));
  CHECK((rec["pending_password"] == has || rec["initial_password"] == has));
  RunResult shown = sb.run({"output", "orders.password"});
  CHECK(contains(shown.err, "pending"));

  // With the network healthy again, the next rotation completes the pending one, then rotates.
  sb.sim().set_route_faults({});
  RunResult ok = sb.run({"rotate-password", "orders"});
  INFO(ok.describe());
  REQUIRE(ok.exit_code == 0);
  rec = find_resource(sb.state(), service_address("orders"));
  CHECK(rec["initial_password"] == sb.sim().current_password(id));
  CHECK(rec["initial_password"] != has);
  CHECK_FALSE(rec.contains("pending_password"));
  CHECK(sb.run({"output", "orders.password"}).out == sb.sim().current_password(id) + "\n");
}

TEST_CASE("e2e: guards: DBFORM_STATE in libpq's keyword form is a PostgreSQL state, and its password shows nowhere") {
  Sandbox sb;
  sb.write("dbform.yaml", base_manifest());
  const std::string secret = "Kw0rdPassw0rd-e2e";
  // Nothing listens on port 1: the connection fails, and says so without the password.
  for (const std::string& where :
       {"host=127.0.0.1 port=1 dbname=states user=ci password=" + secret + " connect_timeout=2",
        "host=127.0.0.1 port=1 password='" + secret + " with spaces' connect_timeout=2"}) {
    for (const auto& args : std::vector<std::vector<std::string>>{{"plan"}, {"apply", "--auto-approve"}}) {
      RunResult r = sb.run(args, {{"DBFORM_STATE", where}});
      INFO(args[0] << ": " << r.describe());
      CHECK(r.exit_code == 1);
      CHECK(contains(r.err, "PostgreSQL"));
      CHECK_FALSE(contains(r.all(), secret));
    }
  }
  // A string libpq cannot read is refused without being quoted, never taken for a file name.
  RunResult bad = sb.run({"plan"}, {{"DBFORM_STATE", "hots=127.0.0.1 password=" + secret}});
  INFO(bad.describe());
  CHECK(bad.exit_code == 1);
  CHECK(contains(bad.err, "DBFORM_STATE"));
  CHECK_FALSE(contains(bad.all(), secret));
  for (const auto& entry : fs::directory_iterator(sb.dir()))
    CHECK_FALSE(contains(entry.path().filename().string(), "="));
  CHECK(sb.total_requests() == 0);
}

TEST_CASE("e2e: guards: dbform's own files are never written through a link, and FIFOs or devices are refused") {
  Sandbox sb;
  apply_base(sb);
  sb.write("victim.txt", "precious\n");
  fs::remove(sb.dir() / "dbform.state.json.lock");  // left by the apply, empty
  fs::create_symlink(sb.dir() / "victim.txt", sb.dir() / "dbform.state.json.lock");
  RunResult locked = sb.run({"plan", "--refresh"});
  INFO(locked.describe());
  CHECK(locked.exit_code == 1);
  CHECK(contains(locked.err, "dbform.state.json.lock"));
  CHECK(contains(locked.err, "symbolic link"));
  CHECK(sb.read("victim.txt") == "precious\n");
  RunResult applied = sb.apply();
  CHECK(applied.exit_code == 1);
  CHECK(sb.read("victim.txt") == "precious\n");
  fs::remove(sb.dir() / "dbform.state.json.lock");

  // The journal and the backup likewise.
  for (const char* own : {"dbform.state.json.journal", "dbform.state.json.backup"}) {
    fs::remove(sb.dir() / own);
    fs::create_symlink(sb.dir() / "victim.txt", sb.dir() / own);
    RunResult r = sb.run({"rotate-password", "orders"});
    INFO(own << ": " << r.describe());
    CHECK(r.exit_code == 1);
    CHECK(contains(r.err, own));
    CHECK(sb.read("victim.txt") == "precious\n");
    fs::remove(sb.dir() / own);
  }
  CHECK(sb.count(kUpdatePassword) == 0);

  // A --state that is a FIFO, a device or a directory: refused at once, never read or waited on.
  REQUIRE(::mkfifo((sb.dir() / "fifo.json").c_str(), 0600) == 0);
  fs::create_directories(sb.dir() / "dir.json");
  for (const std::string& state : {std::string("fifo.json"), std::string("/dev/null"), std::string("dir.json")}) {
    for (const auto& args : std::vector<std::vector<std::string>>{{"plan", "--state", state},
                                                                   {"apply", "--auto-approve", "--state", state},
                                                                   {"state", "list", "--state", state}}) {
      RunResult r = sb.run(args, {}, "", std::chrono::seconds(20));
      INFO(state << " " << args[0] << ": " << r.describe());
      CHECK_FALSE(r.timed_out);
      CHECK(r.exit_code == 1);
      CHECK(contains(r.err, "not a regular file"));
    }
  }
  CHECK(sb.count(kPostService) == 3);  // only the first apply's
}

TEST_CASE("e2e: guards: keys, URLs and flags are checked before anything is sent") {
  Sandbox sb;
  sb.write("dbform.yaml", base_manifest());
  // A key read from a file with its trailing newline, and one that smuggles a second header.
  for (const std::string& key : {kKey + "\n", kKey + "\r\nX-Injected: 1"}) {
    RunResult r = sb.apply({}, {{"DBFORM_API_KEY", key}});
    INFO(r.describe());
    CHECK(r.exit_code == 1);
    CHECK(contains(r.err, "DBFORM_API_KEY holds a control character"));
    CHECK_FALSE(contains(r.all(), kKey));
  }
  RunResult own = sb.apply({}, {{"DBFORM_API_KEY_ACME_PROD", kKey + "\n"}});
  CHECK(own.exit_code == 1);
  CHECK(contains(own.err, "DBFORM_API_KEY_ACME_PROD holds a control character"));
  for (const std::string& url : {sb.api_url() + "\n", std::string("ftp://127.0.0.1/x"), std::string("not a url")}) {
    RunResult r = sb.apply({}, {{"DBFORM_API_URL", url}});
    INFO(r.describe());
    CHECK(r.exit_code == 1);
    CHECK(contains(r.err, "DBFORM_API_URL"));
  }
  RunResult state = sb.run({"plan"}, {{"DBFORM_STATE", "dbform.state.json\n"}});
  CHECK(state.exit_code == 1);
  CHECK(contains(state.err, "DBFORM_STATE holds a control character"));
  RunResult wide = sb.apply({"--parallelism", "1000"});
  CHECK(wide.exit_code == 1);
  CHECK(contains(wide.err, "--parallelism must be from 1 to 64"));
  CHECK(sb.total_requests() == 0);
  CHECK_FALSE(sb.exists("dbform.state.json"));
}

TEST_CASE("e2e: guards: too little memory for the threads asked for is a clear error, never an abort") {
  if (kSanitized) {
    WARN("not run in a sanitized build: its runtime needs more address space than this");
    return;
  }
  Sandbox sb;
  sb.write("dbform.yaml", base_manifest());
  // 64 API threads and 4 poll threads want 68 stacks of 8 MiB: far more address space than this.
  RunResult r = sb.run_shell("ulimit -v 400000; exec \"$DBFORM\" apply --auto-approve --poll-interval 100ms "
                             "--parallelism 64");
  INFO(r.describe());
  CHECK(r.exit_code != 128 + SIGABRT);
  CHECK((r.exit_code == 0 || r.exit_code == 1));
  if (r.exit_code == 1) CHECK((contains(r.err, "out of memory") || contains(r.err, "short of threads")));
  CHECK_FALSE(contains(r.all(), "bad_alloc"));
  // Whatever it managed is recorded: the next run (with memory) finishes it, creating nothing twice.
  RunResult again = sb.apply();
  INFO(again.describe());
  CHECK(again.exit_code == 0);
  // Counted by services, not POSTs: a POST cut short by the lack of memory can reach the simulator
  // without its body and create nothing (seen once in ten runs: 4 POSTs, 3 services).
  CHECK(sb.sim().all_services().size() == 3);
}

TEST_CASE("e2e: guards: too few file descriptors is a clear error that keeps what was recorded") {
  if (kSanitized) {
    WARN("not run in a sanitized build: its runtime needs descriptors of its own");
    return;
  }
  Sandbox sb;
  sb.write("dbform.yaml", base_manifest());
  RunResult r = sb.run_shell("ulimit -n 7; exec \"$DBFORM\" apply --auto-approve --poll-interval 100ms");
  INFO(r.describe());
  CHECK(r.exit_code == 1);
  // The state's files, most often; a connection when the sockets take the last descriptors first.
  CHECK((contains(r.err, "Too many open files") || contains(r.err, "Couldn't connect")));
  RunResult again = sb.apply();
  INFO(again.describe());
  CHECK(again.exit_code == 0);
  CHECK(sb.sim().all_services().size() == 3);
  CHECK(sb.sim().all_vpcs().size() == 1);
}

TEST_CASE("e2e: guards: import --generate writes API text so that it reads back as exactly that, or refuses") {
  Sandbox sb;
  // A region code that is a number to YAML: quoted, read back as text, the next plan clean.
  console_service(sb, {{"name", "numeric-region"}, {"region_code", "123"}, {"cpu_millis", "500"},
                       {"memory_gbs", "2"}});
  RunResult ok = sb.run({"import", "--project", kProject, "--generate", "generated.yaml"});
  INFO(ok.describe());
  REQUIRE(ok.exit_code == 0);
  const std::string text = sb.read("generated.yaml");
  CHECK(contains(text, "region_code: \"123\""));
  CHECK(contains(text, "cpu_millis: 500\n"));  // a number, as a person writes it
  apply_generated(sb, "generated.yaml", 1);

  // A region code that holds YAML: declaring it as found is impossible, so nothing is imported.
  Sandbox hostile;
  console_service(hostile, {{"name", "plain"}, {"region_code", "us-east-1"}});
  console_service(hostile, {{"name", "evil"},
                            {"region_code", "us-east-1\n      - name: injected\n        region_code: us-east-1"}});
  RunResult refused = hostile.run({"import", "--project", kProject, "--generate", "generated.yaml"});
  INFO(refused.describe());
  CHECK(refused.exit_code == 1);
  CHECK(contains(refused.err, service_address("evil")));
  CHECK(contains(refused.err, "nothing was written"));
  CHECK_FALSE(hostile.exists("generated.yaml"));
  CHECK_FALSE(hostile.exists("dbform.state.json"));
}

TEST_CASE("e2e: guards: a state location that looks like a URL dbform does not read is refused, never a file name") {
  Sandbox sb;
  sb.write("dbform.yaml", base_manifest());
  const std::string secret = "PWSECRET-url-form";
  for (const std::string& where : {"POSTGRES://ci:" + secret + "@127.0.0.1:1/db", "postgresql:ci:" + secret + "@127.0.0.1",
                                   "https://ci:" + secret + "@127.0.0.1/state"}) {
    for (const auto& args : std::vector<std::vector<std::string>>{{"plan"}, {"apply", "--auto-approve"}}) {
      RunResult r = sb.run(args, {{"DBFORM_STATE", where}});
      INFO(args[0] << ": " << r.describe());
      CHECK(r.exit_code == 1);
      CHECK(contains(r.err, "DBFORM_STATE looks like a URL"));
      CHECK_FALSE(contains(r.all(), secret));
    }
    RunResult push = sb.run({"state", "push", where});
    CHECK(push.exit_code == 1);
    CHECK_FALSE(contains(push.all(), secret));
  }
  for (const auto& entry : fs::recursive_directory_iterator(sb.dir()))
    CHECK_FALSE(contains(entry.path().string(), secret));
  CHECK(sb.total_requests() == 0);
}

TEST_CASE("e2e: guards: whoami without manifests checks DBFORM_API_KEY too, under either auth scheme") {
  Sandbox sb;
  for (const std::string& scheme : {"bearer", "basic"}) {
    RunResult r = sb.run({"whoami"}, {{"DBFORM_API_KEY", kKey + "\n"}, {"DBFORM_AUTH_SCHEME", scheme}});
    INFO(scheme << ": " << r.describe());
    CHECK(r.exit_code == 1);
    CHECK(contains(r.err, "DBFORM_API_KEY holds a control character"));
  }
  CHECK(sb.total_requests() == 0);
}

TEST_CASE("e2e: guards: a journal or lock with other names (hard links) is never written through") {
  Sandbox sb;
  apply_base(sb);
  sb.write("victim.txt", "precious");  // no newline: read as a journal, a torn last line
  ::chmod((sb.dir() / "victim.txt").c_str(), 0644);
  for (const char* own : {"dbform.state.json.journal", "dbform.state.json.lock"}) {
    fs::remove(sb.dir() / own);
    fs::create_hard_link(sb.dir() / "victim.txt", sb.dir() / own);
    RunResult r = sb.run({"rotate-password", "orders"});
    INFO(own << ": " << r.describe());
    CHECK(r.exit_code == 1);
    CHECK(contains(r.err, "other names"));
    CHECK(sb.read("victim.txt") == "precious");
    struct stat st {};
    REQUIRE(::stat((sb.dir() / "victim.txt").c_str(), &st) == 0);
    CHECK((st.st_mode & 07777) == 0644);
    fs::remove(sb.dir() / own);
  }
  CHECK(sb.count(kUpdatePassword) == 0);
}

TEST_CASE("e2e: guards: import --generate never writes over the state or its files, --force or not") {
  Sandbox sb;
  apply_base(sb);
  console_service(sb, {{"name", "legacy"}, {"region_code", "us-east-1"}});
  const std::string state = sb.read("dbform.state.json");
  for (const std::string& target : {std::string("dbform.state.json"), std::string("dbform.state.json.lock"),
                                    std::string("dbform.state.json.backup"), std::string("./dbform.state.json")}) {
    RunResult r = sb.run({"import", "--project", kProject, "--generate", target, "--force"});
    INFO(target << ": " << r.describe());
    CHECK(r.exit_code == 1);
    CHECK(contains(r.err, "a file of the state"));
    CHECK(sb.read("dbform.state.json") == state);
  }
}

TEST_CASE("e2e: guards: a generated manifest quotes what YAML 1.1 readers would take for booleans") {
  Sandbox sb;
  console_service(sb, {{"name", "yes"}, {"region_code", "on"}});
  RunResult r = sb.run({"import", "--project", kProject, "--generate", "generated.yaml"});
  INFO(r.describe());
  REQUIRE(r.exit_code == 0);
  const std::string text = sb.read("generated.yaml");
  CHECK(contains(text, "name: \"yes\""));
  CHECK(contains(text, "region_code: \"on\""));
  apply_generated(sb, "generated.yaml", 1);
}

TEST_CASE("e2e: guards: a manifest named .YAML or .Yml is read, never skipped as undeclared") {
  Sandbox sb;
  sb.write("m/main.yaml", manifest({vpc_yaml("main")}, {service_yaml("orders")}));
  sb.write("m/MORE.YAML", manifest({}, {service_yaml("billing")}));
  RunResult applied = sb.apply({"-f", "m"});
  INFO(applied.describe());
  REQUIRE(applied.exit_code == 0);
  CHECK(sb.count(kPostService) == 2);
  RunResult pruned = sb.run({"plan", "-f", "m", "--prune", "--detailed-exitcode"});
  INFO(pruned.describe());
  CHECK(pruned.exit_code == 0);  // billing is declared: nothing to delete
}

// Item 10: a --state link to a device is named as the user gave it, with its target.
TEST_CASE("e2e: guards four: a --state link to /dev/zero is refused naming the link and its target") {
  Sandbox sb;
  sb.write("dbform.yaml", manifest({}, {service_yaml("orders")}));
  fs::create_symlink("/dev/zero", sb.dir() / "zero.json");
  for (const std::vector<std::string>& args : {std::vector<std::string>{"plan", "--state", "zero.json"},
                                              std::vector<std::string>{"apply", "--auto-approve", "--state", "zero.json"},
                                              std::vector<std::string>{"state", "list", "--state", "zero.json"}}) {
    RunResult r = sb.run(args);
    INFO(r.describe());
    CHECK(r.exit_code == 1);
    CHECK(contains(r.err, "zero.json is a symbolic link to /dev/zero, which is a device"));
  }
  CHECK(sb.total_requests() == 0);
}
