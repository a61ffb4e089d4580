// The crash-safety guarantee, hammered: applies of a VPC and 8 services are killed with SIGKILL at
// random observed points (the Nth request performed, its answer held back), again and again, then
// one run is let finish. Whatever the kill hit (before an intent, between intent and create, with a
// create in flight, while watching), the simulator
// must end with exactly one of each resource and the state must record every one of them, READY.
//
// DBFORM_KILL_RUNS sets the number of kills (default 20, as CI runs it); DBFORM_KILL_SEED the seed.
#include <signal.h>

#include <random>
#include <set>

#include "common.h"
#include "state/codec.h"

using namespace e2e;

namespace {

int env_int(const char* name, int fallback) {
  const char* v = std::getenv(name);
  return v && *v ? std::atoi(v) : fallback;
}

const std::vector<std::string> kKillServices = {"s1", "s2", "s3", "s4", "s5", "s6", "s7", "s8"};

std::string kill_manifest(int cpu = 1000, int memory = 4, const std::string& extra = "") {
  std::vector<std::string> services;
  for (const auto& s : kKillServices) services.push_back(service_yaml(s, cpu, memory) + extra);
  return manifest({vpc_yaml("net")}, services);
}

// A create killed between its intent and its answer is looked up by name over the settle window
// before it may be sent again. This simulator's lists never lag, so a short window decides the same
// as the default 30 s, which would make a trial wait half a minute for each such kill.
const std::vector<std::string> kSettle = {"--settle-window", "3s"};
const std::vector<std::string> kKillArgs = {"apply",         "--auto-approve", "--poll-interval", "100ms",
                                            "--parallelism", "3",              kSettle[0],        kSettle[1]};

// The last request a kill may wait for: any apply of the trials below makes more than this many
// (its key check and at least nine creates or calls), and one that follows an apply killed at
// its kFirstKillPoints-th request makes at least two (its key check, then what is left).
constexpr int kFirstKillPoints = 10;
constexpr int kLaterKillPoints = 2;

// Starts `apply` and kills it with SIGKILL at an observed point: once the simulator has performed
// its `point`-th request (random, up to `last_point`), while that answer is held back. Whatever
// the point (before the first intent, a create performed but unanswered, an update in flight, a
// watch), the apply is certainly running when it is killed, however fast the machine: true when
// it died of the kill. After every kill the state is either absent (killed before the first write)
// or readable, its journal included (a torn last append is dropped, never an error).
bool kill_an_apply(Sandbox& sb, std::mt19937& rng, int last_point, unsigned seed) {
  const int point = std::uniform_int_distribution<int>(1, last_point)(rng);
  HeldAnswer held(sb, point);
  auto run = sb.start(kKillArgs);
  const bool reached = held.wait();
  INFO("seed " << seed << ": the apply ended before its request " << point << ":\n"
               << run->stdout_so_far() << run->stderr_so_far());
  CHECK(reached);
  run->signal(SIGKILL);
  RunResult r = run->wait();
  held.release();
  if (sb.exists("dbform.state.json")) {
    INFO("seed " << seed << ", state after the kill at " << held.request().method << " " << held.request().path
                 << ":\n" << sb.read("dbform.state.json")
                 << (sb.exists("dbform.state.json.journal") ? sb.read("dbform.state.json.journal") : ""));
    REQUIRE_NOTHROW(sb.state());
  }
  return r.exit_code == 128 + SIGKILL;
}

// The two kills of a trial: the first anywhere in the first kFirstKillPoints requests, the second
// in the first kLaterKillPoints of the next apply.
int kill_twice(Sandbox& sb, std::mt19937& rng, unsigned seed) {
  int killed = kill_an_apply(sb, rng, kFirstKillPoints, seed);
  return killed + kill_an_apply(sb, rng, kLaterKillPoints, seed);
}

// One trial: a fresh simulator and state; up to two applies killed at random observed points, then one run
// let finish. Returns what the clean run found.
struct TrialOutcome {
  int killed_mid_run = 0;
  int duplicates = 0;
  int lost = 0;
  int without_password = 0;  // recorded without the password the database has
};

TrialOutcome run_trial(unsigned seed, std::mt19937& rng) {
  auto config = default_sim_config();
  config.seed = seed;
  config.queued_delay = dbform::Duration(100);
  config.configuring_delay = dbform::Duration(200);
  config.faults.latency = dbform::Duration(30);  // calls take a little time, so kills land mid-call too
  Sandbox sb(config);
  sb.write("dbform.yaml", kill_manifest());
  TrialOutcome outcome;
  outcome.killed_mid_run = kill_twice(sb, rng, seed);
  RunResult last = sb.apply(kSettle);
  INFO("seed " << seed << ": " << last.describe());
  REQUIRE(last.exit_code == 0);

  json services = sb.sim().all_services();
  json vpcs = sb.sim().all_vpcs();
  json state = sb.state();
  std::set<std::string> sim_ids;
  for (const auto& s : services) sim_ids.insert(s["service_id"].get<std::string>());
  outcome.duplicates = static_cast<int>(services.size() + vpcs.size()) - static_cast<int>(kKillServices.size()) - 1;
  for (const auto& name : kKillServices) {
    json rec = find_resource(state, service_address(name));
    if (!rec.is_object() || !sim_ids.count(rec["id"].get<std::string>()) || rec["status"] != "READY") ++outcome.lost;
    // An adopted one (killed between its create and the answer) was given a new password.
    else if (rec["initial_password"] != sb.sim().current_password(rec["id"].get<std::string>()))
      ++outcome.without_password;
  }
  json vpc = find_resource(state, vpc_address("net"));
  if (!vpc.is_object() || vpc["id"].get<std::string>().empty()) ++outcome.lost;
  INFO("seed " << seed << ": simulator services " << services.dump());
  CHECK(outcome.duplicates == 0);
  CHECK(outcome.lost == 0);
  CHECK(state["resources"].size() == kKillServices.size() + 1);
  return outcome;
}

// The trials of the first test, in kCreateParts test cases that ctest runs side by side: part k runs
// the trials whose index is k modulo kCreateParts, each with its own seeded random stream.
constexpr int kCreateParts = 4;

void run_create_trials(int part) {
  const int trials = env_int("DBFORM_KILL_RUNS", 20);
  const unsigned seed = static_cast<unsigned>(env_int("DBFORM_KILL_SEED", 20261122));
  TrialOutcome total;
  int run = 0;
  for (int i = part; i < trials; i += kCreateParts, ++run) {
    const unsigned trial_seed = seed + static_cast<unsigned>(i);
    std::mt19937 rng(trial_seed);
    TrialOutcome t = run_trial(trial_seed, rng);
    total.killed_mid_run += t.killed_mid_run;
    total.duplicates += t.duplicates;
    total.lost += t.lost;
    total.without_password += t.without_password;
  }
  WARN("kill test (seed " << seed << ", part " << part + 1 << " of " << kCreateParts << "): " << run << " trials, "
                          << 2 * run << " SIGKILLs of which " << total.killed_mid_run << " hit a running apply; "
                          << total.duplicates << " duplicates, " << total.lost << " resources lost, "
                          << total.without_password << " services recorded without the password they have");
  // Every kill lands while an apply is working (at an observed point), or the test proves little.
  CHECK(total.killed_mid_run == 2 * run);
  CHECK(total.duplicates == 0);
  CHECK(total.lost == 0);
  CHECK(total.without_password == 0);
}

}  // namespace

