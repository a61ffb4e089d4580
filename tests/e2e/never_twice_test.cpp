// The never-twice promise against the faults of real networks (issue "Never twice, for real"): for
// each, the real binary against the seeded simulator ends with every declared service existing
// exactly once, recorded READY with its id and with the password the database really has.
#include <signal.h>

#include <set>

#include "common.h"

using namespace e2e;

namespace {

std::vector<std::string> names(const std::string& prefix, int count) {
  std::vector<std::string> out;
  for (int i = 1; i <= count; ++i) out.push_back(prefix + std::to_string(i));
  return out;
}

std::string manifest_of(const std::vector<std::string>& services) {
  std::vector<std::string> blocks;
  for (const auto& s : services) blocks.push_back(service_yaml(s));
  return manifest({}, blocks);
}

// Each name exists once in the simulator, and the state records it READY with its id and the
// password the simulator says the service has.
void check_once_recorded_with_password(Sandbox& sb, const std::vector<std::string>& expected,
                                       const std::string& state_file = "dbform.state.json") {
  json services = sb.sim().all_services();
  INFO("simulator: " << services.dump());
  std::multiset<std::string> seen;
  for (const auto& s : services) seen.insert(s["name"].get<std::string>());
  CHECK(services.size() == expected.size());
  json state = sb.state(state_file);
  for (const auto& n : expected) {
    INFO(n);
    CHECK(seen.count(n) == 1);
    json rec = find_resource(state, service_address(n));
    REQUIRE(rec.is_object());
    CHECK(rec["status"] == "READY");
    const std::string id = rec["id"].get<std::string>();
    CHECK(!id.empty());
    CHECK(!rec["initial_password"].get<std::string>().empty());
    CHECK(rec["initial_password"] == sb.sim().current_password(id));
    CHECK(!rec.contains("pending_password"));
  }
}

long long fault_count(Sandbox& sb, const std::string& fault) {
  json counts = sb.sim().fault_counts();
  return counts.contains(fault) ? counts[fault].get<long long>() : 0;
}

}  // namespace

TEST_CASE("e2e: never twice: answers lost before their first byte on kept-alive connections are never replayed") {
  const int parallelism = GENERATE(1, 3);
  auto config = default_sim_config();
  config.faults.lose_answer_every = 2;
  Sandbox sb(config);
  const auto services = names("lost", 18);
  sb.write("dbform.yaml", manifest_of(services));
  RunResult r = sb.apply({"--parallelism", std::to_string(parallelism)});
  INFO("parallelism " << parallelism << "\n" << r.describe() << "\ncounts: " << sb.counts().dump());
  CHECK(r.exit_code == 0);
  CHECK(fault_count(sb, "answer lost before its first byte") == 9);
  CHECK(sb.count(kPostService) == 18);  // each create reached the API exactly once
  check_once_recorded_with_password(sb, services);
  CHECK(contains(r.out, "adopted"));
  CHECK(contains(r.all(), "the kept-alive connection closed before an answer came"));  // not libcurl's "seek callback"
}

TEST_CASE("e2e: never twice: a gateway's 504 after the commit, with a list 6 s behind, is settled, not re-sent") {
  auto config = default_sim_config();
  config.faults.gateway_timeout_every = 2;
  config.faults.list_lag = dbform::Duration(6000);
  Sandbox sb(config);
  const auto services = names("slow", 6);
  sb.write("dbform.yaml", manifest_of(services));
  RunResult r = sb.apply();
  INFO(r.describe() << "\ncounts: " << sb.counts().dump());
  CHECK(r.exit_code == 0);
  CHECK(fault_count(sb, "504 after the create was committed") == 3);
  CHECK(sb.count(kPostService) == 6);
  // Each unknown outcome was looked up more than once: the first lookups found nothing yet.
  CHECK(sb.count(kListServices) > 1 + 3);
  check_once_recorded_with_password(sb, services);
}

