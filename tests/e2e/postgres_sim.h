#pragma once
// The real simulator binary with --postgres (`dbform sim --postgres`, docs/simulator.md), for the
// tests that connect to what dbform made: every service a PostgreSQL server on 127.0.0.1.
#include <signal.h>

#include <httplib.h>
#include <libpq-fe.h>

#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include "common.h"

namespace e2e {

// Starts `dbform sim --postgres` as a child of the test with the sandbox's key and short delays,
// its servers' files in `dir` (default: the sandbox's pg/), waits until it listens, and points the
// sandbox's DBFORM_API_URL at it. Stopped with SIGTERM when destroyed, unless a test ended it.
class PostgresSim {
 public:
  explicit PostgresSim(Sandbox& sb, const std::vector<std::string>& extra = {}, const std::string& dir = "")
      : sb_(sb), dir_(dir.empty() ? (sb.dir() / "pg").string() : dir) {
    std::vector<std::string> args = {"sim",         "--postgres",           "--postgres-dir", dir_,
                                     "--listen",    "127.0.0.1:0",          "--port-file",    port_file(),
                                     "--key",       kKey + "=" + kProject,  "--queued-delay", "50ms",
                                     "--configuring-delay", "100ms", "--upgrading-delay", "300ms",
                                     "--deleting-delay", "100ms"};
    args.insert(args.end(), extra.begin(), extra.end());
    fs::remove(port_file());
    process_ = sb.start(args, {}, std::chrono::seconds(280));
    const bool listening = eventually([&] { return fs::exists(port_file()) || exited(); }, std::chrono::seconds(60));
    if (!listening || !fs::exists(port_file())) {
      RunResult r = stop(SIGTERM);
      FAIL("dbform sim --postgres did not start: " << r.describe());
    }
    std::ifstream in(port_file());
    in >> port_;
    sb.env["DBFORM_API_URL"] = "http://127.0.0.1:" + std::to_string(port_) + "/public/api/v1";
  }
  ~PostgresSim() {
    if (process_) stop(SIGTERM);
  }

  const std::string& dir() const { return dir_; }
  // A service made in the console, outside dbform (POST /_sim/projects/{project}/services): its id.
  std::string console_service(const std::string& name) {
    httplib::Client client("127.0.0.1", port_);
    auto r = client.Post(("/_sim/projects/" + kProject + "/services").c_str(), json{{"name", name}}.dump(),
                         "application/json");
    REQUIRE(r);
    REQUIRE(r->status == 201);
    return json::parse(r->body)["service_id"];
  }
  Process& process() { return *process_; }
  // The simulator's count of calls per route (GET /_sim/requests).
  json calls() const {
    httplib::Client client("127.0.0.1", port_);
    auto r = client.Get("/_sim/requests");
    REQUIRE(r);
    return json::parse(r->body);
  }
  // Sends `sig` and waits for the simulator to end.
  RunResult stop(int sig) {
    process_->signal(sig);
    RunResult r = process_->wait();
    process_.reset();
    return r;
  }
  // Forgets the process without stopping it (a test that killed it, or whose parent did).
  std::unique_ptr<Process> release() { return std::move(process_); }

 private:
  std::string port_file() const { return (sb_.dir() / "sim.port").string(); }
  bool exited() const { return ::kill(process_->pid(), 0) != 0; }

  Sandbox& sb_;
  std::string dir_;
  std::unique_ptr<Process> process_;
  int port_ = 0;
};

// The pids of the processes whose command line names `dir` (a server started there: `postgres -D DIR/...`).
inline std::vector<int> processes_under(const std::string& dir) {
  std::vector<int> pids;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator("/proc", ec)) {
    const std::string name = entry.path().filename().string();
    if (name.find_first_not_of("0123456789") != std::string::npos) continue;
    std::ifstream in(entry.path() / "cmdline");
    std::string cmdline((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    for (char& c : cmdline)
      if (c == '\0') c = ' ';
    if (cmdline.find(dir + "/") != std::string::npos && cmdline.find("postgres") != std::string::npos)
      pids.push_back(std::stoi(name));
  }
  return pids;
}

// What a query gave: the first value of its first row, or the error.
struct SqlResult {
  bool ok = false;
  std::string value;
  std::string error;
};

// One connection with a libpq connection string or URL (as `dbform output` writes them), one query.
inline SqlResult sql(const std::string& conninfo, const std::string& query) {
  SqlResult out;
  PGconn* conn = PQconnectdb((conninfo.find("://") != std::string::npos ? conninfo : conninfo + " connect_timeout=5").c_str());
  if (PQstatus(conn) != CONNECTION_OK) {
    out.error = PQerrorMessage(conn);
    PQfinish(conn);
    return out;
  }
  PGresult* r = PQexec(conn, query.c_str());
  const auto status = PQresultStatus(r);
  out.ok = status == PGRES_TUPLES_OK || status == PGRES_COMMAND_OK;
  if (!out.ok) out.error = PQresultErrorMessage(r);
  else if (status == PGRES_TUPLES_OK && PQntuples(r) > 0) out.value = PQgetvalue(r, 0, 0);
  PQclear(r);
  PQfinish(conn);
  return out;
}

// `dbform output ADDRESS.connection_string`, as a pipeline gets it.
inline std::string connection_string(Sandbox& sb, const std::string& address) {
  RunResult r = sb.run({"output", address + ".connection_string"});
  REQUIRE(r.exit_code == 0);
  std::string s = r.out;
  while (!s.empty() && s.back() == '\n') s.pop_back();
  return s;
}

}  // namespace e2e