TEST_CASE("e2e: applies killed with SIGKILL at random moments never lose or duplicate a resource (part 1)") {
  run_create_trials(0);
}
TEST_CASE("e2e: applies killed with SIGKILL at random moments never lose or duplicate a resource (part 2)") {
  run_create_trials(1);
}
TEST_CASE("e2e: applies killed with SIGKILL at random moments never lose or duplicate a resource (part 3)") {
  run_create_trials(2);
}
TEST_CASE("e2e: applies killed with SIGKILL at random moments never lose or duplicate a resource (part 4)") {
  run_create_trials(3);
}

namespace {

struct UpdateTrialOutcome {
  int killed_mid_run = 0;
  int created = 0;       // creates beyond the first apply's: must be none
  int disagreeing = 0;   // services whose state and API disagree, or that are not as declared
};

// Runs `trial` DBFORM_KILL_RUNS / `share` times (two kills each), with seeds from DBFORM_KILL_SEED
// and a random stream of its own, and checks that they made nothing twice and left everything as
// declared. `created` says what the trials count as made twice.
void run_kill_trials(const char* what, int share, unsigned stream, const char* created,
                     UpdateTrialOutcome (*trial)(unsigned seed, std::mt19937& rng)) {
  const int trials = env_int("DBFORM_KILL_RUNS", 20) / share;
  const unsigned seed = static_cast<unsigned>(env_int("DBFORM_KILL_SEED", 20261122));
  std::mt19937 rng(seed + stream);
  UpdateTrialOutcome total;
  for (int i = 0; i < trials; ++i) {
    UpdateTrialOutcome t = trial(seed + static_cast<unsigned>(i), rng);
    total.killed_mid_run += t.killed_mid_run;
    total.created += t.created;
    total.disagreeing += t.disagreeing;
  }
  WARN(what << " (seed " << seed << "): " << trials << " trials, " << 2 * trials << " SIGKILLs of which "
            << total.killed_mid_run << " hit a running apply; " << total.created << " " << created << ", "
            << total.disagreeing << " not as declared");
  CHECK(total.killed_mid_run == 2 * trials);
  CHECK(total.created == 0);
  CHECK(total.disagreeing == 0);
}

// One trial: the 8 services are created, then resized (cpu, memory, tag and replicas: three calls
// each, two of them asynchronous) by applies killed at random moments, then one run is let finish.
UpdateTrialOutcome run_update_trial(unsigned seed, std::mt19937& rng) {
  auto config = default_sim_config();
  config.seed = seed;
  config.upgrading_delay = dbform::Duration(200);
  config.faults.latency = dbform::Duration(30);
  Sandbox sb(config);
  sb.write("dbform.yaml", kill_manifest());
  REQUIRE(sb.apply().exit_code == 0);
  const long long creates = sb.count(kPostService);
  sb.write("dbform.yaml", kill_manifest(2000, 8, "        environment_tag: PROD\n        replica_count: 1\n"));
  UpdateTrialOutcome outcome;
  outcome.killed_mid_run = kill_twice(sb, rng, seed);
  RunResult last = sb.apply(kSettle);
  INFO("seed " << seed << ": " << last.describe());
  REQUIRE(last.exit_code == 0);

  outcome.created = static_cast<int>(sb.count(kPostService) - creates);
  json state = sb.state();
  for (const auto& s : sb.sim().all_services()) {
    json rec = find_resource(state, service_address(s["name"]));
    const bool agree = rec.is_object() && rec["id"] == s["service_id"] && rec["status"] == "READY" &&
                       !rec.contains("pending_call") && s["resources"][0]["spec"]["cpu_millis"] == 2000 &&
                       s["resources"][0]["spec"]["memory_gbs"] == 8 && s["metadata"]["environment"] == "PROD" &&
                       s["ha_replicas"]["replica_count"] == 1 && rec["settings"]["cpu_millis"] == "2000";
    if (!agree) {
      ++outcome.disagreeing;
      WARN("seed " << seed << ": " << s.dump() << "\nrecorded: " << rec.dump());
    }
  }
  RunResult plan = sb.run({"plan", "--refresh", "--detailed-exitcode"});
  INFO(plan.describe());
  CHECK(plan.exit_code == 0);  // the state and the API agree with the declaration
  return outcome;
}

}  // namespace

