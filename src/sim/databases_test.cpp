// The simulator's calls to the databases behind its services (the SimDatabases seam), with a fake
// that records them and settles when told: statuses wait for the databases, endpoints are theirs.
#include <catch2/catch.hpp>

#include <map>
#include <vector>

#include "sim/databases.h"
#include "sim/simulator.h"

using dbform::Duration;
using dbform::FakeClock;
using dbform::SimConfig;
using dbform::SimDatabases;
using dbform::Simulator;
using nlohmann::json;

namespace {

class FakeDatabases : public SimDatabases {
 public:
  std::string host() const override { return "127.0.0.1"; }
  int reserve_port() override { return next_port++; }
  void create(const std::string& id, int port, const std::string& password) override {
    calls.push_back("create " + id + " " + std::to_string(port) + " " + password);
    settled_[id] = false;
  }
  void fork(const std::string& id, int port, const std::string& source_id, const std::string& password) override {
    calls.push_back("fork " + id + " " + std::to_string(port) + " from " + source_id + " " + password);
    settled_[id] = false;
  }
  void replica(const std::string& id, int port, const std::string& primary_id) override {
    calls.push_back("replica " + id + " " + std::to_string(port) + " of " + primary_id);
    settled_[id] = false;
  }
  void set_password(const std::string& id, const std::string& password) override {
    calls.push_back("password " + id + " " + password);
  }
  void stop(const std::string& id) override {
    calls.push_back("stop " + id);
    settled_[id] = false;
  }
  void start(const std::string& id) override {
    calls.push_back("start " + id);
    settled_[id] = false;
  }
  void remove(const std::string& id) override { calls.push_back("remove " + id); }
  void enable_pooler(const std::string& id, int port) override {
    calls.push_back("pooler " + id + " " + std::to_string(port));
  }
  void disable_pooler(const std::string& id) override { calls.push_back("no pooler " + id); }
  bool settled(const std::string& id) const override {
    auto found = settled_.find(id);
    return found != settled_.end() && found->second;
  }
  void settle(const std::string& id) { settled_[id] = true; }

  std::vector<std::string> calls;
  int next_port = 40000;

 private:
  std::map<std::string, bool> settled_;
};

struct Harness {
  Harness() : sim(config(), clock, &databases) {}
  static SimConfig config() {
    SimConfig c;
    c.keys = {{"key", "proj"}};
    c.queued_delay = Duration(100);
    c.configuring_delay = Duration(100);
    c.upgrading_delay = Duration(100);
    return c;
  }
  json call(const std::string& method, const std::string& path, const json& body = nullptr, int* status = nullptr) {
    auto r = sim.handle({method, "/projects/proj/services" + path, "Bearer key", body.is_null() ? "" : body.dump()});
    if (status) *status = r.status;
    return r.body.empty() ? json() : json::parse(r.body);
  }
  std::string status(const std::string& id) { return call("GET", "/" + id)["status"]; }

  FakeClock clock;
  FakeDatabases databases;
  Simulator sim;
};

}  // namespace

TEST_CASE("sim databases: a new service's endpoint is its database's, READY only once that settled") {
  Harness h;
  json created = h.call("POST", "", {{"name", "orders"}});
  const std::string id = created["service_id"];
  CHECK(created["endpoint"] == json({{"host", "127.0.0.1"}, {"port", 40000}}));
  REQUIRE(h.databases.calls.size() == 1);
  CHECK(h.databases.calls[0] == "create " + id + " 40000 " + created["initial_password"].get<std::string>());
  h.clock.advance(Duration(1000));
  CHECK(h.status(id) == "CONFIGURING");  // the timeline says READY, the database is not there yet
  h.databases.settle(id);
  CHECK(h.status(id) == "READY");
}

