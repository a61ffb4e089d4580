// The API misbehaving, the process dying, and the less common paths (several projects, Basic auth,
// --no-wait, orphans), through the real binary. What must hold in every case: each declared
// resource exists exactly once in the API and is recorded once.
#include <signal.h>

#include <algorithm>
#include <set>

#include <httplib.h>

#include "common.h"

using namespace e2e;

namespace {

// Every service name in the simulator appears once: nothing was created twice.
void check_no_duplicates(Sandbox& sb, size_t expected) {
  json services = sb.sim().all_services();
  INFO("simulator services: " << services.dump());
  std::multiset<std::string> names;
  for (const auto& s : services) names.insert(s["project_id"].get<std::string>() + "/" + s["name"].get<std::string>());
  CHECK(services.size() == expected);
  for (const auto& n : names) CHECK(names.count(n) == 1);
}

void check_all_ready(Sandbox& sb, const std::vector<std::string>& names) {
  json state = sb.state();
  for (const auto& name : names) {
    json r = find_resource(state, service_address(name));
    INFO(name << ": " << r.dump());
    REQUIRE(r.is_object());
    CHECK(r["status"] == "READY");
    CHECK(r["create_pending"] == false);
    CHECK(!r["id"].get<std::string>().empty());
  }
}

}  // namespace

TEST_CASE("e2e: a create whose answer is lost is adopted by name, never sent twice") {
  auto config = default_sim_config();
  config.faults.drop_create_every = 2;
  Sandbox sb(config);
  sb.write("dbform.yaml", manifest({}, {service_yaml("orders"), service_yaml("billing"), service_yaml("analytics")}));

  RunResult r = sb.apply({"--parallelism", "1"});
  INFO(r.describe() << "\ncounts: " << sb.counts().dump());
  CHECK(r.exit_code == 0);
  CHECK(sb.count(kPostService) == 3);
  CHECK(sb.count(kListServices) >= 1);
  check_no_duplicates(sb, 3);
  check_all_ready(sb, kServices);
  CHECK(contains(r.out, "adopted"));
  // The adopted one's initial password was lost with the answer: it was given a new one, which is
  // what the database has and what `output` prints.
  for (const auto& name : kServices) {
    json rec = find_resource(sb.state(), service_address(name));
    INFO(name);
    const std::string password = rec["initial_password"].get<std::string>();
    CHECK(password == sb.sim().current_password(rec["id"].get<std::string>()));
    RunResult out = sb.run({"output", name + ".password"});
    CHECK(out.exit_code == 0);
    CHECK(out.out == password + "\n");
  }
  CHECK(sb.count("POST /projects/{project_id}/services/{service_id}/updatePassword") == 1);
}

TEST_CASE("e2e: an apply killed (SIGKILL) with a create in flight is finished by the next run without a duplicate") {
  Sandbox sb;
  sb.write("dbform.yaml", manifest({}, {service_yaml("orders")}));

  // The create is performed and its answer held back: killed then, the run certainly had the
  // create in flight.
  HeldAnswer create(sb, 1, [](const dbform::SimRequest& r) { return r.method == "POST" && r.path.ends_with("/services"); });
  auto first = sb.start({"apply", "--auto-approve", "--poll-interval", "100ms"});
  const bool in_flight = create.wait();
  INFO("first run so far:\n" << first->stdout_so_far() << first->stderr_so_far());
  REQUIRE(in_flight);
  first->signal(SIGKILL);
  RunResult killed = first->wait();
  create.release();
  CHECK(killed.exit_code == 128 + SIGKILL);
  CHECK(sb.count(kPostService) == 1);
  CHECK(sb.sim().all_services().size() == 1);  // made, its answer never heard
  json rec = find_resource(sb.state(), service_address("orders"));
  INFO("record left by the killed run: " << rec.dump());
  // The intent was recorded before the call, and no answer after it.
  CHECK(rec["create_pending"] == true);
  CHECK(rec["id"] == "");

  RunResult plan = sb.run({"plan", "--detailed-exitcode"});
  INFO(plan.describe());
  CHECK(plan.exit_code == 2);
  CHECK(contains(plan.out, "0 to create"));

  RunResult r = sb.apply();
  INFO(r.describe() << "\ncounts: " << sb.counts().dump());
  CHECK(r.exit_code == 0);
  check_no_duplicates(sb, 1);
  check_all_ready(sb, {"orders"});
  CHECK(sb.count(kPostService) == 1);
}