TEST_CASE("e2e: applies of updates killed with SIGKILL at random moments end as declared, creating nothing") {
  run_kill_trials("update kill test", 2, 1, "services created", run_update_trial);
}

namespace {

const std::vector<std::string> kForks = {"f1", "f2"};  // forks of the first two services, once renamed

// One trial of day three: the 8 services are created; then s1-s4 are renamed (renamed_from), s5-s8
// paused with a resize (start, resize, stop), and two forks made of renamed ones by applies killed
// at random moments; then one run is let finish. Nothing may be created but the two forks, each
// once; nothing may be deleted, and everything must end as declared.
UpdateTrialOutcome run_day_three_trial(unsigned seed, std::mt19937& rng) {
  auto config = default_sim_config();
  config.seed = seed;
  config.upgrading_delay = dbform::Duration(400);  // start, resize and stop: over a second in all
  config.faults.latency = dbform::Duration(30);
  Sandbox sb(config);
  sb.write("dbform.yaml", kill_manifest());
  REQUIRE(sb.apply().exit_code == 0);
  const long long creates = sb.count(kPostService);
  std::vector<std::string> services;
  for (size_t i = 0; i < kKillServices.size(); ++i) {
    const std::string& old = kKillServices[i];
    services.push_back(i < 4 ? service_yaml(old + "-renamed") + "        renamed_from: " + old + "\n"
                             : service_yaml(old, 2000, 8) + "        paused: true\n");
  }
  for (size_t i = 0; i < kForks.size(); ++i)
    services.push_back("      - name: " + kForks[i] + "\n        fork:\n          from: " + kKillServices[i] +
                       "-renamed\n          strategy: " + (i ? "NOW" : "LAST_SNAPSHOT") + "\n");
  sb.write("dbform.yaml", manifest({vpc_yaml("net")}, services));
  UpdateTrialOutcome outcome;
  outcome.killed_mid_run = kill_twice(sb, rng, seed);
  RunResult last = sb.apply(kSettle);
  INFO("seed " << seed << ": " << last.describe());
  REQUIRE(last.exit_code == 0);

  outcome.created = static_cast<int>(sb.count(kPostService) - creates);
  json state = sb.state();
  const json all = sb.sim().all_services();
  CHECK(all.size() == kKillServices.size() + kForks.size());  // each fork once
  for (const auto& s : all) {
    const std::string name = s["name"];
    const bool running = name.ends_with("-renamed") || name.starts_with("f");
    json rec = find_resource(state, service_address(name));
    if (name.starts_with("f")) CHECK(s["forked_from"]["service_id"].is_string());
    const bool agree = rec.is_object() && rec["id"] == s["service_id"] && !rec.contains("pending_call") &&
                       (running ? s["status"] == "READY" && rec["status"] == "READY"
                                : s["status"] == "PAUSED" && rec["status"] == "PAUSED" &&
                                      s["resources"][0]["spec"]["cpu_millis"] == 2000);
    if (!agree) {
      ++outcome.disagreeing;
      WARN("seed " << seed << ": " << s.dump() << "\nrecorded: " << rec.dump());
    }
  }
  CHECK(state["resources"].size() == kKillServices.size() + kForks.size() + 1);
  RunResult plan = sb.run({"plan", "--refresh", "--detailed-exitcode"});
  INFO(plan.describe());
  CHECK(plan.exit_code == 0);
  return outcome;
}

}  // namespace

