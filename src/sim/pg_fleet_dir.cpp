// The directory of the simulator's PostgreSQL servers: taken under a lock, emptied of what a killed
// simulator left (its servers stopped first), and reachable by the servers' account.
#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>

#include "sim/pg_fleet.h"
#include "util/atomic_file.h"
#include "util/error.h"
#include "util/log.h"

namespace dbform::sim {

namespace fs = std::filesystem;

namespace {

constexpr const char* kMarker = ".dbform-sim-postgres";
constexpr size_t kMaxSocketPath = 107;  // sun_path, with its terminating zero

}  // namespace

std::string default_fleet_dir(const std::string& name) {
  const char* tmp = std::getenv("TMPDIR");
  const std::string base = tmp && *tmp ? tmp : "/tmp";
  return base + "/dbform-" + name + "-postgres-" + std::to_string(::geteuid());
}

void PostgresFleet::take_directory() {
  std::error_code ec;
  fs::path absolute = fs::absolute(dir_, ec);
  if (!ec) dir_ = absolute.lexically_normal().string();
  while (dir_.size() > 1 && dir_.back() == '/') dir_.pop_back();
  if (dir_.find_first_not_of("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789/._+-") != std::string::npos)
    throw UsageError("--postgres-dir " + dir_ + ": use letters, digits and / . _ + - only (the path goes into "
                     "PostgreSQL's configuration)");
  if ((dir_ + "/sock/.s.PGSQL.65535").size() >= kMaxSocketPath)
    throw UsageError("--postgres-dir " + dir_ + " is too long: the servers' Unix sockets live under it, and a socket's "
                     "path has at most " + std::to_string(kMaxSocketPath - 1) + " characters. Pick a shorter one");
  fs::create_directories(dir_, ec);
  if (ec) throw Error("cannot make the simulator's PostgreSQL directory " + dir_ + ": " + ec.message());
  // The servers run as another user when this runs as root: every directory above must let it in.
  if (account_.switch_user)
    for (fs::path up = fs::path(dir_).parent_path(); !up.empty(); up = up.parent_path()) {
      struct stat st {};
      if (::stat(up.c_str(), &st) == 0) {
        const bool enters = (st.st_mode & S_IXOTH) || (st.st_uid == account_.uid && (st.st_mode & S_IXUSR)) ||
                            (st.st_gid == account_.gid && (st.st_mode & S_IXGRP));
        if (!enters)
          throw UsageError("the PostgreSQL servers run as user " + account_.name + ", which cannot enter " +
                           up.string() + " to reach " + dir_ + ": pick a --postgres-dir it can reach (e.g. under /tmp)");
      }
      if (up == up.root_path()) break;
    }
  const bool ours = fs::exists(dir_ + "/" + kMarker);
  if (!ours && !fs::is_empty(dir_, ec))
    throw UsageError(dir_ + " is not empty and was not made by dbform sim --postgres: pick another --postgres-dir "
                     "(the simulator removes its directory when it stops)");
  lock_fd_ = ::open((dir_ + "/.lock").c_str(), O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
  if (lock_fd_ < 0) throw Error("cannot open " + dir_ + "/.lock: " + std::strerror(errno));
  if (::flock(lock_fd_, LOCK_EX | LOCK_NB) != 0) {
    const std::string holder = output_tail(read_text(dir_ + "/.lock"), 20);
    ::close(lock_fd_);
    lock_fd_ = -1;
    throw UsageError(dir_ + " is in use by another dbform simulator" + (holder.empty() ? "" : " (pid " + holder + ")") +
                     ": stop it, or pass --postgres-dir with another directory");
  }
  const std::string pid = std::to_string(::getpid()) + "\n";
  if (::ftruncate(lock_fd_, 0) != 0 || ::pwrite(lock_fd_, pid.data(), pid.size(), 0) < 0)
    throw Error("cannot write " + dir_ + "/.lock: " + std::strerror(errno));
  write_file_atomically(dir_ + "/" + kMarker, "made by dbform sim --postgres; removed when it stops\n", 0644);
  // What a killed simulator left: its servers are stopped (found by their postmaster.pid), its
  // files removed.
  std::vector<std::string> data_dirs = {dir_ + "/template"};
  for (const auto& entry : fs::directory_iterator(dir_ + "/db", ec)) data_dirs.push_back(entry.path().string());
  for (const auto& data_dir : data_dirs) {
    auto pid_found = live_postmaster(data_dir);
    if (!pid_found) continue;
    ProgramResult r = tool({bindir_ + "/pg_ctl", "stop", "-D", data_dir, "-m", "immediate", "-w", "-t", "60", "-s"});
    if (r.exit_code != 0 && live_postmaster(data_dir))
      throw Error("cannot stop the PostgreSQL server (pid " + std::to_string(*pid_found) + ") that an earlier "
                  "simulator left in " + data_dir + ": " + output_tail(r.output));
    log::warn("sim: stopped the PostgreSQL server (pid " + std::to_string(*pid_found) + ") an earlier simulator left in " +
              data_dir);
  }
  for (const auto& entry : fs::directory_iterator(dir_)) {
    const std::string name = entry.path().filename().string();
    if (name != ".lock" && name != kMarker) fs::remove_all(entry.path());
  }
  for (const char* sub : {"db", "log", "sock", "tls"}) {
    fs::create_directory(dir_ + "/" + sub);
    fs::permissions(dir_ + "/" + sub, fs::perms::owner_all, fs::perm_options::replace);
  }
  fs::permissions(dir_, fs::perms::owner_all, fs::perm_options::replace);
  give_to(dir_, account_);
}
}  // namespace dbform::sim
