#pragma once
// Black-box harness for the real dbform binary: each test gets a temporary working directory and
// its own in-process simulator on 127.0.0.1:0, and runs the binary as a child process with a clean
// environment, stdin from a pipe (never a terminal), captured output and a hard timeout.
#include <sys/types.h>

#include <chrono>
#include <condition_variable>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#include "sim/simulator.h"
#include "util/clock.h"
#include "util/file_lock.h"

namespace e2e {

namespace fs = std::filesystem;
using nlohmann::json;

// The binary under test: this build's, or DBFORM_E2E_BINARY (to run the suite against another
// build, e.g. to show which tests fail on an earlier commit).
std::string dbform_binary();

// The project and key every test uses unless it says otherwise.
inline const std::string kProject = "acme-prod";
// The read replica set `reporting` of kProject's `orders`.
inline const std::string kSetAddress = "acme-prod/services/orders/replicas/reporting";
inline const std::string kKey = "e2e-key-acme-prod-0123456789";

// How many times `needle` occurs in `haystack` (overlapping occurrences counted).
inline size_t occurrences(const std::string& haystack, const std::string& needle) {
  size_t n = 0;
  for (size_t at = haystack.find(needle); at != std::string::npos; at = haystack.find(needle, at + 1)) ++n;
  return n;
}

struct RunResult {
  int exit_code = -1;      // the exit status, or 128 + signal when killed by one
  bool timed_out = false;  // killed by the harness's hard timeout
  std::string out;
  std::string err;
  std::chrono::milliseconds elapsed{0};

  std::string all() const { return out + err; }
  // For failure messages: the exit code and both streams.
  std::string describe() const;
};

// One child process running the dbform binary. A reader thread drains stdout and stderr (so the
// child never blocks on a full pipe) and feeds stdin; wait() returns once the child has exited and
// both pipes are closed, or kills it when the deadline passes.
class Process {
 public:
  // With `tty`, stdin and stdout are a pseudo-terminal (stderr stays a pipe): what a person at a
  // terminal would run. `stdin_text` is then typed into the terminal.
  // `program` runs instead of the dbform binary when given (e.g. /bin/sh for a pipeline).
  Process(const std::vector<std::string>& args, const std::map<std::string, std::string>& env, const fs::path& cwd,
          const std::string& stdin_text, std::chrono::milliseconds timeout, bool tty = false,
          const std::string& program = "");
  ~Process();
  Process(const Process&) = delete;
  Process& operator=(const Process&) = delete;

  pid_t pid() const { return pid_; }
  void signal(int sig);
  // Types `text` into the terminal of a process started with `tty`, now: an answer given after
  // the test has done something while the program waited for it.
  void type(const std::string& text);
  RunResult wait();
  std::string stdout_so_far() const;
  std::string stderr_so_far() const;

 private:
  void pump(std::string stdin_text, std::chrono::steady_clock::time_point deadline);

  pid_t pid_ = -1;
  int pidfd_ = -1;
  int in_fd_ = -1, out_fd_ = -1, err_fd_ = -1;
  int type_fd_ = -1;  // with `tty`: the terminal's master side, kept for type()
  std::thread reader_;
  mutable std::mutex mu_;
  std::string out_, err_;
  bool timed_out_ = false;
  std::optional<RunResult> result_;
  std::chrono::steady_clock::time_point started_;
};

// The simulator configuration the tests start from: one key for kProject, short delays.
dbform::SimConfig default_sim_config();

class Sandbox {
 public:
  // With `tls`, the simulator serves HTTPS with that certificate, and api_url() is https://.
  explicit Sandbox(dbform::SimConfig config = default_sim_config(),
                   const std::optional<dbform::SimTls>& tls = std::nullopt);
  ~Sandbox();
  Sandbox(const Sandbox&) = delete;
  Sandbox& operator=(const Sandbox&) = delete;

  const fs::path& dir() const { return dir_; }
  int port() const { return port_; }
  std::string api_url() const;
  dbform::Simulator& sim() { return *sim_; }

  // The environment every run gets: PATH, HOME, DBFORM_API_URL and DBFORM_API_KEY. Tests may edit
  // it; run()'s `extra` adds to or replaces entries for one run.
  std::map<std::string, std::string> env;

  RunResult run(const std::vector<std::string>& args, const std::map<std::string, std::string>& extra = {},
                const std::string& stdin_text = "", std::chrono::milliseconds timeout = std::chrono::seconds(60));
  // The same with stdin and stdout on a pseudo-terminal; `typed` is what the user types.
  RunResult run_tty(const std::vector<std::string>& args, const std::string& typed,
                    const std::map<std::string, std::string>& extra = {});
  // `sh -c script` with $DBFORM naming the binary: for pipelines such as `"$DBFORM" apply --json | head -1`.
  RunResult run_shell(const std::string& script, const std::map<std::string, std::string>& extra = {},
                      std::chrono::milliseconds timeout = std::chrono::seconds(60));
  // Starts a run without waiting for it.
  std::unique_ptr<Process> start(const std::vector<std::string>& args,
                                 const std::map<std::string, std::string>& extra = {},
                                 std::chrono::milliseconds timeout = std::chrono::seconds(120));
  // `apply --auto-approve --poll-interval 100ms` plus `more`.
  RunResult apply(const std::vector<std::string>& more = {}, const std::map<std::string, std::string>& extra = {});

