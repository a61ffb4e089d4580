#pragma once
// What the simulator's unit tests share: a config whose timeline the tests count on, and the
// simulator core driven by a FakeClock, without sockets.
#include <string>
#include <utility>
#include <vector>

#include "sim/simulator.h"
#include "util/clock.h"

namespace dbform::test {

// `keys` and `seed`, with the delays the tests advance the clock by: QUEUED 1s, then CONFIGURING
// 2s; UPGRADING 2s; DELETING 1s.
inline SimConfig timed_config(std::vector<SimKey> keys, unsigned seed) {
  SimConfig config;
  config.keys = std::move(keys);
  config.queued_delay = std::chrono::seconds(1);
  config.configuring_delay = std::chrono::seconds(2);
  config.upgrading_delay = std::chrono::seconds(2);
  config.deleting_delay = std::chrono::seconds(1);
  config.seed = seed;
  return config;
}

// The simulator core on a FakeClock: calls go straight to Simulator::handle, with key-a's bearer
// unless told otherwise.
struct SimCore {
  explicit SimCore(SimConfig config) : sim(std::move(config), clock) {}

  SimResponse call(const std::string& method, const std::string& path, const std::string& body = "",
                   const std::string& authorization = "Bearer key-a") {
    return sim.handle({method, path, authorization, body});
  }

  FakeClock clock;
  Simulator sim;
};

}  // namespace dbform::test