TEST_CASE("e2e: apply --no-wait records the creates, and the next apply waits for them without creating") {
  // READY 4 s after its create: the plan between the two applies must find the services still
  // waiting (with the harness's 150 ms, a slow build, e.g. under a sanitizer, found them READY).
  dbform::SimConfig slow = default_sim_config();
  slow.queued_delay = dbform::Duration(2000);
  slow.configuring_delay = dbform::Duration(2000);
  Sandbox sb(slow);
  sb.write("dbform.yaml", base_manifest());
  RunResult r = sb.apply({"--no-wait"});
  INFO(r.describe());
  CHECK(r.exit_code == 0);
  json state = sb.state();
  for (const auto& name : kServices) {
    json rec = find_resource(state, service_address(name));
    CHECK(!rec["id"].get<std::string>().empty());
    CHECK(rec["create_pending"] == false);
    CHECK(!rec["initial_password"].get<std::string>().empty());
  }
  CHECK(sb.count(kGetService) == 0);

  RunResult plan = sb.run({"plan", "--detailed-exitcode"});
  INFO(plan.describe());
  CHECK(plan.exit_code == 2);
  CHECK(contains(plan.out, "0 to create"));
  CHECK(contains(plan.out, "3 to wait for"));

  RunResult wait = sb.apply();
  INFO(wait.describe());
  CHECK(wait.exit_code == 0);
  CHECK(sb.count(kPostService) == 3);
  CHECK(sb.count(kPostVpc) == 1);
  check_all_ready(sb, kServices);
  CHECK(sb.run({"plan", "--detailed-exitcode"}).exit_code == 0);
}

TEST_CASE("e2e: a resource removed from the manifest is reported as an orphan, kept, and never deleted") {
  Sandbox sb;
  apply_base(sb);
  const json counts = sb.counts();
  std::vector<std::string> services = {service_yaml("orders"), service_yaml("analytics")};
  sb.write("dbform.yaml", manifest({vpc_yaml("main")}, services));

  RunResult plan = sb.run({"plan", "--detailed-exitcode"});
  INFO(plan.describe());
  CHECK(plan.exit_code == 0);
  CHECK(contains(plan.out, service_address("billing")));
  CHECK(contains(plan.out, "orphan"));

  RunResult r = sb.apply();
  INFO(r.describe() << "\ncounts: " << sb.counts().dump());
  CHECK(r.exit_code == 0);
  CHECK(find_resource(sb.state(), service_address("billing")).is_object());
  CHECK(writes_of(sb.counts()) == writes_of(counts));  // its refresh read; nothing was sent
  CHECK(sb.sim().all_services().size() == 3);
}