TEST_CASE("e2e: never twice: a settle window shorter than the list's lag is what lets a duplicate through") {
  // The control for the test above: the same faults with lookups that end before the list shows
  // the service. It proves that the window, not luck, is what prevents the duplicate.
  auto config = default_sim_config();
  config.faults.gateway_timeout_every = 1;
  config.faults.list_lag = dbform::Duration(4000);
  Sandbox sb(config);
  sb.write("dbform.yaml", manifest_of({"once"}));
  RunResult r = sb.apply({"--settle-window", "200ms", "--wait-timeout", "20s"});
  INFO(r.describe() << "\ncounts: " << sb.counts().dump());
  CHECK(sb.count(kPostService) > 1);
  CHECK(sb.sim().all_services().size() > 1);
}

TEST_CASE("e2e: never twice: against an empty state, services that already exist are named and not created") {
  Sandbox sb;
  const std::vector<std::string> services = {"legacy", "orders", "billing"};
  sb.write("dbform.yaml", manifest_of(services));
  REQUIRE(sb.apply().exit_code == 0);
  const long long creates = sb.count(kPostService);
  json state = sb.state();

  // A wrong --state path, as a new user typed it.
  RunResult plan = sb.run({"plan", "--refresh", "--state", "typo.json"});
  INFO(plan.describe());
  CHECK(plan.exit_code == 1);
  CHECK(contains(plan.out, "No state at typo.json"));
  for (const auto& n : services) {
    CHECK(contains(plan.out, find_resource(state, service_address(n))["id"].get<std::string>()));
  }
  CHECK(contains(plan.out, "dbform import"));

  RunResult apply = sb.apply({"--state", "typo.json"});
  INFO(apply.describe());
  CHECK(apply.exit_code == 1);
  CHECK(contains(apply.out, "No state at typo.json"));
  CHECK(contains(apply.all(), "3 conflict"));

  // Without the refresh, the engine's own guard still refuses each one by name.
  RunResult unrefreshed = sb.apply({"--state", "typo2.json", "--no-refresh"});
  INFO(unrefreshed.describe());
  CHECK(unrefreshed.exit_code == 1);
  for (const auto& n : services) {
    const std::string id = find_resource(state, service_address(n))["id"].get<std::string>();
    CHECK(contains(unrefreshed.err, service_address(n) + ": not created: a service of this name already exists (id " +
                                        id + ")"));
  }
  CHECK(sb.count(kPostService) == creates);
  CHECK(sb.sim().all_services().size() == services.size());
}

// The refresh before the prompt found no `orders`; while the person reads the plan, an apply of
// another state creates it. Their `yes` must not create a second one.
TEST_CASE("e2e: never twice: a service created elsewhere while apply waits for 'yes' is not created again") {
  Sandbox sb;
  sb.write("dbform.yaml", manifest_of({"orders"}));
  Process asking({"apply", "--state", "first.json", "--poll-interval", "100ms"}, sb.env, sb.dir(), "",
                 std::chrono::seconds(60), /*tty=*/true);
  const bool asked = eventually([&] { return contains(asking.stdout_so_far(), "Enter a value:"); }, std::chrono::seconds(30));
  INFO(asking.stdout_so_far() << asking.stderr_so_far());
  REQUIRE(asked);
  REQUIRE(sb.count(kPostService) == 0);

  RunResult elsewhere = sb.apply({"--state", "second.json"});
  INFO(elsewhere.describe());
  REQUIRE(elsewhere.exit_code == 0);
  const std::string id = find_resource(sb.state("second.json"), service_address("orders"))["id"].get<std::string>();

  asking.type("yes\n");
  RunResult answered = asking.wait();
  INFO(answered.describe());
  CHECK(answered.exit_code == 1);
  CHECK(contains(answered.err, service_address("orders") +
                                   ": not created: a service of this name already exists (id " + id + ")"));
  CHECK(sb.count(kPostService) == 1);
  CHECK(sb.sim().all_services().size() == 1);
}

