#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>

#include <unistd.h>

#include "sim/simulator.h"
#include "util/error.h"

namespace fs = std::filesystem;
using dbform::load_sim_config;
using dbform::SimConfig;

namespace {

// A config file in a fresh temporary directory, removed at the end of the test.
struct ConfigFile {
  explicit ConfigFile(const std::string& text) {
    dir = fs::temp_directory_path() / ("dbform-sim-config-" + std::to_string(::getpid()) + "-" +
                                       std::to_string(counter++));
    fs::create_directories(dir);
    path = (dir / "sim.yaml").string();
    std::ofstream(path) << text;
  }
  ~ConfigFile() { fs::remove_all(dir); }
  static inline int counter = 0;
  fs::path dir;
  std::string path;
};

std::string load_error(const std::string& text) {
  ConfigFile file(text);
  try {
    load_sim_config(file.path);
  } catch (const dbform::UsageError& e) {
    return e.what();
  }
  return "(no error)";
}

}  // namespace

TEST_CASE("sim: load_sim_config reads keys, delays, seed and every fault") {
  ConfigFile file(R"(
keys:
  - {key: "tok-a", project: proj-a, name: ci}
  - key: "pub:secret"
    project: proj-b
queued_delay: 500ms
configuring_delay: 3
seed: 99
faults:
  error_rate: 0.25
  latency: 20ms
  rate_limit_every: 5
  retry_after: 1500ms
  stuck: [stuck-*]
  deleted: [gone]
  unstable: [wobbly, "flaky-*"]
  drop_create_every: 3
)");
  SimConfig config = load_sim_config(file.path);
  REQUIRE(config.keys.size() == 2);
  CHECK(config.keys[0].key == "tok-a");
  CHECK(config.keys[0].project_id == "proj-a");
  CHECK(config.keys[0].name == "ci");
  CHECK(config.keys[1].key == "pub:secret");
  CHECK(config.keys[1].name == "sim-key");
  CHECK(config.queued_delay == std::chrono::milliseconds(500));
  CHECK(config.configuring_delay == std::chrono::seconds(3));
  CHECK(config.seed == 99);
  CHECK(config.faults.error_rate == 0.25);
  CHECK(config.faults.latency == std::chrono::milliseconds(20));
  CHECK(config.faults.rate_limit_every == 5);
  CHECK(config.faults.retry_after_seconds == 2);  // whole seconds, rounded up
  CHECK(config.faults.stuck == std::vector<std::string>{"stuck-*"});
  CHECK(config.faults.deleted == std::vector<std::string>{"gone"});
  CHECK(config.faults.unstable == std::vector<std::string>{"wobbly", "flaky-*"});
  CHECK(config.faults.drop_create_every == 3);
}

TEST_CASE("sim: an empty config file gives the defaults") {
  ConfigFile file("");
  SimConfig config = load_sim_config(file.path);
  CHECK(config.keys.empty());
  CHECK(config.queued_delay == std::chrono::seconds(1));
  CHECK(config.configuring_delay == std::chrono::seconds(2));
}

TEST_CASE("sim: config mistakes name the file, the place and the key") {
  std::string unknown = load_error("keys: []\nfaults:\n  latncy: 1s\n");
  CHECK_THAT(unknown, Catch::Contains("sim.yaml:3:3"));
  CHECK_THAT(unknown, Catch::Contains("unknown key `latncy` in faults"));
  CHECK_THAT(unknown, Catch::Contains("did you mean `latency`?"));

  CHECK_THAT(load_error("sed: 1\n"), Catch::Contains("did you mean `seed`?"));
  CHECK_THAT(load_error("bogus_setting: 1\n"), Catch::Contains("known keys: keys, queued_delay"));
  CHECK_THAT(load_error("queued_delay: soon\n"), Catch::Contains("sim.yaml:1:15: queued_delay must be a duration"));
  CHECK_THAT(load_error("faults: {error_rate: 2}\n"), Catch::Contains("error_rate must be a number from 0 to 1"));
  CHECK_THAT(load_error("faults: {rate_limit_every: -1}\n"), Catch::Contains("rate_limit_every must be an integer"));
  CHECK_THAT(load_error("keys: [{key: k}]\n"), Catch::Contains("needs `key` and `project`"));
  CHECK_THAT(load_error("keys: [{key: k, project: p, proj: q}]\n"), Catch::Contains("unknown key `proj`"));
  CHECK_THAT(load_error("keys:\n  - {key: k, project: p}\n  - {key: k, project: q}\n"),
             Catch::Contains("the same key is listed twice"));
  CHECK_THAT(load_error("keys: [\n"), Catch::Contains("not valid YAML"));
  CHECK_THAT(load_error("- a\n- b\n"), Catch::Contains("must be a mapping"));
}

TEST_CASE("sim: a missing config file is a clear error") {
  CHECK_THROWS_WITH(load_sim_config("/nonexistent/dbform-sim.yaml"),
                    Catch::Contains("cannot read simulator config /nonexistent/dbform-sim.yaml"));
}
