#pragma once
#include <memory>
#include <optional>
#include <string>

#include "util/clock.h"

namespace dbform {

// An exclusive flock(2) on a lock file. The kernel releases it when the process dies, so a crashed
// run never blocks the next one. While held, the file contains `holder` (a description of who holds
// it) so a refused run can say who is in the way.
class FileLock {
 public:
  ~FileLock();
  FileLock(const FileLock&) = delete;
  FileLock& operator=(const FileLock&) = delete;

  // Tries until `timeout` has passed (0: once). On success the lock is held; otherwise returns
  // nullopt and sets `holder_out` to what the current holder wrote. Throws Error if the lock file
  // cannot be opened.
  static std::unique_ptr<FileLock> acquire(const std::string& path, const std::string& holder, Duration timeout,
                                           Clock& clock, std::string& holder_out);

  // What the holder of the lock on `path` wrote, when a process holds it now; nullopt when none
  // does (or the file is absent). Asked without locking or writing anything (Linux's /proc/locks),
  // so that a reader never gets in the way of a run that wants the lock.
  static std::optional<std::string> holder_now(const std::string& path);

 private:
  explicit FileLock(int fd) : fd_(fd) {}
  int fd_;
};

}  // namespace dbform