// An apply died after its create went out and before the answer; the list does not show the service
// yet. Forgetting that record would let the next apply create a second one.
TEST_CASE("e2e: never twice: state rm refuses a service whose create's outcome is unknown, unless --force") {
  Sandbox sb;
  const std::string id = console_service(sb, {{"name", "orders"}});  // the create arrived; its answer did not
  sb.write("dbform.state.json", state_with_pending_intent("orders"));
  sb.write("dbform.yaml", manifest_of({"orders"}));
  const std::string before = sb.read("dbform.state.json");

  RunResult refused = sb.run({"state", "rm", "orders"});
  INFO(refused.describe());
  CHECK(refused.exit_code != 0);
  CHECK(contains(refused.err, "nothing was removed"));
  CHECK(contains(refused.err, "--force"));
  CHECK(sb.read("dbform.state.json") == before);

  SECTION("the way it names: apply adopts it") {
    REQUIRE(sb.apply().exit_code == 0);
    CHECK(sb.count(kPostService) == 0);
    CHECK(find_resource(sb.state(), service_address("orders"))["id"] == id);
  }
  SECTION("--force forgets it, and says it may exist") {
    RunResult forced = sb.run({"state", "rm", "--force", "orders"});
    INFO(forced.describe());
    CHECK(forced.exit_code == 0);
    CHECK(contains(forced.out, "may exist in the API"));
    CHECK(find_resource(sb.state(), service_address("orders")).is_null());
  }
  CHECK(sb.sim().all_services().size() == 1);
}

// A plan saved before another writer (an apply of another state) began creating in the project:
// applying it creates none of the project's services, not only those whose names exist by now.
// The saved plan was refreshed, so apply's own refresh finds the name taken and refuses the whole
// plan as stale before any call; with --no-refresh the engine's name guard refuses the project.
TEST_CASE("e2e: never twice: a saved plan applied while another state creates in its project creates nothing there") {
  Sandbox sb;
  sb.write("dbform.yaml", manifest_of({"orders", "billing", "search"}));
  REQUIRE(sb.run({"plan", "--out", "tfplan"}).exit_code == 0);
  REQUIRE(sb.run({"plan", "--no-refresh", "--out", "offline.plan"}).exit_code == 0);
  const std::string id = console_service(sb, {{"name", "orders"}});  // the other writer's first create

  RunResult r = sb.run({"apply", "tfplan"});
  INFO(r.describe());
  CHECK(r.exit_code == 1);
  CHECK(contains(r.err, "what exists has changed since the plan was made"));
  CHECK(contains(r.err, "plans otherwise now for " + service_address("orders")));
  CHECK(sb.count(kPostService) == 0);

  r = sb.run({"apply", "offline.plan"});
  INFO(r.describe());
  CHECK(r.exit_code == 1);
  CHECK(contains(r.err, service_address("orders") + ": not created: a service of this name already exists (id " + id));
  for (const char* other : {"billing", "search"})
    CHECK(contains(r.err, service_address(other) + ": not created: in project " + kProject + ", " +
                              service_address("orders") + " exist(s) already"));
  CHECK(sb.count(kPostService) == 0);
  CHECK(sb.sim().all_services().size() == 1);
}

// A duplicate made where dbform could not see it (another state, or a create sent again after a
// settle window shorter than the list's lag) is held by no record: every refreshed plan names it.
TEST_CASE("e2e: never twice: a live namesake of a recorded service that no record holds is named by every plan") {
  Sandbox sb;
  sb.write("dbform.yaml", manifest_of({"billing", "orders"}));
  REQUIRE(sb.apply().exit_code == 0);
  const std::string recorded = find_resource(sb.state(), service_address("orders"))["id"];
  const std::string twin = console_service(sb, {{"name", "orders"}});

  RunResult plan = sb.run({"plan"});
  INFO(plan.describe());
  CHECK(plan.exit_code == 0);
  CHECK(contains(plan.out, "No changes"));
  CHECK(contains(plan.err, "dbform.yaml:9:9: warning: " + service_address("orders") +
                               ": 1 other service named `orders` exists beside the recorded " + recorded +
                               ", held by no record here (" + twin + "): duplicates?"));
  CHECK_FALSE(contains(plan.err, "billing"));
  RunResult markdown = sb.run({"plan", "--format", "markdown"});
  CHECK(contains(markdown.out, "Warnings"));
  CHECK(contains(markdown.out, twin));
  RunResult apply = sb.apply();
  CHECK(contains(apply.err, twin));
  CHECK(sb.count(kPostService) == 2);

  // Not duplicates of anything recorded: two namesakes of a declared create (a conflict), and a
  // service of the name a recorded one is about to be renamed to.
  console_service(sb, {{"name", "search"}});
  console_service(sb, {{"name", "search"}});
  console_service(sb, {{"name", "ledger"}});
  sb.write("dbform.yaml", manifest({}, {service_yaml("ledger") + "        renamed_from: billing\n",
                                        service_yaml("orders"), service_yaml("search")}));
  RunResult others = sb.run({"plan"});
  INFO(others.describe());
  CHECK(others.exit_code == 1);
  CHECK(contains(others.out, service_address("search")));
  CHECK_FALSE(contains(others.err, "named `search`"));
  CHECK_FALSE(contains(others.err, "named `ledger`"));
  CHECK(contains(others.err, "named `orders`"));
  // The rename would make `ledger` ambiguous, as a create would: a conflict, nothing is applied.
  CHECK(contains(others.out, "renaming it to `ledger` would give two services one name"));
  RunResult refused = sb.apply();
  CHECK(refused.exit_code == 1);
  CHECK(sb.count("POST /projects/{project_id}/services/{service_id}/rename") == 0);
}

