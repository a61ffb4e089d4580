#include "harness.h"

#include "state/codec.h"
#include "state/file_store.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <random>
#include <sstream>
#include <stdexcept>

namespace e2e {

std::string dbform_binary() {
  const char* other = std::getenv("DBFORM_E2E_BINARY");
  return other && *other ? other : DBFORM_BINARY;
}

namespace {

std::runtime_error sys_error(const std::string& what) {
  return std::runtime_error(what + ": " + std::strerror(errno));
}

int pidfd_open(pid_t pid) { return static_cast<int>(::syscall(SYS_pidfd_open, pid, 0)); }

void close_fd(int& fd) {
  if (fd >= 0) ::close(fd);
  fd = -1;
}

fs::path make_temp_dir() {
  std::random_device rd;
  for (int attempt = 0; attempt < 100; ++attempt) {
    fs::path p = fs::temp_directory_path() /
                 ("dbform-e2e-" + std::to_string(::getpid()) + "-" + std::to_string(rd() % 1000000000));
    std::error_code ec;
    if (fs::create_directory(p, ec)) return p;
  }
  throw std::runtime_error("cannot create a temporary directory");
}

}  // namespace

std::string RunResult::describe() const {
  std::ostringstream s;
  s << "exit code " << exit_code << (timed_out ? " (TIMED OUT, killed)" : "") << " after " << elapsed.count()
    << " ms\n--- stdout ---\n"
    << out << "--- stderr ---\n"
    << err << "--------------";
  return s.str();
}

// ---------------------------------------------------------------------------------------------
// Process

Process::Process(const std::vector<std::string>& args, const std::map<std::string, std::string>& env,
                 const fs::path& cwd, const std::string& stdin_text, std::chrono::milliseconds timeout, bool tty,
                 const std::string& program) {
  // Everything the child needs is built before fork: between fork and exec only async-signal-safe
  // calls are allowed (the simulator's threads may hold locks).
  std::vector<std::string> argv_store = {program.empty() ? dbform_binary() : program};
  argv_store.insert(argv_store.end(), args.begin(), args.end());
  std::vector<std::string> envp_store;
  for (const auto& [k, v] : env) envp_store.push_back(k + "=" + v);
  std::vector<char*> argv, envp;
  for (auto& a : argv_store) argv.push_back(a.data());
  argv.push_back(nullptr);
  for (auto& e : envp_store) envp.push_back(e.data());
  envp.push_back(nullptr);
  std::string cwd_text = cwd.string();

  int in[2], out[2], err[2];
  if (::pipe2(err, O_CLOEXEC) != 0) throw sys_error("pipe");
  if (tty) {
    // The terminal's master side is both the child's input and its output: in[1] and out[0] are
    // two descriptors of it; in[0] and out[1] are the terminal itself.
    int master = ::posix_openpt(O_RDWR | O_NOCTTY | O_CLOEXEC);
    if (master < 0 || ::grantpt(master) != 0 || ::unlockpt(master) != 0) throw sys_error("posix_openpt");
    int slave = ::open(::ptsname(master), O_RDWR | O_NOCTTY | O_CLOEXEC);
    if (slave < 0) throw sys_error("open pty");
    in[1] = master;
    out[0] = ::fcntl(master, F_DUPFD_CLOEXEC, 0);
    type_fd_ = ::fcntl(master, F_DUPFD_CLOEXEC, 0);
    in[0] = slave;
    out[1] = ::fcntl(slave, F_DUPFD_CLOEXEC, 0);
  } else {
    if (::pipe2(in, O_CLOEXEC) != 0) throw sys_error("pipe");
    if (::pipe2(out, O_CLOEXEC) != 0) throw sys_error("pipe");
  }

  started_ = std::chrono::steady_clock::now();
  pid_ = ::fork();
  if (pid_ < 0) throw sys_error("fork");
  if (pid_ == 0) {
    ::dup2(in[0], 0);
    ::dup2(out[1], 1);
    ::dup2(err[1], 2);
    ::close_range(3, ~0U, 0);  // no listening sockets or other tests' pipes leak into the child
    if (::chdir(cwd_text.c_str()) != 0) ::_exit(126);
    ::execve(argv[0], argv.data(), envp.data());
    ::_exit(127);
  }
  ::close(in[0]);
  ::close(out[1]);
  ::close(err[1]);
  in_fd_ = in[1];
  out_fd_ = out[0];
  err_fd_ = err[0];
  pidfd_ = pidfd_open(pid_);
  if (pidfd_ < 0) throw sys_error("pidfd_open");
  ::fcntl(in_fd_, F_SETFL, O_NONBLOCK);
  reader_ = std::thread([this, stdin_text, deadline = started_ + timeout] { pump(stdin_text, deadline); });
}

void Process::pump(std::string stdin_text, std::chrono::steady_clock::time_point deadline) {
  size_t written = 0;
  if (stdin_text.empty()) close_fd(in_fd_);
  bool exited = false;
  char buf[65536];
  while (out_fd_ >= 0 || err_fd_ >= 0 || !exited) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) {
      ::kill(pid_, SIGKILL);
      std::lock_guard<std::mutex> lock(mu_);
      timed_out_ = true;
      break;
    }
    std::vector<pollfd> fds;
    if (out_fd_ >= 0) fds.push_back({out_fd_, POLLIN, 0});
    if (err_fd_ >= 0) fds.push_back({err_fd_, POLLIN, 0});
    if (in_fd_ >= 0) fds.push_back({in_fd_, POLLOUT, 0});
    if (!exited) fds.push_back({pidfd_, POLLIN, 0});
    int n = ::poll(fds.data(), fds.size(), static_cast<int>(std::min<long long>(left.count(), 1000)));
    if (n < 0 && errno != EINTR) break;
    for (const auto& p : fds) {
      if (!p.revents) continue;
      if (p.fd == pidfd_) {
        exited = true;
      } else if (p.fd == in_fd_) {
        ssize_t w = ::write(in_fd_, stdin_text.data() + written, stdin_text.size() - written);
        if (w > 0) written += static_cast<size_t>(w);
        if (w < 0 && errno != EAGAIN) written = stdin_text.size();  // EPIPE: the child stopped reading
        if (written >= stdin_text.size()) close_fd(in_fd_);
      } else {
        ssize_t r = ::read(p.fd, buf, sizeof buf);
        if (r > 0) {
          std::lock_guard<std::mutex> lock(mu_);
          (p.fd == out_fd_ ? out_ : err_).append(buf, static_cast<size_t>(r));
        } else if (r == 0 || (r < 0 && errno != EINTR && errno != EAGAIN)) {
          close_fd(p.fd == out_fd_ ? out_fd_ : err_fd_);
        }
      }
    }
  }
  close_fd(in_fd_);
  close_fd(out_fd_);
  close_fd(err_fd_);
}

