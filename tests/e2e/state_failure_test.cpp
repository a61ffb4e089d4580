// A state that cannot be written (disk full, read-only directory): the previous state stays intact,
// nothing more is created, and what the run learned lands in a recovery file that restores cleanly.
#include <sys/stat.h>
#include <unistd.h>

#include <regex>
#include <set>

#include "common.h"

using namespace e2e;

TEST_CASE("e2e: a state directory that refuses writes: nothing is sent, the state is untouched") {
  Sandbox sb;
  sb.write("dbform.yaml", manifest({}, {service_yaml("orders")}));
  REQUIRE(sb.apply().exit_code == 0);
  const std::string before = sb.read("dbform.state.json");
  sb.write("dbform.yaml", manifest({}, {service_yaml("orders"), service_yaml("billing")}));
  const long long posts = sb.count(kPostService);
  RunResult r;
  {
    UnwritableDir ro(sb.dir());
    r = sb.apply();
  }
  INFO(r.describe());
  CHECK(r.exit_code == 1);
  CHECK(contains(r.err, "could not be saved"));
  CHECK(sb.count(kPostService) == posts);  // the intent could not be recorded, so billing was not created
  CHECK(sb.read("dbform.state.json") == before);
}

TEST_CASE("e2e: a state that stops being writable mid-apply: a recovery file keeps everything, and restores") {
  auto config = default_sim_config();
  config.configuring_delay = dbform::Duration(1500);  // services stay in the watch for a while
  // Each create answers a second after it is performed: once s1 is recorded, s2's answer is still a
  // second away, time enough to make the directory refuse writes before it must be saved.
  config.faults.create_answer_delay = dbform::Duration(1000);
  Sandbox sb(config);
  fs::create_directories(sb.dir() / "tmp");
  fs::create_directories(sb.dir() / "statedir");
  sb.write("dbform.yaml", manifest({}, {service_yaml("s1"), service_yaml("s2"), service_yaml("s3")}));
  const std::string state_path = (sb.dir() / "statedir" / "dbform.state.json").string();
  auto run = sb.start({"apply", "--auto-approve", "--poll-interval", "100ms", "--parallelism", "1", "--state",
                       state_path},
                      {{"TMPDIR", (sb.dir() / "tmp").string()}});
  // Once s1 is created and recorded, the state's directory starts refusing writes.
  bool s1_recorded = wait_for_record(sb, service_address("s1"), /*with_id=*/true, "statedir/dbform.state.json");
  REQUIRE(s1_recorded);
  UnwritableDir ro(sb.dir() / "statedir");
  RunResult r = run->wait();
  ro.release();
  INFO(r.describe() << "\ncounts: " << sb.counts().dump());
  CHECK(r.exit_code == 1);
  std::smatch m;
  REQUIRE(std::regex_search(r.err, m, std::regex("dbform state push (\\S+) (--state .+)")));
  const std::string recovery = m[1], state_args = m[2];
  CHECK(state_args == "--state '" + state_path + "'");  // quoted for the shell it is pasted into
  CHECK(fs::path(recovery).parent_path() == sb.dir() / "tmp");  // beside the state was refused
  // Whatever was created is in the recovery file with its password; nothing was created blindly.
  json saved = json::parse(sb.read("tmp/" + fs::path(recovery).filename().string()));
  std::set<std::string> created;
  for (const auto& s : sb.sim().all_services()) created.insert(s["name"].get<std::string>());
  for (const auto& name : created) {
    json rec = find_resource(saved, service_address(name));
    INFO(name << ": " << rec.dump());
    REQUIRE(rec.is_object());
    CHECK(!rec["id"].get<std::string>().empty());
    CHECK(!rec["initial_password"].get<std::string>().empty());
  }
  CHECK(created.size() < 3);  // it stopped creating

  RunResult push = sb.run_shell("\"$DBFORM\" state push " + recovery + " " + state_args);  // as printed
  INFO(push.describe());
  REQUIRE(push.exit_code == 0);
  RunResult finish = sb.apply({"--state", state_path});
  INFO(finish.describe());
  CHECK(finish.exit_code == 0);
  CHECK(sb.sim().all_services().size() == 3);
  CHECK(sb.count(kPostService) == 3);
  json final_state = json::parse(sb.read("statedir/dbform.state.json"));
  for (const auto& name : {"s1", "s2", "s3"}) CHECK(find_resource(final_state, service_address(name))["status"] == "READY");
}
