// `dbform sim --postgres` never leaves a PostgreSQL server of its own running (docs/simulator.md):
// SIGINT, SIGTERM, its parent's death, and a restart on the same directory after SIGKILL all end
// with no server left and (but after SIGKILL) the directory removed.
#include <fstream>

#include "postgres_sim.h"

using namespace e2e;

namespace {

// A service applied through the simulator; the data directory of its server.
std::string running_service(Sandbox& sb, const std::string& fleet_dir) {
  sb.write("m.yaml", manifest({}, {service_yaml("orders")}));
  RunResult applied = sb.apply({"-f", "m.yaml"});
  INFO(applied.describe());
  REQUIRE(applied.exit_code == 0);
  const std::string id = find_resource(sb.state(), service_address("orders"))["id"];
  const std::string data_dir = fleet_dir + "/db/" + id;
  REQUIRE(fs::exists(data_dir + "/postmaster.pid"));
  REQUIRE(!processes_under(fleet_dir).empty());
  REQUIRE(sql(connection_string(sb, service_address("orders")), "SELECT 1").ok);
  return data_dir;
}

int postmaster_pid(const std::string& data_dir) {
  std::ifstream in(data_dir + "/postmaster.pid");
  int pid = 0;
  in >> pid;
  return pid;
}

// Running: not gone, and not a zombie that whoever inherited it (init, in a container maybe nobody)
// has not reaped yet.
bool alive(int pid) {
  if (pid <= 0) return false;
  std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
  std::string line;
  if (!std::getline(stat, line)) return false;
  const size_t paren = line.rfind(')');
  return paren != std::string::npos && paren + 2 < line.size() && line[paren + 2] != 'Z';
}

}  // namespace

TEST_CASE("postgres: SIGINT and SIGTERM stop every server and remove the directory", "[e2e][postgres]") {
  const int sig = GENERATE(SIGINT, SIGTERM);
  Sandbox sb;
  PostgresSim sim(sb);
  const std::string data_dir = running_service(sb, sim.dir());
  const int server = postmaster_pid(data_dir);
  RunResult stopped = sim.stop(sig);
  INFO("signal " << sig << ": " << stopped.describe());
  CHECK(stopped.exit_code == 0);
  CHECK_FALSE(alive(server));
  CHECK(processes_under(sim.dir()).empty());
  CHECK_FALSE(fs::exists(sim.dir()));
}

TEST_CASE("postgres: the simulator's parent dying stops every server and removes the directory", "[e2e][postgres]") {
  Sandbox sb;
  const std::string dir = (sb.dir() / "pg").string();
  // A shell starts the simulator and is then killed with SIGKILL: the simulator outlives its parent
  // only as long as it takes to stop its servers.
  sb.write("run.sh", "\"$DBFORM\" sim --postgres --postgres-dir " + dir + " --listen 127.0.0.1:0 --port-file " +
                         (sb.dir() / "sim.port").string() + " --key " + kKey + "=" + kProject +
                         " --queued-delay 50ms --configuring-delay 100ms &\necho $! > " +
                         (sb.dir() / "sim.pid").string() + "\nwait\n");
  Process parent({(sb.dir() / "run.sh").string()}, [&] {
    auto e = sb.env;
    e["DBFORM"] = dbform_binary();
    return e;
  }(), sb.dir(), "", std::chrono::seconds(120), false, "/bin/sh");
  REQUIRE(eventually([&] { return sb.exists("sim.port") && sb.exists("sim.pid"); }, std::chrono::seconds(60)));
  std::ifstream port_in(sb.dir() / "sim.port");
  int port = 0;
  port_in >> port;
  sb.env["DBFORM_API_URL"] = "http://127.0.0.1:" + std::to_string(port) + "/public/api/v1";
  std::ifstream pid_in(sb.dir() / "sim.pid");
  int sim_pid = 0;
  pid_in >> sim_pid;
  const std::string data_dir = running_service(sb, dir);
  const int server = postmaster_pid(data_dir);

  parent.signal(SIGKILL);
  parent.wait();
  CHECK(eventually([&] { return !alive(server) && processes_under(dir).empty() && !fs::exists(dir); },
                   std::chrono::seconds(30)));
  CHECK(eventually([&] { return !alive(sim_pid); }, std::chrono::seconds(30)));
}

TEST_CASE("postgres: after SIGKILL, the next simulator on the same directory stops the servers left there",
          "[e2e][postgres]") {
  Sandbox sb;
  const std::string dir = (sb.dir() / "pg").string();
  int server = 0;
  {
    PostgresSim first(sb, {}, dir);
    const std::string data_dir = running_service(sb, dir);
    server = postmaster_pid(data_dir);
    RunResult killed = first.stop(SIGKILL);
    CHECK(killed.exit_code == 128 + SIGKILL);
  }
  // SIGKILL leaves no chance to clean up: the server runs on, its postmaster.pid in place.
  CHECK(alive(server));
  CHECK(!processes_under(dir).empty());

  PostgresSim second(sb, {}, dir);
  CHECK_FALSE(alive(server));  // stopped before the second one listened
  CHECK(processes_under(dir + "/db").empty());
  RunResult stopped = second.stop(SIGTERM);
  INFO(stopped.describe());
  CHECK_THAT(stopped.err, Catch::Contains("stopped the PostgreSQL server (pid " + std::to_string(server)));
  CHECK(processes_under(dir).empty());
  CHECK_FALSE(fs::exists(dir));
}

TEST_CASE("postgres: a second simulator on a directory in use is refused, naming the holder", "[e2e][postgres]") {
  Sandbox sb;
  PostgresSim first(sb);
  RunResult second = sb.run({"sim", "--postgres", "--postgres-dir", first.dir(), "--listen", "127.0.0.1:0", "--key",
                             kKey + "=" + kProject});
  CHECK(second.exit_code == 1);
  CHECK_THAT(second.err, Catch::Contains("in use by another dbform simulator (pid " +
                                         std::to_string(first.process().pid()) + ")"));
  CHECK(fs::exists(first.dir() + "/template"));  // untouched
}
