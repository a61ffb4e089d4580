// The apply lifecycle through the real binary: first apply, idempotent re-runs, additions,
// conflicts, the state file on disk, and services that do not become READY.
#include <sys/stat.h>

#include <atomic>
#include <fstream>

#include "common.h"

using namespace e2e;

namespace {

void check_ready_service(const json& state, const std::string& name) {
  json r = find_resource(state, service_address(name));
  INFO("resource " << name << ": " << r.dump(2));
  REQUIRE(r.is_object());
  CHECK(r["kind"] == "service");
  CHECK(!r["id"].get<std::string>().empty());
  CHECK(r["status"] == "READY");
  CHECK(r["create_pending"] == false);
  REQUIRE(r["endpoint"].is_object());
  CHECK(!r["endpoint"].value("host", "").empty());
  CHECK(r["endpoint"]["port"].is_number_integer());
  CHECK(!r["initial_password"].get<std::string>().empty());
}

std::string count_summary(const Sandbox& sb) { return sb.counts().dump(); }

}  // namespace

TEST_CASE("e2e: first apply creates the VPC and every service and records them READY") {
  Sandbox sb;
  RunResult r = apply_base(sb);
  json state = sb.state();
  INFO(r.describe() << "\nstate: " << state.dump(2) << "\ncounts: " << count_summary(sb));

  CHECK(state["format"] == "dbform-state");
  CHECK(state["version"] == 1);
  CHECK(state["resources"].size() == 4);
  for (const auto& name : kServices) check_ready_service(state, name);
  json vpc = find_resource(state, vpc_address("main"));
  REQUIRE(vpc.is_object());
  CHECK(!vpc["id"].get<std::string>().empty());
  CHECK(vpc["create_pending"] == false);

  // Exactly one create per resource, and the preflight ran.
  CHECK(sb.count(kPostService) == 3);
  CHECK(sb.count(kPostVpc) == 1);
  CHECK(sb.count(kAuthInfo) == 1);

  // The state's ids are the simulator's.
  json services = sb.sim().all_services();
  REQUIRE(services.size() == 3);
  for (const auto& s : services) {
    json rec = find_resource(state, service_address(s["name"]));
    REQUIRE(rec.is_object());
    CHECK(rec["id"] == s["service_id"]);
    CHECK(rec["endpoint"]["host"] == s["endpoint"]["host"]);
    CHECK(rec["endpoint"]["port"] == s["endpoint"]["port"]);
  }
  // The user sees where each service is.
  for (const auto& name : kServices) CHECK(contains(r.out, service_address(name)));
}

TEST_CASE("e2e: after an apply, plan shows no changes and a second apply only reads, once per project and kind") {
  Sandbox sb;
  apply_base(sb);
  const json counts = sb.counts();
  // Each refresh (plan's and apply's): the key's preflight and one list per kind for the project.
  auto refreshed = [&](int times) {
    json expected = counts;
    for (const char* read : {"GET /auth/info", "GET /projects/{project_id}/services", "GET /projects/{project_id}/vpcs"})
      expected[read] = expected.value(read, 0) + times;
    return expected;
  };

  RunResult plan = sb.run({"plan", "--detailed-exitcode"});
  INFO(plan.describe());
  CHECK(plan.exit_code == 0);
  CHECK(contains(plan.out, "No changes"));
  CHECK(sb.counts() == refreshed(1));
  CHECK(sb.run({"plan", "--no-refresh", "--detailed-exitcode"}).exit_code == 0);
  CHECK(sb.counts() == refreshed(1));  // from the state alone

  RunResult again = sb.apply();
  INFO(again.describe() << "\ncounts before: " << counts.dump() << "\ncounts after: " << count_summary(sb));
  CHECK(again.exit_code == 0);
  CHECK(contains(again.out, "No changes"));
  CHECK(sb.count(kPostService) == 3);
  CHECK(sb.count(kPostVpc) == 1);
  CHECK(sb.counts() == refreshed(2));
  RunResult offline = sb.apply({"--no-refresh"});
  CHECK(offline.exit_code == 0);
  CHECK(sb.counts() == refreshed(2));  // nothing to do, nothing asked
}

TEST_CASE("e2e: a service added to the manifest is planned and created alone") {
  Sandbox sb;
  apply_base(sb);
  sb.write("dbform.yaml", base_manifest({"search"}));

  RunResult plan = sb.run({"plan", "--detailed-exitcode"});
  INFO(plan.describe());
  CHECK(plan.exit_code == 2);
  CHECK(contains(plan.out, "1 to create"));
  CHECK(contains(plan.out, service_address("search")));
  CHECK(!contains(plan.out, service_address("orders") + " will be created"));

  RunResult r = sb.apply();
  INFO(r.describe() << "\ncounts: " << count_summary(sb));
  CHECK(r.exit_code == 0);
  CHECK(sb.count(kPostService) == 4);
  CHECK(sb.count(kPostVpc) == 1);
  check_ready_service(sb.state(), "search");

  RunResult after = sb.run({"plan", "--detailed-exitcode"});
  CHECK(after.exit_code == 0);
}