TEST_CASE("sim databases: pause, resume, password, fork, replica set and delete reach the databases") {
  Harness h;
  const std::string id = h.call("POST", "", {{"name", "orders"}})["service_id"];
  h.databases.settle(id);
  h.clock.advance(Duration(1000));
  REQUIRE(h.status(id) == "READY");

  int status = 0;
  h.call("POST", "/" + id + "/updatePassword", {{"password", "new-secret"}}, &status);
  CHECK(status == 204);
  CHECK(h.databases.calls.back() == "password " + id + " new-secret");

  h.call("POST", "/" + id + "/stop", nullptr, &status);
  CHECK(h.databases.calls.back() == "stop " + id);
  h.clock.advance(Duration(1000));
  CHECK(h.status(id) == "PAUSING");  // until the server stopped
  h.databases.settle(id);
  CHECK(h.status(id) == "PAUSED");
  h.call("POST", "/" + id + "/start", nullptr, &status);
  CHECK(h.databases.calls.back() == "start " + id);
  h.clock.advance(Duration(1000));
  CHECK(h.status(id) == "RESUMING");
  h.databases.settle(id);
  CHECK(h.status(id) == "READY");

  json fork = h.call("POST", "/" + id + "/forkService", {{"name", "copy"}, {"fork_strategy", "NOW"}}, &status);
  REQUIRE(status == 202);
  const std::string fork_id = fork["service_id"];
  CHECK(h.databases.calls.back() == "fork " + fork_id + " " + std::to_string(fork["endpoint"]["port"].get<int>()) +
                                        " from " + id + " " + fork["initial_password"].get<std::string>());

  json set = h.call("POST", "/" + id + "/replicaSets", {{"name", "r"}, {"nodes", 1}, {"cpu_millis", 1000}, {"memory_gbs", 4}},
                    &status);
  REQUIRE(status == 202);
  const std::string set_id = set["id"];
  CHECK(set["endpoint"]["host"] == "127.0.0.1");
  CHECK(h.databases.calls.back() == "replica " + set_id + " " + std::to_string(set["endpoint"]["port"].get<int>()) +
                                        " of " + id);
  h.clock.advance(Duration(1000));
  CHECK(h.call("GET", "/" + id + "/replicaSets")[0]["status"] == "creating");
  h.databases.settle(set_id);
  CHECK(h.call("GET", "/" + id + "/replicaSets")[0]["status"] == "active");

  h.call("DELETE", "/" + id + "/replicaSets/" + set_id, nullptr, &status);
  CHECK(h.databases.calls.back() == "remove " + set_id);
  h.call("DELETE", "/" + fork_id, nullptr, &status);
  CHECK(status == 202);
  CHECK(h.databases.calls.back() == "remove " + fork_id);
}

TEST_CASE("sim databases: enablePooler serves a port of the databases', disablePooler closes it, a set's too") {
  Harness h;
  const std::string id = h.call("POST", "", {{"name", "orders"}})["service_id"];
  h.databases.settle(id);
  h.clock.advance(Duration(1000));
  int status = 0;
  h.call("POST", "/" + id + "/enablePooler", nullptr, &status);
  REQUIRE(status == 200);
  const json pooler = h.call("GET", "/" + id)["connection_pooler"]["endpoint"];
  CHECK(pooler["host"] == "127.0.0.1");
  CHECK(h.databases.calls.back() == "pooler " + id + " " + std::to_string(pooler["port"].get<int>()));
  h.call("POST", "/" + id + "/enablePooler", nullptr, &status);  // on already: the same endpoint, no new port
  CHECK(h.call("GET", "/" + id)["connection_pooler"]["endpoint"] == pooler);
  CHECK(h.databases.calls.back() == "pooler " + id + " " + std::to_string(pooler["port"].get<int>()));
  h.call("POST", "/" + id + "/disablePooler", nullptr, &status);
  CHECK(h.databases.calls.back() == "no pooler " + id);
  CHECK_FALSE(h.call("GET", "/" + id).contains("connection_pooler"));

  json set = h.call("POST", "/" + id + "/replicaSets", {{"name", "r"}, {"nodes", 1}, {"cpu_millis", 1000}, {"memory_gbs", 4}});
  const std::string set_id = set["id"];
  h.databases.settle(set_id);
  h.clock.advance(Duration(1000));
  h.call("POST", "/" + id + "/replicaSets/" + set_id + "/enablePooler", nullptr, &status);
  REQUIRE(status == 200);
  CHECK(h.databases.calls.back().rfind("pooler " + set_id + " ", 0) == 0);
  h.call("POST", "/" + id + "/replicaSets/" + set_id + "/disablePooler", nullptr, &status);
  CHECK(h.databases.calls.back() == "no pooler " + set_id);
}