TEST_CASE("e2e: several projects each use their own key, preflighted once each") {
  auto config = default_sim_config();
  config.keys.push_back({"e2e-staging-key-991", "acme-staging", "staging"});
  Sandbox sb(config);
  sb.env.erase("DBFORM_API_KEY");
  sb.write("prod.yaml", manifest({vpc_yaml("main")}, {service_yaml("orders")}));
  sb.write("staging.yaml", "version: 1\nprojects:\n  - id: acme-staging\n    api_key_env: DBFORM_STAGING_DB_KEY\n"
                           "    services:\n" + service_yaml("orders"));

  RunResult missing = sb.apply();
  INFO(missing.describe());
  CHECK(missing.exit_code == 1);
  CHECK(contains(missing.err, "DBFORM_STAGING_DB_KEY"));
  CHECK(contains(missing.err, "DBFORM_API_KEY_ACME_PROD"));
  CHECK(sb.total_requests() == 0);

  RunResult r = sb.apply({}, {{"DBFORM_API_KEY_ACME_PROD", kKey}, {"DBFORM_STAGING_DB_KEY", "e2e-staging-key-991"}});
  INFO(r.describe() << "\ncounts: " << sb.counts().dump());
  CHECK(r.exit_code == 0);
  CHECK(sb.count(kAuthInfo) == 2);
  CHECK(sb.count(kPostService) == 2);
  json services = sb.sim().all_services();
  std::set<std::string> projects;
  for (const auto& s : services) projects.insert(s["project_id"].get<std::string>());
  CHECK(projects == std::set<std::string>{"acme-prod", "acme-staging"});
  CHECK(find_resource(sb.state(), service_address("orders", "acme-staging"))["status"] == "READY");
  CHECK(!contains(r.all(), "e2e-staging-key-991"));
  CHECK(!contains(r.all(), kKey));

  // Two services named orders: the bare name is ambiguous, the full address is not.
  RunResult ambiguous = sb.run({"output", "orders.host"});
  INFO(ambiguous.describe());
  CHECK(ambiguous.exit_code == 1);
  CHECK(contains(ambiguous.err, "ambiguous"));
  CHECK(sb.run({"output", "acme-staging/services/orders.host"}).exit_code == 0);
}

TEST_CASE("e2e: DBFORM_AUTH_SCHEME=basic sends the public:secret key as Basic auth") {
  auto config = default_sim_config();
  config.keys = {{"e2epublic:e2esecret-value", kProject, "basic-key"}};
  Sandbox sb(config);
  sb.write("dbform.yaml", manifest({}, {service_yaml("orders")}));
  RunResult r = sb.apply({}, {{"DBFORM_AUTH_SCHEME", "basic"}, {"DBFORM_API_KEY", "e2epublic:e2esecret-value"}});
  INFO(r.describe());
  CHECK(r.exit_code == 0);
  CHECK(!contains(r.all(), "e2esecret-value"));
  check_all_ready(sb, {"orders"});

  RunResult whoami = sb.run({"whoami"}, {{"DBFORM_AUTH_SCHEME", "basic"}, {"DBFORM_API_KEY", "e2epublic:e2esecret-value"}});
  INFO(whoami.describe());
  CHECK(whoami.exit_code == 0);
  CHECK(contains(whoami.out, kProject));
  CHECK(contains(whoami.out, "basic-key"));
  CHECK(!contains(whoami.all(), "e2esecret-value"));
}

TEST_CASE("e2e: output to a pipe has no colour codes, and NO_COLOR is honoured") {
  Sandbox sb;
  sb.write("dbform.yaml", base_manifest());
  RunResult plan = sb.run({"plan"});
  RunResult r = sb.apply();
  CHECK(r.exit_code == 0);
  CHECK(!contains(plan.all(), "\033["));
  CHECK(!contains(r.all(), "\033["));
  sb.write("dbform.yaml", base_manifest({"search"}));
  RunResult no_color = sb.run({"plan"}, {{"NO_COLOR", "1"}});
  CHECK(!contains(no_color.all(), "\033["));
}

TEST_CASE("e2e: command-line mistakes exit 1 with a message and touch nothing") {
  Sandbox sb;
  sb.write("dbform.yaml", base_manifest());
  const std::vector<std::vector<std::string>> mistakes = {
      {"plan", "--no-such-flag"},
      {"apply", "--auto-approve", "--wait-timeout", "soon"},
      {"apply", "--auto-approve", "--poll-interval", "fast"},
      {"apply", "--auto-approve", "--parallelism", "0"},
      {"nosuchcommand"},
  };
  for (const auto& args : mistakes) {
    RunResult r = sb.run(args);
    INFO(args[0] << " " << (args.size() > 1 ? args[1] : "") << "\n" << r.describe());
    CHECK(r.exit_code == 1);
    CHECK(!r.err.empty());
    CHECK(!sb.exists("dbform.state.json"));
  }
  CHECK(sb.total_requests() == 0);
}