TEST_CASE("e2e: a region change needs a replacement: plan and apply refuse it by name, and nothing is sent") {
  Sandbox sb;
  apply_base(sb);
  const std::string before = sb.read("dbform.state.json");
  const std::string backup_before = sb.read("dbform.state.json.backup");
  const json counts = sb.counts();

  std::string moved = service_yaml("orders", 2000);
  moved.replace(moved.find("us-east-1"), 9, "eu-west-1");
  sb.write("dbform.yaml", manifest({vpc_yaml("main")}, {moved, service_yaml("billing"), service_yaml("analytics")}));

  for (bool detailed : {false, true}) {
    std::vector<std::string> args = {"plan", "--no-refresh"};
    if (detailed) args.push_back("--detailed-exitcode");
    RunResult plan = sb.run(args);
    INFO(plan.describe());
    CHECK(plan.exit_code == 1);
    CHECK(contains(plan.all(), service_address("orders")));
    CHECK(contains(plan.all(), "region_code"));
    CHECK(contains(plan.all(), "requires replacing the database"));
    CHECK(contains(plan.all(), "never replaces"));
    // The conflict hides nothing else: the resize beside it is shown too.
    CHECK(contains(plan.all(), "\"1000\" -> \"2000\""));
  }
  // A plan without a refresh reads nothing and writes nothing.
  CHECK(sb.read("dbform.state.json") == before);
  CHECK(sb.read("dbform.state.json.backup") == backup_before);
  CHECK(sb.counts() == counts);

  RunResult r = sb.apply();
  INFO(r.describe() << "\ncounts: " << count_summary(sb));
  CHECK(r.exit_code == 1);
  CHECK(contains(r.all(), "requires replacing the database"));
  // Its refresh read the project (the key, one list per kind); nothing else was asked or sent.
  json expected = counts;
  for (const char* read : {"GET /auth/info", "GET /projects/{project_id}/services", "GET /projects/{project_id}/vpcs"})
    expected[read] = expected.value(read, 0) + 1;
  CHECK(sb.counts() == expected);
  json state = sb.state();
  CHECK(find_resource(state, service_address("orders"))["settings"]["region_code"] == "us-east-1");
}

TEST_CASE("e2e: the state file is private (0600) and the previous version is kept as a backup") {
  Sandbox sb;
  apply_base(sb);
  struct stat st {};
  REQUIRE(::stat((sb.dir() / "dbform.state.json").c_str(), &st) == 0);
  CHECK((st.st_mode & 07777) == 0600);

  // Every apply writes several times (intents, then results), so a backup exists already, one
  // serial behind, and it holds passwords too: it must be just as private.
  REQUIRE(sb.exists("dbform.state.json.backup"));
  struct stat bst {};
  REQUIRE(::stat((sb.dir() / "dbform.state.json.backup").c_str(), &bst) == 0);
  CHECK((bst.st_mode & 07777) == 0600);
  json state = sb.state();
  json backup = sb.state("dbform.state.json.backup");
  CHECK(backup["lineage"] == state["lineage"]);
  CHECK(backup["serial"].get<long long>() == state["serial"].get<long long>() - 1);

  // One more write (state rm): the backup is now exactly the file as it was before that write.
  const std::string before_rm = sb.read("dbform.state.json");
  RunResult rm = sb.run({"state", "rm", "analytics"});
  INFO(rm.describe());
  REQUIRE(rm.exit_code == 0);
  CHECK(sb.read("dbform.state.json.backup") == before_rm);
  CHECK(sb.state()["serial"].get<long long>() == state["serial"].get<long long>() + 1);
  REQUIRE(::stat((sb.dir() / "dbform.state.json").c_str(), &st) == 0);
  CHECK((st.st_mode & 07777) == 0600);
}