void Process::signal(int sig) {
  if (!result_) ::kill(pid_, sig);
}

RunResult Process::wait() {
  if (result_) return *result_;
  if (reader_.joinable()) reader_.join();
  int status = 0;
  while (::waitpid(pid_, &status, 0) < 0 && errno == EINTR) {
  }
  RunResult r;
  r.elapsed = std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - started_);
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  std::lock_guard<std::mutex> lock(mu_);
  r.timed_out = timed_out_;
  r.out = out_;
  r.err = err_;
  close_fd(pidfd_);
  result_ = r;
  return r;
}

std::string Process::stdout_so_far() const {
  std::lock_guard<std::mutex> lock(mu_);
  return out_;
}

std::string Process::stderr_so_far() const {
  std::lock_guard<std::mutex> lock(mu_);
  return err_;
}

Process::~Process() {
  if (!result_) {
    ::kill(pid_, SIGKILL);
    wait();
  }
  close_fd(type_fd_);
}

void Process::type(const std::string& text) {
  if (type_fd_ < 0) throw std::logic_error("type() needs a process started with a terminal");
  if (::write(type_fd_, text.data(), text.size()) != static_cast<ssize_t>(text.size())) throw sys_error("type");
}

// ---------------------------------------------------------------------------------------------
// Sandbox

dbform::SimConfig default_sim_config() {
  dbform::SimConfig c;
  c.keys.push_back({kKey, kProject, "e2e-key"});
  c.queued_delay = dbform::Duration(50);
  c.configuring_delay = dbform::Duration(100);
  c.upgrading_delay = dbform::Duration(300);
  c.deleting_delay = dbform::Duration(100);
  c.seed = 7;
  return c;
}