TEST_CASE("e2e: DBFORM_STATE, -f with files and directories, and ${VAR} in manifests") {
  Sandbox sb;
  sb.write("manifests/10-network.yaml", manifest({vpc_yaml("main")}, {}, "${E2E_PROJECT}"));
  sb.write("manifests/20-services.yml", manifest({}, {service_yaml("orders"), service_yaml("billing")}, "${E2E_PROJECT}"));
  sb.write("manifests/notes.txt", "not a manifest: ignored\n");
  sb.write("extra.yaml", manifest({}, {service_yaml("analytics")}));
  const std::map<std::string, std::string> env = {{"DBFORM_VAR_E2E_PROJECT", kProject}, {"DBFORM_STATE", "states/prod.json"}};
  sb.write("states/.keep", "");

  RunResult validate = sb.run({"validate", "-f", "manifests", "-f", "extra.yaml"}, env);
  INFO(validate.describe());
  CHECK(validate.exit_code == 0);
  CHECK(contains(validate.out, "3 file(s), 1 project(s), 1 VPC(s), 3 service(s)"));

  RunResult r = sb.apply({"-f", "manifests", "-f", "extra.yaml"}, env);
  INFO(r.describe());
  CHECK(r.exit_code == 0);
  CHECK(!sb.exists("dbform.state.json"));
  REQUIRE(sb.exists("states/prod.json"));
  json state = sb.state("states/prod.json");
  CHECK(state["resources"].size() == 4);
  CHECK(sb.count(kPostService) == 3);

  // --state wins over DBFORM_STATE; commands without -f read the same state through the variable.
  RunResult list = sb.run({"state", "list"}, env);
  CHECK(std::count(list.out.begin(), list.out.end(), '\n') == 4);
  RunResult other = sb.run({"state", "list", "--state", "elsewhere.json"}, env);
  CHECK(other.exit_code == 0);
  CHECK(other.out.empty());
  RunResult plan = sb.run({"plan", "--detailed-exitcode", "-f", "manifests", "-f", "extra.yaml"}, env);
  INFO(plan.describe());
  CHECK(plan.exit_code == 0);
}

TEST_CASE("e2e: a service passing through UNSTABLE still ends READY") {
  auto config = default_sim_config();
  config.faults.unstable = {"bill*"};
  config.configuring_delay = dbform::Duration(400);  // UNSTABLE lasts this long: several polls see it
  Sandbox sb(config);
  sb.write("dbform.yaml", base_manifest());
  RunResult r = sb.apply();
  INFO(r.describe());
  CHECK(r.exit_code == 0);
  CHECK(contains(r.out, "UNSTABLE"));
  check_all_ready(sb, kServices);
}

TEST_CASE("e2e: whoami names the key and project, and a wrong key is a 401 without the key") {
  Sandbox sb;
  RunResult ok = sb.run({"whoami"});
  INFO(ok.describe());
  CHECK(ok.exit_code == 0);
  CHECK(contains(ok.out, kProject));
  CHECK(contains(ok.out, "e2e-key"));
  CHECK(contains(ok.out, "DBFORM_API_KEY"));
  CHECK(!contains(ok.all(), kKey));

  RunResult bad = sb.run({"whoami"}, {{"DBFORM_API_KEY", "e2e-not-a-key-4432"}});
  INFO(bad.describe());
  CHECK(bad.exit_code == 1);
  CHECK(contains(bad.err, "401"));
  CHECK(!contains(bad.all(), "e2e-not-a-key-4432"));

  RunResult project = sb.run({"whoami", "--project", kProject},
                             {{"DBFORM_API_KEY", "e2e-not-a-key-4432"}, {"DBFORM_API_KEY_ACME_PROD", kKey}});
  INFO(project.describe());
  CHECK(project.exit_code == 0);
  CHECK(contains(project.out, "DBFORM_API_KEY_ACME_PROD"));
}

