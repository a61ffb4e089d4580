// The simulator's fault injection against one apply of a VPC and 8 services, all seeded: whatever
// the API does, every resource ends up existing once and recorded, or failing by name.
#include <set>

#include "common.h"

using namespace e2e;

namespace {

const std::vector<std::string> kEight = {"s1", "s2", "s3", "s4", "s5", "s6", "s7", "s8"};

std::string eight_services() {
  std::vector<std::string> services;
  for (const auto& s : kEight) services.push_back(service_yaml(s));
  return manifest({vpc_yaml("net")}, services);
}

// Exactly one simulator service per name in `names`, and each recorded READY with its id.
void check_once_and_ready(Sandbox& sb, const std::vector<std::string>& names) {
  json services = sb.sim().all_services();
  INFO("simulator: " << services.dump());
  std::multiset<std::string> seen;
  for (const auto& s : services) seen.insert(s["name"].get<std::string>());
  CHECK(services.size() == names.size());
  json state = sb.state();
  for (const auto& n : names) {
    CHECK(seen.count(n) == 1);
    json rec = find_resource(state, service_address(n));
    INFO(n << ": " << rec.dump());
    REQUIRE(rec.is_object());
    CHECK(rec["status"] == "READY");
    CHECK(!rec["id"].get<std::string>().empty());
  }
  CHECK(sb.sim().all_vpcs().size() == 1);
}

}  // namespace

TEST_CASE("e2e: faults: 20% of calls answered 500 and every 7th 429: one apply converges, no duplicate") {
  auto config = default_sim_config();
  config.faults.error_rate = 0.2;
  config.faults.rate_limit_every = 7;
  config.faults.retry_after_seconds = 1;
  config.seed = 11;
  Sandbox sb(config);
  sb.write("dbform.yaml", eight_services());
  // A create answered 500 was refused before anything was done: each lookup across the settle
  // window finds nothing. A short window keeps the test short; the window is tested in never_twice.
  RunResult r = sb.apply({"--wait-timeout", "2m", "--settle-window", "1s"});
  INFO(r.describe() << "\ncounts: " << sb.counts().dump());
  CHECK(r.exit_code == 0);
  check_once_and_ready(sb, kEight);
  // The faults really happened: more calls than a clean run needs.
  CHECK(sb.total_requests() > 9 + 9);
}

TEST_CASE("e2e: faults: every second create performed but its answer dropped: no duplicate, converges") {
  auto config = default_sim_config();
  config.faults.drop_create_every = 2;
  Sandbox sb(config);
  sb.write("dbform.yaml", eight_services());
  RunResult r = sb.apply();
  INFO(r.describe() << "\ncounts: " << sb.counts().dump());
  CHECK(r.exit_code == 0);
  check_once_and_ready(sb, kEight);
  CHECK(sb.count(kListServices) >= 1);  // lost answers were resolved by looking the names up
  CHECK(contains(r.out, "adopted"));
}

TEST_CASE("e2e: faults: a stuck service and one that ends DELETED are both named, the rest READY, a rerun waits") {
  auto config = default_sim_config();
  config.faults.stuck = {"s3"};
  config.faults.deleted = {"s6"};
  Sandbox sb(config);
  sb.write("dbform.yaml", eight_services());
  RunResult r = sb.apply({"--wait-timeout", "2s"});
  INFO(r.describe() << "\ncounts: " << sb.counts().dump());
  CHECK(r.exit_code == 1);
  CHECK(contains(r.err, service_address("s3")));
  CHECK(contains(r.err, service_address("s6")));
  CHECK(contains(r.err, "DELETED"));
  json state = sb.state();
  for (const auto& n : kEight) {
    if (n == "s3" || n == "s6") continue;
    INFO(n);
    CHECK(find_resource(state, service_address(n))["status"] == "READY");
  }
  const long long creates = sb.count(kPostService);
  CHECK(creates == 8);
  RunResult again = sb.apply({"--wait-timeout", "1s"});
  INFO(again.describe());
  CHECK(again.exit_code == 1);
  CHECK(contains(again.err, service_address("s3")));
  CHECK(contains(again.err, service_address("s6")));
  // The stuck one is waited for, never created again; the DELETED one is gone, so it is created
  // again once (and ends DELETED again).
  CHECK(sb.count(kPostService) == creates + 1);
  CHECK(contains(again.out, "deleted outside dbform"));
  CHECK(sb.sim().all_services().size() == 9);
}

TEST_CASE("e2e: faults: 500s and 429s while eight projects' keys are checked and listed side by side: each service once") {
  auto config = default_sim_config();
  // Enough that calls are retried in every phase, few enough that six attempts of one read all failing
  // (about 0.15^6 per call) cannot happen in practice.
  config.faults.error_rate = 0.15;
  config.faults.rate_limit_every = 10;
  config.faults.retry_after_seconds = 1;
  config.seed = 23;
  std::map<std::string, std::string> keys;
  std::string yaml = "version: 1\nprojects:\n";
  std::vector<std::pair<std::string, std::string>> declared;  // project, service
  for (int p = 1; p <= 8; ++p) {
    const std::string project = "team-" + std::to_string(p), key = "e2e-key-of-" + project;
    config.keys.push_back({key, project, project});
    keys["DBFORM_API_KEY_TEAM_" + std::to_string(p)] = key;
    yaml += "  - id: " + project + "\n    services:\n";
    for (int s = 1; s <= 2; ++s) {
      yaml += service_yaml("db-" + std::to_string(s));
      declared.emplace_back(project, "db-" + std::to_string(s));
    }
  }
  Sandbox sb(config);
  sb.env.erase("DBFORM_API_KEY");
  sb.write("dbform.yaml", yaml);
  RunResult created = sb.apply({"--wait-timeout", "2m", "--settle-window", "1s"}, keys);
  INFO(created.describe() << "\ncounts: " << sb.counts().dump());
  REQUIRE(created.exit_code == 0);

  // Again, with a refresh: the eight key checks and sixteen lists run side by side, each retried
  // through the faults; nothing is created, and each project's verdict is its own.
  const long long creates = sb.count(kPostService);
  const json faults_before = sb.sim().fault_counts();
  RunResult again = sb.apply({"--settle-window", "1s"}, keys);
  INFO(again.describe() << "\nfaults: " << sb.sim().fault_counts().dump());
  CHECK(again.exit_code == 0);
  CHECK(contains(again.out, "No changes"));
  CHECK(sb.count(kPostService) == creates);
  CHECK(sb.sim().fault_counts() != faults_before);  // its own calls met faults (every 10th is a 429)

  std::multiset<std::pair<std::string, std::string>> seen;
  for (const auto& s : sb.sim().all_services()) seen.emplace(s["project_id"], s["name"]);
  CHECK(seen.size() == declared.size());
  const json state = sb.state();
  for (const auto& [project, name] : declared) {
    INFO(project << "/" << name);
    CHECK(seen.count({project, name}) == 1);
    const json rec = find_resource(state, service_address(name, project));
    REQUIRE(rec.is_object());
    CHECK(rec["status"] == "READY");
    CHECK(!rec["initial_password"].get<std::string>().empty());
  }
}