TEST_CASE("e2e: a stuck service fails alone at --wait-timeout, the others are READY and nothing is created twice") {
  auto config = default_sim_config();
  config.faults.stuck = {"billing"};
  Sandbox sb(config);
  sb.write("dbform.yaml", base_manifest());

  RunResult r = sb.apply({"--wait-timeout", "1s"});
  INFO(r.describe() << "\ncounts: " << count_summary(sb));
  CHECK(r.exit_code == 1);
  CHECK(contains(r.err, service_address("billing")));
  CHECK(!contains(r.err, service_address("orders") + ":"));
  CHECK(r.elapsed < std::chrono::seconds(20));

  json state = sb.state();
  INFO("state: " << state.dump(2));
  check_ready_service(state, "orders");
  check_ready_service(state, "analytics");
  json billing = find_resource(state, service_address("billing"));
  REQUIRE(billing.is_object());
  CHECK(!billing["id"].get<std::string>().empty());
  CHECK(billing["create_pending"] == false);
  CHECK(billing["status"] == "CONFIGURING");
  CHECK(!billing["initial_password"].get<std::string>().empty());

  RunResult plan = sb.run({"plan", "--detailed-exitcode"});
  INFO(plan.describe());
  CHECK(plan.exit_code == 2);
  CHECK(contains(plan.out, "0 to create"));
  CHECK(contains(plan.out, "1 to wait for"));

  RunResult again = sb.apply({"--wait-timeout", "1s"});
  INFO(again.describe() << "\ncounts: " << count_summary(sb));
  CHECK(again.exit_code == 1);
  CHECK(contains(again.err, service_address("billing")));
  CHECK(sb.count(kPostService) == 3);
  CHECK(sb.count(kPostVpc) == 1);
  CHECK(sb.count(kGetService) > 0);
  // The watch's reads carry no password: the one recorded at the create must survive them.
  json after = find_resource(sb.state(), service_address("billing"));
  CHECK(after["initial_password"] == billing["initial_password"]);
  CHECK(after["id"] == billing["id"]);
}

TEST_CASE("e2e: a service that ends DELETED fails by name, a rerun reports it deleted and creates it once more") {
  auto config = default_sim_config();
  config.faults.deleted = {"analytics"};
  Sandbox sb(config);
  sb.write("dbform.yaml", base_manifest());

  RunResult r = sb.apply({"--wait-timeout", "30s"});
  INFO(r.describe() << "\ncounts: " << count_summary(sb));
  CHECK(r.exit_code == 1);
  CHECK(contains(r.err, service_address("analytics")));
  CHECK(contains(r.all(), "DELETED"));
  CHECK(r.elapsed < std::chrono::seconds(20));  // a terminal status fails at once, not at the timeout
  json state = sb.state();
  check_ready_service(state, "orders");
  check_ready_service(state, "billing");

  // DELETED is gone: the refresh says so and the service is created again, once.
  RunResult again = sb.apply({"--wait-timeout", "30s"});
  INFO(again.describe() << "\ncounts: " << count_summary(sb));
  CHECK(again.exit_code == 1);
  CHECK(contains(again.out, "deleted outside dbform"));
  CHECK(contains(again.err, service_address("analytics")));
  CHECK(sb.count(kPostService) == 4);
  CHECK(sb.count(kPostVpc) == 1);
  // Without a refresh, the recorded DELETED fails at once and nothing is created.
  RunResult offline = sb.apply({"--no-refresh", "--wait-timeout", "30s"});
  INFO(offline.describe());
  CHECK(offline.exit_code == 1);
  CHECK(contains(offline.err, "will not become READY"));
  CHECK(sb.count(kPostService) == 4);
}

TEST_CASE("e2e: rewriting a setting in an equivalent spelling is not a conflict") {
  Sandbox sb;
  const std::string head = "version: 1\nprojects:\n  - id: acme-prod\n    services:\n";
  sb.write("dbform.yaml", head +
                              "      - name: orders\n        cpu_millis: 1000\n        memory_gbs: 4\n"
                              "        replica_count: 2\n        environment_tag: PROD\n");
  RunResult r = sb.apply();
  INFO(r.describe());
  REQUIRE(r.exit_code == 0);

  const std::vector<std::pair<std::string, std::string>> spellings = {
      {"quoted numbers",
       "      - name: orders\n        cpu_millis: \"1000\"\n        memory_gbs: \"4\"\n"
       "        replica_count: 2\n        environment_tag: PROD\n"},
      {"numbers written as floats",
       "      - name: orders\n        cpu_millis: 1000.0\n        memory_gbs: 4.0\n"
       "        replica_count: 2.0\n        environment_tag: PROD\n"},
      {"keys in another order",
       "      - environment_tag: PROD\n        replica_count: 2\n        memory_gbs: 4\n"
       "        cpu_millis: 1000\n        name: orders\n"},
      {"flow style", "      - {name: orders, cpu_millis: 1000, memory_gbs: 4, replica_count: 2, environment_tag: PROD}\n"},
  };
  for (const auto& [what, services] : spellings) {
    sb.write("dbform.yaml", head + services);
    RunResult plan = sb.run({"plan", "--detailed-exitcode"});
    INFO(what << "\n" << plan.describe());
    CHECK(plan.exit_code == 0);
    CHECK(contains(plan.out, "No changes"));
  }
}