Sandbox::Sandbox(dbform::SimConfig config, const std::optional<dbform::SimTls>& tls)
    : dir_(make_temp_dir()), https_(tls.has_value()) {
  sim_ = std::make_unique<dbform::Simulator>(std::move(config), clock_);
  server_ = std::make_unique<dbform::SimServer>(*sim_, dbform::Duration(0), tls);
  port_ = server_->start("127.0.0.1", 0);
  const char* path = std::getenv("PATH");
  env["PATH"] = path ? path : "/usr/bin:/bin";
  env["HOME"] = dir_.string();
  env["DBFORM_API_URL"] = api_url();
  env["DBFORM_API_KEY"] = kKey;
}

Sandbox::~Sandbox() {
  server_->stop();
  std::error_code ec;
  fs::remove_all(dir_, ec);
}

std::string Sandbox::api_url() const {
  return (https_ ? "https" : "http") + std::string("://127.0.0.1:") + std::to_string(port_) + "/public/api/v1";
}

std::unique_ptr<Process> Sandbox::start(const std::vector<std::string>& args,
                                        const std::map<std::string, std::string>& extra,
                                        std::chrono::milliseconds timeout) {
  auto e = env;
  for (const auto& [k, v] : extra) e[k] = v;
  return std::make_unique<Process>(args, e, dir_, "", timeout);
}

RunResult Sandbox::run(const std::vector<std::string>& args, const std::map<std::string, std::string>& extra,
                       const std::string& stdin_text, std::chrono::milliseconds timeout) {
  auto e = env;
  for (const auto& [k, v] : extra) e[k] = v;
  Process p(args, e, dir_, stdin_text, timeout);
  return p.wait();
}

RunResult Sandbox::run_shell(const std::string& script, const std::map<std::string, std::string>& extra,
                             std::chrono::milliseconds timeout) {
  auto e = env;
  for (const auto& [k, v] : extra) e[k] = v;
  e["DBFORM"] = dbform_binary();
  Process p({"-c", script}, e, dir_, "", timeout, false, "/bin/sh");
  return p.wait();
}

RunResult Sandbox::run_tty(const std::vector<std::string>& args, const std::string& typed,
                           const std::map<std::string, std::string>& extra) {
  auto e = env;
  for (const auto& [k, v] : extra) e[k] = v;
  Process p(args, e, dir_, typed, std::chrono::seconds(60), true);
  return p.wait();
}

RunResult Sandbox::apply(const std::vector<std::string>& more, const std::map<std::string, std::string>& extra) {
  std::vector<std::string> args = {"apply", "--auto-approve", "--poll-interval", "100ms"};
  args.insert(args.end(), more.begin(), more.end());
  return run(args, extra);
}

void Sandbox::write(const std::string& name, const std::string& text) {
  fs::path p = dir_ / name;
  fs::create_directories(p.parent_path());
  std::ofstream f(p, std::ios::binary | std::ios::trunc);
  f << text;
  if (!f) throw std::runtime_error("cannot write " + p.string());
}

std::string Sandbox::read(const std::string& name) const {
  std::ifstream f(dir_ / name, std::ios::binary);
  if (!f) throw std::runtime_error("cannot read " + (dir_ / name).string());
  std::ostringstream s;
  s << f.rdbuf();
  return s.str();
}

bool Sandbox::exists(const std::string& name) const { return fs::exists(dir_ / name); }

json Sandbox::state(const std::string& name) const {
  // The document with its journal replayed, as dbform itself reads it.
  auto state = dbform::FileStateStore((dir_ / name).string()).read();
  if (!state) throw std::runtime_error("no state at " + name);
  return json::parse(dbform::serialize_state(*state));
}

long long Sandbox::count(const std::string& route) const {
  json c = counts();
  return c.contains(route) ? c[route].get<long long>() : 0;
}

long long Sandbox::total_requests() const {
  long long n = 0;
  const json all = counts();  // items() must not outlive the document it iterates
  for (const auto& [route, value] : all.items()) n += value.get<long long>();
  return n;
}

// ---------------------------------------------------------------------------------------------
// Helpers

json find_resource(const json& state, const std::string& address) {
  for (const auto& r : state.value("resources", json::array()))
    if (r.value("address", "") == address) return r;
  return nullptr;
}