TEST_CASE("e2e: never twice: Ctrl-C at apply's question sends nothing and exits 130") {
  Sandbox sb;
  sb.write("dbform.yaml", manifest_of({"orders"}));
  Process asking({"apply"}, sb.env, sb.dir(), "", std::chrono::seconds(60), /*tty=*/true);
  REQUIRE(eventually([&] { return contains(asking.stdout_so_far(), "Enter a value:"); }, std::chrono::seconds(30)));
  asking.signal(SIGINT);
  RunResult r = asking.wait();
  INFO(r.describe());
  CHECK(r.exit_code == 130);
  CHECK(sb.count(kPostService) == 0);
}

TEST_CASE("e2e: never twice: apply --json stays valid JSON for error bodies that are not UTF-8") {
  auto config = default_sim_config();
  config.faults.garbled_errors = true;
  config.faults.error_rate = 0.15;
  config.seed = 5;
  Sandbox sb(config);
  // `huge` is refused (400) with a body the simulator garbles; the 500s are garbled too.
  sb.write("dbform.yaml", manifest({}, {service_yaml("orders"), service_yaml("huge", 1234567890),
                                        service_yaml("billing")}));
  // A create answered 500 whose service does not exist (`huge`) is looked up for the whole window.
  RunResult r = sb.apply({"--json", "--wait-timeout", "1m", "--settle-window", "2s"});
  INFO(r.describe() << "\nfaults: " << sb.sim().fault_counts().dump());
  CHECK(r.exit_code == 1);
  CHECK(fault_count(sb, "error body not UTF-8") >= 1);
  std::set<std::string> types;
  std::istringstream lines(r.out);
  for (std::string line; std::getline(lines, line);) {
    INFO(line);
    json j = json::parse(line);  // throws on a line that is not valid JSON
    types.insert(j["type"].get<std::string>());
    if (j["type"] == "failed") CHECK(contains(j["error"].get<std::string>(), "400"));
  }
  CHECK(types.count("failed") == 1);
  CHECK(types.count("summary") == 1);
  CHECK(!contains(r.all(), "json.exception"));
  check_once_recorded_with_password(sb, {"orders", "billing"});
}

TEST_CASE("e2e: never twice: SIGHUP while create answers are in flight records every one with its password") {
  auto config = default_sim_config();
  config.faults.create_answer_delay = dbform::Duration(1500);
  Sandbox sb(config);
  const auto services = names("hup", 3);
  sb.write("dbform.yaml", manifest_of(services));
  auto run = sb.start({"apply", "--auto-approve", "--poll-interval", "100ms", "--parallelism", "3"});
  // All three creates performed, their answers still on the way: the SSH session drops.
  REQUIRE(eventually([&] { return sb.sim().all_services().size() == 3; }, std::chrono::seconds(20)));
  run->signal(SIGHUP);
  RunResult stopped = run->wait();
  INFO(stopped.describe() << "\ncounts: " << sb.counts().dump());
  CHECK(stopped.exit_code == 130);
  json state = sb.state();
  for (const auto& n : services) {
    json rec = find_resource(state, service_address(n));
    INFO(n << ": " << rec.dump());
    REQUIRE(rec.is_object());
    CHECK(!rec["id"].get<std::string>().empty());
    CHECK(rec["initial_password"] == sb.sim().current_password(rec["id"].get<std::string>()));
  }
  RunResult finish = sb.apply();
  INFO(finish.describe());
  CHECK(finish.exit_code == 0);
  CHECK(sb.count(kPostService) == 3);
  check_once_recorded_with_password(sb, services);
}