TEST_CASE("e2e: an unreachable API fails the preflight clearly and creates nothing") {
  Sandbox sb;
  sb.write("dbform.yaml", base_manifest());
  // Port 1: nobody listens there.
  RunResult r = sb.apply({}, {{"DBFORM_API_URL", "http://127.0.0.1:1/public/api/v1"}});
  INFO(r.describe());
  CHECK(r.exit_code == 1);
  CHECK(!r.timed_out);
  CHECK(contains(r.err, "127.0.0.1"));
  if (sb.exists("dbform.state.json")) CHECK(sb.state()["resources"].empty());
}

namespace {

// Creates a service behind dbform's back, as the lost create of a crashed run would have.
std::string create_directly(Sandbox& sb, const std::string& name) {
  httplib::Client client("127.0.0.1", sb.port());
  httplib::Headers headers = {{"Authorization", "Bearer " + kKey}};
  json body = {{"name", name}, {"cpu_millis", "1000"}, {"memory_gbs", "4"}, {"region_code", "us-east-1"}};
  auto res = client.Post(("/public/api/v1/projects/" + kProject + "/services").c_str(), headers, body.dump(),
                         "application/json");
  REQUIRE(res);
  REQUIRE(res->status == 202);
  return json::parse(res->body)["service_id"].get<std::string>();
}

}  // namespace

TEST_CASE("e2e: a recorded intent whose create never arrived is created once") {
  Sandbox sb;
  sb.write("dbform.yaml", manifest({}, {service_yaml("orders")}));
  sb.write("dbform.state.json", state_with_pending_intent("orders"));

  RunResult plan = sb.run({"plan", "--no-refresh", "--detailed-exitcode"});
  INFO(plan.describe());
  CHECK(plan.exit_code == 2);
  CHECK(contains(plan.out, "1 to adopt"));
  CHECK(sb.total_requests() == 0);

  // Nothing of that name ever shows: every lookup across the settle window (kept short here) finds
  // nothing, and only then is the create sent.
  RunResult r = sb.apply({"--settle-window", "2s"});
  INFO(r.describe() << "\ncounts: " << sb.counts().dump());
  CHECK(r.exit_code == 0);
  CHECK(sb.count(kListServices) == 1 + 6);  // the refresh, then the lookups of the settle window
  CHECK(r.elapsed >= std::chrono::seconds(2));
  CHECK(sb.count(kPostService) == 1);
  check_no_duplicates(sb, 1);
  check_all_ready(sb, {"orders"});
  CHECK(!find_resource(sb.state(), service_address("orders"))["initial_password"].get<std::string>().empty());
}

TEST_CASE("e2e: a recorded intent whose create did happen is adopted, not created again") {
  Sandbox sb;
  const std::string id = create_directly(sb, "orders");
  sb.write("dbform.yaml", manifest({}, {service_yaml("orders")}));
  sb.write("dbform.state.json", state_with_pending_intent("orders"));

  RunResult r = sb.apply();
  INFO(r.describe() << "\ncounts: " << sb.counts().dump());
  CHECK(r.exit_code == 0);
  CHECK(sb.count(kPostService) == 1);  // the direct one only
  check_no_duplicates(sb, 1);
  check_all_ready(sb, {"orders"});
  json rec = find_resource(sb.state(), service_address("orders"));
  CHECK(rec["id"] == id);
  CHECK(contains(r.out, "adopted"));
  CHECK(contains(r.all(), "password"));  // says the initial password cannot be recovered
}

TEST_CASE("e2e: two services of the recorded name in the API: apply refuses to guess and creates nothing") {
  Sandbox sb;
  const std::string a = create_directly(sb, "orders");
  const std::string b = create_directly(sb, "orders");
  sb.write("dbform.yaml", manifest({}, {service_yaml("orders")}));
  sb.write("dbform.state.json", state_with_pending_intent("orders"));

  RunResult r = sb.apply();
  INFO(r.describe() << "\ncounts: " << sb.counts().dump());
  CHECK(r.exit_code == 1);
  CHECK(contains(r.err, a));
  CHECK(contains(r.err, b));
  CHECK(sb.count(kPostService) == 2);
  // Still unresolved: the next run looks again rather than creating.
  json rec = find_resource(sb.state(), service_address("orders"));
  CHECK(rec["create_pending"] == true);
}