std::unique_ptr<dbform::FileLock> hold_state_lock(const Sandbox& sb) {
  dbform::SystemClock clock;
  std::string holder_out;
  auto held = dbform::FileLock::acquire(
      (sb.dir() / "dbform.state.json.lock").string(),
      R"({"pid":4242,"host":"ci-main","operation":"apply","since":"2026-11-26T10:00:00Z"})", dbform::Duration(0), clock,
      holder_out);
  REQUIRE(held);
  return held;
}

std::string recorded_service_id(const Sandbox& sb, const std::string& name) {
  return find_resource(sb.state(), service_address(name))["id"].get<std::string>();
}

std::map<std::string, std::string> files_beside_manifests(const Sandbox& sb) {
  std::map<std::string, std::string> files;
  for (const auto& entry : fs::directory_iterator(sb.dir())) {
    if (!entry.is_regular_file() || entry.path().extension() == ".yaml") continue;
    std::ifstream in(entry.path(), std::ios::binary);
    files[entry.path().filename().string()] = std::string(std::istreambuf_iterator<char>(in), {}) + "|mode " +
                                              std::to_string(static_cast<int>(entry.status().permissions()));
  }
  return files;
}

std::string service_address(const std::string& name, const std::string& project) {
  return project + "/services/" + name;
}

std::string vpc_address(const std::string& name, const std::string& project) { return project + "/vpcs/" + name; }

std::string manifest(const std::vector<std::string>& vpcs, const std::vector<std::string>& services,
                     const std::string& project) {
  std::string m = "version: 1\nprojects:\n  - id: " + project + "\n";
  if (!vpcs.empty()) {
    m += "    vpcs:\n";
    for (const auto& v : vpcs) m += v;
  }
  if (!services.empty()) {
    m += "    services:\n";
    for (const auto& s : services) m += s;
  }
  return m;
}

std::string service_yaml(const std::string& name, int cpu_millis, int memory_gbs) {
  return "      - name: " + name + "\n        cpu_millis: " + std::to_string(cpu_millis) +
         "\n        memory_gbs: " + std::to_string(memory_gbs) + "\n        region_code: us-east-1\n";
}

std::string vpc_yaml(const std::string& name, const std::string& cidr) {
  return "      - name: " + name + "\n        cidr: " + cidr + "\n        region_code: us-east-1\n";
}

bool wait_for_record(const Sandbox& sb, const std::string& address, bool with_id, const std::string& state_file,
                     std::chrono::milliseconds limit) {
  return eventually(
      [&] {
        try {
          json r = find_resource(sb.state(state_file), address);
          return r.is_object() && (!with_id || !r["id"].get<std::string>().empty());
        } catch (const std::exception&) {
          return false;
        }
      },
      limit);
}

HeldAnswer::HeldAnswer(Sandbox& sb, int nth, std::function<bool(const dbform::SimRequest&)> matches)
    : sb_(sb), point_(std::make_shared<Point>()) {
  point_->nth = nth;
  point_->matches = std::move(matches);
  sb_.observe([point = point_](const dbform::SimRequest& request) {
    std::unique_lock<std::mutex> lock(point->mu);
    if (point->reached || (point->matches && !point->matches(request)) || ++point->seen < point->nth) return;
    point->reached = true;
    point->held = request;
    point->cv.notify_all();
    point->cv.wait(lock, [&] { return point->released; });
  });
}

HeldAnswer::~HeldAnswer() {
  release();
  sb_.observe(nullptr);
}

bool HeldAnswer::wait(std::chrono::milliseconds limit) {
  std::unique_lock<std::mutex> lock(point_->mu);
  return point_->cv.wait_for(lock, limit, [this] { return point_->reached; });
}

dbform::SimRequest HeldAnswer::request() const {
  std::lock_guard<std::mutex> lock(point_->mu);
  return point_->held;
}

void HeldAnswer::release() {
  std::lock_guard<std::mutex> lock(point_->mu);
  point_->released = true;
  point_->cv.notify_all();
}

bool eventually(const std::function<bool()>& condition, std::chrono::milliseconds limit) {
  auto deadline = std::chrono::steady_clock::now() + limit;
  while (!condition()) {
    if (std::chrono::steady_clock::now() >= deadline) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return true;
}

}  // namespace e2e