TEST_CASE("e2e: the order of addons does not matter") {
  Sandbox sb;
  const std::string head = "version: 1\nprojects:\n  - id: acme-prod\n    services:\n      - name: orders\n";
  sb.write("dbform.yaml", head + "        addons: [time-series, ai]\n");
  RunResult r = sb.apply();
  INFO(r.describe());
  REQUIRE(r.exit_code == 0);
  sb.write("dbform.yaml", head + "        addons: [ai, time-series]\n");
  RunResult plan = sb.run({"plan", "--detailed-exitcode"});
  INFO(plan.describe());
  CHECK(plan.exit_code == 0);
}

TEST_CASE("e2e: with many projects, one is watched closely and each other is listed once, when its services will be READY") {
  // 60 projects of 3 services, READY 2.5 s after their create. The first project is the probe:
  // listed every quarter second until READY (about 10 lists); the others wait, then each is listed
  // once at its last create's time plus what the probe took. Before the forecast, each project
  // cost a list at 2 s and one at 4 s: 180 lists beside the 60 of the refresh.
  dbform::SimConfig config = default_sim_config();
  config.queued_delay = dbform::Duration(1000);
  config.configuring_delay = dbform::Duration(1500);
  const int projects = 60;
  std::string manifest = "version: 1\nprojects:\n";
  std::map<std::string, std::string> keys;
  for (int p = 0; p < projects; ++p) {
    const std::string id = "proj-" + std::to_string(p), key = "e2e-key-" + id;
    config.keys.push_back({key, id, "e2e-key"});
    keys["DBFORM_KEY_" + std::to_string(p)] = key;
    manifest += "  - id: " + id + "\n    api_key_env: DBFORM_KEY_" + std::to_string(p) + "\n    services:\n";
    for (int s = 0; s < 3; ++s)
      manifest += "      - name: db-" + std::to_string(s) + "\n        cpu_millis: 1000\n        memory_gbs: 4\n        region_code: us-east-1\n";
  }
  Sandbox sb(config);
  sb.write("dbform.yaml", manifest);
  RunResult r = sb.run({"apply", "--auto-approve"}, keys);
  INFO(r.describe() << "\ncounts: " << sb.counts().dump());
  REQUIRE(r.exit_code == 0);
  CHECK(sb.count("POST /projects/{project_id}/services") == 3 * projects);
  const long long lists = sb.count("GET /projects/{project_id}/services");
  CHECK(lists >= 2 * projects);  // the refresh's, and at least one round each
  CHECK(lists <= 2 * projects + 20);
  CHECK(sb.count("GET /projects/{project_id}/services/{service_id}") == 0);
}

// Folding the journal rewrites the whole state while the run waits for it; a state growing from
// nothing would be rewritten at each doubling while its creates are sent. An apply folds at its end
// (and on the way only past StateStore::kRunJournalFloor): while it sends 400 creates, the document
// is the one its first write made, every change in the journal; at its end, all in the document.
TEST_CASE("e2e: an apply folds the state's journal at its end, not while it sends its creates") {
  Sandbox sb;
  std::vector<std::string> services;
  for (int i = 0; i < 400; ++i) services.push_back(service_yaml("tenant-" + std::to_string(i)));
  sb.write("dbform.yaml", manifest({}, services));
  std::atomic<int> posts{0};
  std::atomic<long> records_at_last_post{-1};
  std::atomic<size_t> journal_at_last_post{0};
  const fs::path document = sb.dir() / "dbform.state.json", journal = sb.dir() / "dbform.state.json.journal";
  sb.observe([&](const dbform::SimRequest& request) {
    if (request.method != "POST" || request.path != "/projects/" + kProject + "/services") return;
    if (++posts != 400) return;
    // The document alone, as a fold would have left it (its journal not replayed).
    std::ifstream in(document);
    const json doc = json::parse(in, nullptr, false);
    records_at_last_post = doc.is_object() ? static_cast<long>(doc.value("resources", json::array()).size()) : 0;
    std::error_code ec;
    journal_at_last_post = fs::file_size(journal, ec);
  });
  RunResult r = sb.apply();
  sb.observe(nullptr);
  INFO(r.describe());
  REQUIRE(r.exit_code == 0);
  REQUIRE(posts == 400);
  // Far more journal than the 256 KiB that folds one outside an apply, and no fold yet.
  CHECK(journal_at_last_post > size_t{256} * 1024);
  CHECK(records_at_last_post < 50);
  std::ifstream in(document);
  CHECK(json::parse(in)["resources"].size() == 400);
  CHECK((!sb.exists("dbform.state.json.journal") || sb.read("dbform.state.json.journal").empty()));
}
