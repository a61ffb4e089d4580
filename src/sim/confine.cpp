#include "sim/confine.h"

#include <fcntl.h>
#include <grp.h>
#include <linux/landlock.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstring>

#include "util/error.h"

namespace dbform::sim {

namespace {

// The file-system rights of each Landlock ABI (the kernel's header may be older than the kernel).
constexpr uint64_t kExecute = 1ULL << 0, kWriteFile = 1ULL << 1, kReadFile = 1ULL << 2, kReadDir = 1ULL << 3,
                   kRemoveDir = 1ULL << 4, kRemoveFile = 1ULL << 5, kMakeChar = 1ULL << 6, kMakeDir = 1ULL << 7,
                   kMakeReg = 1ULL << 8, kMakeSock = 1ULL << 9, kMakeFifo = 1ULL << 10, kMakeBlock = 1ULL << 11,
                   kMakeSym = 1ULL << 12, kRefer = 1ULL << 13, kTruncate = 1ULL << 14, kIoctlDev = 1ULL << 15;

uint64_t handled_by(int abi) {
  uint64_t rights = kExecute | kWriteFile | kReadFile | kReadDir | kRemoveDir | kRemoveFile | kMakeChar | kMakeDir |
                    kMakeReg | kMakeSock | kMakeFifo | kMakeBlock | kMakeSym;
  if (abi >= 2) rights |= kRefer;
  if (abi >= 3) rights |= kTruncate;
  if (abi >= 5) rights |= kIoctlDev;
  return rights;
}

// What a rule on a regular file may allow (a directory's rights are refused on a file).
constexpr uint64_t kFileRights = kExecute | kWriteFile | kReadFile | kTruncate | kIoctlDev;

struct Rule {
  std::string path;
  uint64_t rights;
};

// In the child, after fork(): system calls only. A path that does not exist is not allowed (no
// rule); any other failure makes the child exit before it runs anything unconfined.
bool restrict_self(const std::vector<Rule>& rules, uint64_t handled) {
  landlock_ruleset_attr attr{};
  attr.handled_access_fs = handled;
  const int ruleset = static_cast<int>(::syscall(__NR_landlock_create_ruleset, &attr, sizeof attr, 0));
  if (ruleset < 0) return false;
  for (const Rule& r : rules) {
    const int fd = ::open(r.path.c_str(), O_PATH | O_CLOEXEC);
    if (fd < 0) continue;
    struct stat st;
    uint64_t rights = r.rights & handled;
    if (::fstat(fd, &st) == 0 && !S_ISDIR(st.st_mode)) rights &= kFileRights;
    landlock_path_beneath_attr beneath{};
    beneath.allowed_access = rights;
    beneath.parent_fd = fd;
    const long added = rights == 0 ? 0 : ::syscall(__NR_landlock_add_rule, ruleset, LANDLOCK_RULE_PATH_BENEATH, &beneath, 0);
    ::close(fd);
    if (added != 0) return false;
  }
  const bool ok = ::prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) == 0 && ::syscall(__NR_landlock_restrict_self, ruleset, 0) == 0;
  ::close(ruleset);
  return ok;
}

}  // namespace

int landlock_abi() {
  const long abi = ::syscall(__NR_landlock_create_ruleset, nullptr, 0, LANDLOCK_CREATE_RULESET_VERSION);
  return abi < 0 ? 0 : static_cast<int>(abi);
}