TEST_CASE("e2e: applies of renames, pauses and forks killed with SIGKILL at random moments end as declared") {
  run_kill_trials("day-three kill test", 4, 2, "services created besides the forks", run_day_three_trial);
}

namespace {

// One trial of resources in resources: 3 services with a read replica set each and a VPC with 2
// peerings, applied by runs killed at random moments, then one let finish.
UpdateTrialOutcome run_nested_trial(unsigned seed, std::mt19937& rng) {
  auto config = default_sim_config();
  config.seed = seed;
  config.queued_delay = dbform::Duration(100);
  config.configuring_delay = dbform::Duration(200);
  config.faults.latency = dbform::Duration(30);
  Sandbox sb(config);
  std::string vpc = vpc_yaml("net") + "        peerings:\n";
  for (const char* peer : {"vpc-0aaa", "vpc-0bbb"})
    vpc += "          - peer_account_id: \"123456789012\"\n            peer_region_code: us-east-1\n"
           "            peer_vpc_id: " + std::string(peer) + "\n";
  std::vector<std::string> services;
  for (const char* name : {"s1", "s2", "s3"})
    services.push_back(service_yaml(name) +
                       "        read_replicas:\n          - name: r\n            nodes: 1\n"
                       "            cpu_millis: 1000\n            memory_gbs: 4\n");
  sb.write("dbform.yaml", manifest({vpc}, services));
  UpdateTrialOutcome outcome;
  outcome.killed_mid_run = kill_twice(sb, rng, seed);
  RunResult last = sb.apply(kSettle);
  INFO("seed " << seed << ": " << last.describe());
  REQUIRE(last.exit_code == 0);

  const json sets = sb.sim().all_replica_sets(), peerings = sb.sim().all_peerings();
  outcome.created = static_cast<int>(sb.sim().all_services().size() - 3 + sets.size() - 3 + peerings.size() - 2);
  const json state = sb.state();
  auto recorded = [&](const std::string& address, const json& listed, const char* id_key) {
    const json rec = find_resource(state, address);
    for (const auto& l : listed)
      if (rec.is_object() && rec["id"] == l[id_key]) return true;
    WARN("seed " << seed << ": " << address << " is not recorded as listed: " << rec.dump());
    return false;
  };
  for (const char* name : {"s1", "s2", "s3"}) {
    const json rec = find_resource(state, service_address(name) + "/replicas/r");
    outcome.disagreeing += !recorded(service_address(name) + "/replicas/r", sets, "id") || rec["status"] != "active";
  }
  for (const char* peer : {"vpc-0aaa", "vpc-0bbb"})
    outcome.disagreeing += !recorded(vpc_address("net") + "/peerings/" + peer, peerings, "id");
  RunResult plan = sb.run({"plan", "--refresh", "--detailed-exitcode"});
  INFO(plan.describe());
  CHECK(plan.exit_code == 0);
  return outcome;
}

}  // namespace

TEST_CASE("e2e: applies of read replica sets and peerings killed with SIGKILL at random moments make each once") {
  run_kill_trials("nested kill test", 4, 3, "resources made twice", run_nested_trial);
}