TEST_CASE("e2e: many services at once are each created exactly once") {
  Sandbox sb;
  std::vector<std::string> names, yaml;
  for (int i = 0; i < 25; ++i) {
    names.push_back("svc-" + std::to_string(i));
    yaml.push_back(service_yaml(names.back()));
  }
  sb.write("dbform.yaml", manifest({vpc_yaml("main")}, yaml));
  RunResult r = sb.apply({"--parallelism", "10"});
  INFO(r.describe() << "\ncounts: " << sb.counts().dump());
  CHECK(r.exit_code == 0);
  CHECK(sb.count(kPostService) == 25);
  check_no_duplicates(sb, 25);
  check_all_ready(sb, names);
  RunResult out = sb.run({"output", "--json"});
  json doc = json::parse(out.out);
  CHECK(doc.size() == 26);
  json state = sb.state();
  for (const auto& name : names) {
    json rec = find_resource(state, service_address(name));
    CHECK(doc[service_address(name)]["port"] == rec["endpoint"]["port"]);
    CHECK(doc[service_address(name)]["host"] == rec["endpoint"]["host"]);
    CHECK(!doc[service_address(name)].contains("password"));
  }
}

TEST_CASE("e2e: a create the API rejects (400) fails by name with the API's message, and the others are created") {
  Sandbox sb;
  // Valid for the manifest (a positive integer) but more than the API accepts.
  std::vector<std::string> services = {service_yaml("orders"), service_yaml("huge", 1234567890), service_yaml("billing")};
  sb.write("dbform.yaml", manifest({}, services));
  RunResult r = sb.apply();
  INFO(r.describe() << "\ncounts: " << sb.counts().dump());
  CHECK(r.exit_code == 1);
  CHECK(contains(r.err, service_address("huge")));
  CHECK(contains(r.err, "400"));
  CHECK(contains(r.err, "cpu_millis"));
  check_all_ready(sb, {"orders", "billing"});
  // Nothing was created, so nothing is recorded and the next plan simply creates it again.
  CHECK(find_resource(sb.state(), service_address("huge")).is_null());
  RunResult plan = sb.run({"plan", "--detailed-exitcode"});
  INFO(plan.describe());
  CHECK(plan.exit_code == 2);
  CHECK(contains(plan.out, "1 to create"));
}

TEST_CASE("e2e: SIGINT during the creates finishes what is in flight, exits 130, and the rerun completes") {
  auto config = default_sim_config();
  config.faults.latency = dbform::Duration(500);
  Sandbox sb(config);
  sb.write("dbform.yaml", base_manifest());

  auto first = sb.start({"apply", "--auto-approve", "--poll-interval", "100ms", "--parallelism", "1"});
  bool started = wait_for_record(sb, service_address("orders"), /*with_id=*/false);
  INFO("first run so far:\n" << first->stdout_so_far() << first->stderr_so_far());
  REQUIRE(started);
  first->signal(SIGINT);
  RunResult stopped = first->wait();
  INFO(stopped.describe() << "\ncounts: " << sb.counts().dump());
  CHECK(!stopped.timed_out);
  CHECK(stopped.exit_code == 130);
  CHECK(contains(stopped.out, "apply again"));
  // What was sent is recorded with its answer; nothing is left half-known.
  json state = sb.state();
  for (const auto& r : state["resources"]) {
    INFO(r.dump());
    CHECK(r["create_pending"] == false);
    CHECK(!r["id"].get<std::string>().empty());
  }
  CHECK(static_cast<long long>(state["resources"].size()) == sb.count(kPostService) + sb.count(kPostVpc));

  RunResult r = sb.apply();
  INFO(r.describe() << "\ncounts: " << sb.counts().dump());
  CHECK(r.exit_code == 0);
  CHECK(sb.count(kPostService) == 3);
  CHECK(sb.count(kPostVpc) == 1);
  check_no_duplicates(sb, 3);
  check_all_ready(sb, kServices);
}