pid_t start_confined_daemon(const std::vector<std::string>& argv, const RunAs& as, const std::string& log_file,
                            const Confinement& c) {
  // Everything the children need is built before fork(): after it only async-signal-safe calls.
  std::vector<char*> args;
  for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  std::string path_env = "PATH=/usr/bin:/bin", locale = "LC_ALL=C", home = "HOME=/nonexistent";
  char* env[] = {path_env.data(), locale.data(), home.data(), nullptr};
  const int abi = landlock_abi();
  const uint64_t handled = handled_by(abi);
  constexpr uint64_t kRead = kReadFile | kReadDir;
  std::vector<Rule> rules = {{c.executable, kExecute | kReadFile}, {"/dev/null", kReadFile | kWriteFile},
                             {"/dev/urandom", kReadFile}};
  for (const auto& p : c.loaders) rules.push_back({p, kExecute | kReadFile});
  for (const auto& p : c.read_only) rules.push_back({p, kRead});
  for (const auto& p : c.read_write) rules.push_back({p, handled & ~kExecute});
  for (const auto& p : c.socket_dirs)
    rules.push_back({p, kRead | kWriteFile | kMakeSock | kMakeReg | kRemoveFile | kTruncate});

  const int log_fd = ::open(log_file.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
  if (log_fd < 0) throw Error("cannot open " + log_file + ": " + std::strerror(errno));
  if (as.switch_user && ::fchown(log_fd, as.uid, as.gid) != 0) {
    ::close(log_fd);
    throw Error("cannot give " + log_file + " to user " + as.name + ": " + std::strerror(errno));
  }
  int pid_pipe[2], exec_pipe[2];
  if (::pipe2(pid_pipe, O_CLOEXEC) != 0 || ::pipe2(exec_pipe, O_CLOEXEC) != 0) {
    ::close(log_fd);
    throw Error(std::string("cannot start ") + argv[0] + ": pipe: " + std::strerror(errno));
  }
  const pid_t first = ::fork();
  if (first < 0) throw Error(std::string("cannot start ") + argv[0] + ": fork: " + std::strerror(errno));
  if (first == 0) {
    // The first child only starts the daemon in a session of its own, and reports its pid.
    ::setsid();
    const pid_t daemon = ::fork();
    if (daemon == 0) {
      const int devnull = ::open("/dev/null", O_RDONLY);
      if (devnull < 0 || ::dup2(devnull, 0) < 0 || ::dup2(log_fd, 1) < 0 || ::dup2(log_fd, 2) < 0) ::_exit(126);
      // No descriptor of dbform's outlives it in a server, but the pipe that tells the exec failed
      // (descriptor 3, closed by the exec).
      if (exec_pipe[1] != 3 && ::dup3(exec_pipe[1], 3, O_CLOEXEC) < 0) ::_exit(126);
      if (::syscall(SYS_close_range, 4U, ~0U, 0U) != 0)
        for (int fd = 4; fd < 65536; ++fd) ::close(fd);
      int err = 0;
      if (as.switch_user && (::setgroups(0, nullptr) != 0 || ::setgid(as.gid) != 0 || ::setuid(as.uid) != 0)) err = errno;
      if (!err && ::chdir("/") != 0) err = errno;
      if (!err && abi > 0 && !restrict_self(rules, handled)) err = errno ? errno : EPERM;
      if (!err) {
        ::execve(args[0], args.data(), env);
        err = errno;
      }
      [[maybe_unused]] ssize_t w = ::write(3, &err, sizeof err);
      ::_exit(127);
    }
    [[maybe_unused]] ssize_t w = ::write(pid_pipe[1], &daemon, sizeof daemon);
    ::_exit(daemon < 0 ? 1 : 0);
  }
  ::close(log_fd);
  ::close(pid_pipe[1]);
  ::close(exec_pipe[1]);
  int status = 0;
  while (::waitpid(first, &status, 0) < 0 && errno == EINTR) {
  }
  pid_t daemon = -1;
  const bool got_pid = ::read(pid_pipe[0], &daemon, sizeof daemon) == sizeof daemon && daemon > 0;
  ::close(pid_pipe[0]);
  int err = 0;
  ssize_t n;
  while ((n = ::read(exec_pipe[0], &err, sizeof err)) < 0 && errno == EINTR) {
  }
  ::close(exec_pipe[0]);
  if (!got_pid) throw Error(std::string("cannot start ") + argv[0] + ": fork failed");
  if (n == sizeof err)
    throw Error(std::string("cannot start ") + argv[0] + (abi > 0 ? " confined" : "") + ": " + std::strerror(err));
  return daemon;
}

}  // namespace dbform::sim
