#include "sim/pg_programs.h"

#include <fcntl.h>
#include <grp.h>
#include <poll.h>
#include <pwd.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "util/env.h"
#include "util/error.h"
#include "util/text.h"

namespace dbform::sim {

namespace fs = std::filesystem;

namespace {

constexpr size_t kKeptOutput = 64 * 1024;

bool has_tools(const std::string& dir) {
  for (const char* tool : {"initdb", "pg_ctl", "pg_basebackup"})
    if (::access((dir + "/" + tool).c_str(), X_OK) != 0) return false;
  return true;
}

// `pg_config --bindir`, or "" when there is no pg_config on PATH or it fails.
std::string pg_config_bindir() {
  const auto pg_config = find_on_path("pg_config");
  if (!pg_config) return "";
  ProgramResult r = run_program({*pg_config, "--bindir"}, RunAs{});
  if (r.exit_code != 0) return "";
  std::string out = r.output;
  while (!out.empty() && (out.back() == '\n' || out.back() == '\r')) out.pop_back();
  return out;
}

// Debian's server packages, newest major version first.
std::vector<std::string> debian_bindirs() {
  std::vector<std::pair<int, std::string>> found;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator("/usr/lib/postgresql", ec)) {
    const std::string version = entry.path().filename().string();
    if (version.empty() || version.find_first_not_of("0123456789.") != std::string::npos) continue;
    found.emplace_back(std::atoi(version.c_str()), entry.path().string() + "/bin");
  }
  std::sort(found.begin(), found.end(), [](const auto& a, const auto& b) { return a.first > b.first; });
  std::vector<std::string> out;
  for (auto& f : found) out.push_back(std::move(f.second));
  return out;
}

}  // namespace

std::string find_pg_bindir() {
  std::vector<std::string> tried;
  if (const char* env = std::getenv("PG_BINDIR"); env && *env) {
    if (has_tools(env)) return env;
    tried.push_back(std::string(env) + " ($PG_BINDIR)");
  }
  if (std::string dir = pg_config_bindir(); !dir.empty()) {
    if (has_tools(dir)) return dir;
    tried.push_back(dir + " (pg_config --bindir)");
  }
  for (const auto& dir : debian_bindirs()) {
    if (has_tools(dir)) return dir;
    tried.push_back(dir);
  }
  throw Error("--postgres needs PostgreSQL's server programs (initdb, pg_ctl, pg_basebackup) and did not find them" +
              (tried.empty() ? std::string(" (no pg_config on PATH, no /usr/lib/postgresql/*/bin)")
                             : " in " + join(tried, ", ")) +
              ". Install them (Debian: apt-get install postgresql) or set PG_BINDIR to their directory; without "
              "--postgres, `dbform sim` and `dbform demo` need none of them");
}

RunAs server_account() {
  RunAs as;
  if (::geteuid() != 0) return as;
  struct passwd* pw = ::getpwnam("postgres");
  if (!pw)
    throw Error("dbform sim --postgres runs as root, and PostgreSQL's server refuses to run as root: it runs the "
                "servers as the `postgres` user, which does not exist here. Create it (the Debian package "
                "`postgresql` does) or run the simulator as another user");
  as.switch_user = true;
  as.uid = pw->pw_uid;
  as.gid = pw->pw_gid;
  as.name = "postgres";
  return as;
}

ProgramResult run_program(const std::vector<std::string>& argv, const RunAs& as) {
  // Everything the child needs is built before fork(): after it only async-signal-safe calls.
  std::vector<char*> args;
  for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  const std::string home = as.switch_user ? "HOME=/tmp" : std::string("HOME=") + (std::getenv("HOME") ? std::getenv("HOME") : "/tmp");
  std::vector<std::string> env_strings = {"PATH=/usr/local/bin:/usr/bin:/bin", "LC_ALL=C", home};
  std::vector<char*> env;
  for (auto& e : env_strings) env.push_back(e.data());
  env.push_back(nullptr);

  int pipe_fds[2];
  if (::pipe2(pipe_fds, O_CLOEXEC) != 0) throw Error(std::string("cannot run ") + argv[0] + ": pipe: " + std::strerror(errno));
  const pid_t pid = ::fork();
  if (pid < 0) {
    const int err = errno;
    ::close(pipe_fds[0]);
    ::close(pipe_fds[1]);
    throw Error(std::string("cannot run ") + argv[0] + ": fork: " + std::strerror(err));
  }
  if (pid == 0) {
    const int devnull = ::open("/dev/null", O_RDONLY);
    if (devnull < 0 || ::dup2(devnull, 0) < 0 || ::dup2(pipe_fds[1], 1) < 0 || ::dup2(pipe_fds[1], 2) < 0) ::_exit(126);
    // No descriptor of dbform's (the simulator's listening socket above all) outlives it in a server.
    if (::syscall(SYS_close_range, 3U, ~0U, 0U) != 0)
      for (int fd = 3; fd < 65536; ++fd) ::close(fd);
    if (as.switch_user && (::setgroups(0, nullptr) != 0 || ::setgid(as.gid) != 0 || ::setuid(as.uid) != 0))
      ::_exit(126);
    if (::chdir("/") != 0) ::_exit(126);
    ::execve(args[0], args.data(), env.data());
    ::_exit(127);
  }
  ::close(pipe_fds[1]);
  ProgramResult result;
  char buffer[4096];
  for (;;) {
    const ssize_t n = ::read(pipe_fds[0], buffer, sizeof buffer);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    result.output.append(buffer, static_cast<size_t>(n));
    if (result.output.size() > 2 * kKeptOutput) result.output.erase(0, result.output.size() - kKeptOutput);
  }
  ::close(pipe_fds[0]);
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  result.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  if (result.exit_code == 127 && result.output.empty()) result.output = "could not execute " + argv[0];
  if (result.output.size() > kKeptOutput) result.output.erase(0, result.output.size() - kKeptOutput);
  return result;
}

std::string output_tail(const std::string& text, size_t max_chars) {
  std::string t = text.size() > max_chars ? text.substr(text.size() - max_chars) : text;
  std::string out;
  for (char c : t) out += (c == '\n' || c == '\r') ? ' ' : c;
  while (!out.empty() && out.back() == ' ') out.pop_back();
  return out;
}

std::string read_text(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

std::optional<long> live_postmaster(const std::string& data_dir) {
  std::ifstream in(data_dir + "/postmaster.pid");
  long pid = 0;
  if (!(in >> pid) || pid <= 0) return std::nullopt;
  std::error_code ec;
  const fs::path exe = fs::read_symlink("/proc/" + std::to_string(pid) + "/exe", ec);
  if (ec) return std::nullopt;  // gone
  const std::string name = exe.filename().string();
  if (name.rfind("postgres", 0) != 0) return std::nullopt;  // a pid reused by another program
  return pid;
}

void give_to(const std::string& path, const RunAs& as) {
  if (!as.switch_user) return;
  auto own = [&](const fs::path& p) {
    if (::lchown(p.c_str(), as.uid, as.gid) != 0)
      throw Error("cannot give " + p.string() + " to user " + as.name + ": " + std::strerror(errno));
  };
  own(path);
  if (!fs::is_directory(fs::symlink_status(path))) return;
  for (const auto& entry : fs::recursive_directory_iterator(path)) own(entry.path());
}

}  // namespace dbform::sim
