#include "util/file_lock.h"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

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

}  // namespace

FileLock::~FileLock() {
  // Empty the file first so nobody reads a stale holder after we let go.
  if (::ftruncate(fd_, 0) != 0) { /* the lock is released by close() either way */ }
  ::close(fd_);
}

std::unique_ptr<FileLock> FileLock::acquire(const std::string& path, const std::string& holder, Duration timeout,
                                            Clock& clock, std::string& holder_out) {
  // Never through a link, and never anything but a regular file: the lock is truncated and written,
  // and a link would have that done to its target (SPEC section 5). O_NONBLOCK: a FIFO must not
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
