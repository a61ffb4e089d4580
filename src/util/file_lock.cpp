#include "util/file_lock.h"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <sstream>

#include <cerrno>
#include <cstring>

#include "util/atomic_file.h"
#include "util/error.h"

namespace dbform {

namespace {

std::string read_all(int fd) {
  std::string out;
  char buf[4096];
  off_t off = 0;
  for (;;) {
    ssize_t n = ::pread(fd, buf, sizeof buf, off);
    if (n <= 0) break;
    out.append(buf, static_cast<size_t>(n));
    off += n;
  }
  return out;
}

// Whether /proc/locks lists a granted flock(2) on the file `st` describes ("1: FLOCK ADVISORY WRITE
// PID MAJOR:MINOR:INODE 0 EOF", major and minor in hex; a waiter's line has "->" after the number).
bool flocked_now(const struct stat& st) {
  std::ifstream locks("/proc/locks");
  char id[64];
  std::snprintf(id, sizeof id, "%02x:%02x:%lu", major(st.st_dev), minor(st.st_dev),
                static_cast<unsigned long>(st.st_ino));
  for (std::string line; std::getline(locks, line);) {
    std::istringstream words(line);
    std::string number, type, mode, access, pid, file;
    words >> number >> type;
    if (type != "FLOCK") continue;  // "->" (waiting), POSIX or OFDLCK
    words >> mode >> access >> pid >> file;
    if (file == id) return true;
  }
  return false;
}

}  // namespace

std::optional<std::string> FileLock::holder_now(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) return std::nullopt;
  struct stat st {};
  std::optional<std::string> holder;
  if (::fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && flocked_now(st)) holder = read_all(fd);
  ::close(fd);
  return holder;
}

FileLock::~FileLock() {
  // Empty the file first so nobody reads a stale holder after we let go.
  if (::ftruncate(fd_, 0) != 0) { /* the lock is released by close() either way */ }
  ::close(fd_);
}

std::unique_ptr<FileLock> FileLock::acquire(const std::string& path, const std::string& holder, Duration timeout,
                                            Clock& clock, std::string& holder_out) {
  // Never through a link, and never anything but a regular file: the lock is truncated and written,
  // and a link would have that done to its target (docs/state.md). O_NONBLOCK: a FIFO must not
  // hang the open before it is refused.
  const int fd = open_own_file(path, O_RDWR);
  const auto deadline = clock.now() + timeout;
  for (;;) {
    if (::flock(fd, LOCK_EX | LOCK_NB) == 0) break;
    if (errno != EWOULDBLOCK && errno != EINTR) {
      int err = errno;
      ::close(fd);
      throw Error("cannot lock " + path + ": " + std::strerror(err));
    }
    if (clock.now() >= deadline) {
      holder_out = read_all(fd);
      ::close(fd);
      return nullptr;
    }
    clock.sleep_for(Duration(100));
  }
  auto lock = std::unique_ptr<FileLock>(new FileLock(fd));
  if (::ftruncate(fd, 0) != 0 || ::pwrite(fd, holder.data(), holder.size(), 0) != static_cast<ssize_t>(holder.size()))
    throw Error("cannot write lock file " + path + ": " + std::strerror(errno));
  return lock;
}

}  // namespace dbform