TEST_CASE("e2e: never twice: `apply --json | head -1` loses the output, not the records") {
  auto config = default_sim_config();
  config.faults.create_answer_delay = dbform::Duration(500);
  Sandbox sb(config);
  const auto services = names("piped", 3);
  sb.write("dbform.yaml", manifest_of(services));
  RunResult r = sb.run_shell("\"$DBFORM\" apply --auto-approve --json --poll-interval 100ms | head -1");
  INFO(r.describe() << "\ncounts: " << sb.counts().dump());
  CHECK(r.exit_code == 0);
  CHECK(json::parse(r.out)["type"] == "plan");  // the one line head read
  CHECK(sb.count(kPostService) == 3);
  check_once_recorded_with_password(sb, services);
}

TEST_CASE("e2e: never twice: SIGTERM ends a long Retry-After wait at once") {
  auto config = default_sim_config();
  config.faults.rate_limit_every = 1;  // every call 429
  config.faults.retry_after_seconds = 300;
  Sandbox sb(config);
  sb.write("dbform.yaml", manifest_of({"patient"}));
  auto run = sb.start({"apply", "--auto-approve", "--poll-interval", "100ms", "--no-refresh"});
  REQUIRE(eventually([&] { return sb.total_requests() >= 1; }, std::chrono::seconds(20)));
  const auto signalled = std::chrono::steady_clock::now();
  run->signal(SIGTERM);
  RunResult r = run->wait();
  INFO(r.describe());
  CHECK(r.exit_code != 0);
  CHECK(std::chrono::steady_clock::now() - signalled < std::chrono::seconds(5));
  CHECK(contains(r.err, "stopped instead of trying again"));
  CHECK(sb.count(kPostService) == 0);
}

TEST_CASE("e2e: never twice: read replica sets and peerings through lost answers on kept-alive connections and late-listed 504s") {
  struct Faults {
    int lose_every, gateway_every, lag_ms;
    const char* fault;
  };
  const Faults f = GENERATE(Faults{2, 0, 0, "answer lost before its first byte"},
                            Faults{0, 2, 3000, "504 after the create was committed"});
  auto config = default_sim_config();
  config.faults.lose_answer_every = f.lose_every;
  config.faults.gateway_timeout_every = f.gateway_every;
  config.faults.list_lag = dbform::Duration(f.lag_ms);
  Sandbox sb(config);
  std::string vpc = vpc_yaml("net") + "        peerings:\n";
  for (const char* peer : {"vpc-0aaa", "vpc-0bbb", "vpc-0ccc"})
    vpc += "          - peer_account_id: \"123456789012\"\n            peer_region_code: us-east-1\n"
           "            peer_vpc_id: " + std::string(peer) + "\n";
  std::string orders = service_yaml("orders") + "        read_replicas:\n";
  for (const char* set : {"r1", "r2", "r3", "r4"})
    orders += "          - name: " + std::string(set) + "\n            nodes: 1\n            cpu_millis: 1000\n"
              "            memory_gbs: 4\n";
  sb.write("dbform.yaml", manifest({vpc}, {orders}));
  RunResult r = sb.apply({"--parallelism", "3"});
  INFO(r.describe() << "\ncounts: " << sb.counts().dump());
  REQUIRE(r.exit_code == 0);
  CHECK(fault_count(sb, f.fault) == 4);  // of 9 creates: the VPC, the service, 4 sets, 3 peerings
  CHECK(sb.count("POST /projects/{project_id}/services/{service_id}/replicaSets") == 4);
  CHECK(sb.count("POST /projects/{project_id}/vpcs/{vpc_id}/peerings") == 3);
  CHECK(sb.sim().all_replica_sets().size() == 4);
  CHECK(sb.sim().all_peerings().size() == 3);
  for (const auto& set : sb.sim().all_replica_sets())
    CHECK(find_resource(sb.state(), service_address("orders") + "/replicas/" + set["name"].get<std::string>())["id"] == set["id"]);
  RunResult plan = sb.run({"plan", "--refresh", "--detailed-exitcode"});
  INFO(plan.describe());
  CHECK(plan.exit_code == 0);
}