  // Files relative to dir().
  void write(const std::string& name, const std::string& text);
  std::string read(const std::string& name) const;
  bool exists(const std::string& name) const;
  // The state file `name` with its journal replayed; throws when there is none (or it is mid-write).
  json state(const std::string& name = "dbform.state.json") const;

  // See dbform::SimServer::set_observer; HeldAnswer below uses it.
  void observe(std::function<void(const dbform::SimRequest&)> observer) { server_->set_observer(std::move(observer)); }

  json counts() const { return sim_->request_counts(); }
  // Requests seen for one route, e.g. count("POST /projects/{project_id}/services").
  long long count(const std::string& route) const;
  // Every request of every route (all of them, including unknown routes).
  long long total_requests() const;

 private:
  fs::path dir_;
  dbform::SystemClock clock_;
  std::unique_ptr<dbform::Simulator> sim_;
  std::unique_ptr<dbform::SimServer> server_;
  int port_ = 0;
  bool https_ = false;
};

// Route names as the simulator counts them.
inline const std::string kAuthInfo = "GET /auth/info";
inline const std::string kPostService = "POST /projects/{project_id}/services";
inline const std::string kPostVpc = "POST /projects/{project_id}/vpcs";
inline const std::string kGetService = "GET /projects/{project_id}/services/{service_id}";
inline const std::string kListServices = "GET /projects/{project_id}/services";
inline const std::string kDeleteService = "DELETE /projects/{project_id}/services/{service_id}";
inline const std::string kDeleteVpc = "DELETE /projects/{project_id}/vpcs/{vpc_id}";
inline const std::string kUpdatePassword = "POST /projects/{project_id}/services/{service_id}/updatePassword";

// The state resource with this address, or null JSON.
json find_resource(const json& state, const std::string& address);
// The state's lock held as another run's apply would hold it (an flock on the lock file naming pid
// 4242 on ci-main), until the returned lock is dropped.
std::unique_ptr<dbform::FileLock> hold_state_lock(const Sandbox& sb);
// The id the sandbox's state records for service `name` of kProject.
std::string recorded_service_id(const Sandbox& sb, const std::string& name);
// Every file beside the manifests in the sandbox's directory (state, journal, backup, lock), name ->
// its bytes and mode: equal before and after a run that wrote nothing.
std::map<std::string, std::string> files_beside_manifests(const Sandbox& sb);
std::string service_address(const std::string& name, const std::string& project = kProject);
std::string vpc_address(const std::string& name, const std::string& project = kProject);

// A manifest for kProject with the given VPC and service blocks (already indented YAML items).
std::string manifest(const std::vector<std::string>& vpcs, const std::vector<std::string>& services,
                     const std::string& project = kProject);
// "      - name: NAME\n        cpu_millis: CPU\n ..." for manifest().
std::string service_yaml(const std::string& name, int cpu_millis = 1000, int memory_gbs = 4);
std::string vpc_yaml(const std::string& name, const std::string& cidr = "10.0.0.0/16");

// Waits (bounded) until the state file `state_file` (relative to the sandbox) records `address`;
// with `with_id`, until the record also has its id (the create's answer is on disk). A file that is
// missing or mid-replacement counts as "not yet".
bool wait_for_record(const Sandbox& sb, const std::string& address, bool with_id,
                     const std::string& state_file = "dbform.state.json",
                     std::chrono::milliseconds limit = std::chrono::seconds(30));

// An observed point of a run: the simulator performs the `nth` API request that `matches` (every
// request when it is empty), counted from now, and holds its answer back until release() (or the
// destructor). While held, the run that sent it is certainly still running and waiting for it:
// a test kills it there, at a point that does not depend on how fast the machine is.
class HeldAnswer {
 public:
  HeldAnswer(Sandbox& sb, int nth, std::function<bool(const dbform::SimRequest&)> matches = {});
  ~HeldAnswer();
  HeldAnswer(const HeldAnswer&) = delete;
  HeldAnswer& operator=(const HeldAnswer&) = delete;
  // Waits until the nth request is performed and held; false when `limit` passed first.
  bool wait(std::chrono::milliseconds limit = std::chrono::seconds(60));
  // The request held (once wait() returned true).
  dbform::SimRequest request() const;
  void release();

 private:
  // Shared with the observer, which a serving thread may still be running when this is destroyed.
  struct Point {
    int nth;
    std::function<bool(const dbform::SimRequest&)> matches;
    std::mutex mu;
    std::condition_variable cv;
    int seen = 0;
    bool reached = false, released = false;
    dbform::SimRequest held;
  };
  Sandbox& sb_;
  std::shared_ptr<Point> point_;
};

// Waits (bounded, polling) until `condition` holds; false when `limit` passed first.
bool eventually(const std::function<bool()>& condition, std::chrono::milliseconds limit);

}  // namespace e2e
