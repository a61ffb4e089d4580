#include "util/atomic_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>

#include "util/error.h"

namespace dbform {

namespace {

[[noreturn]] void fail(const std::string& what, const std::string& path, int err) {
  throw Error("cannot " + what + " " + path + ": " + std::strerror(err));
}

void write_all(int fd, const std::string& content, const std::string& path) {
  const char* p = content.data();
  size_t left = content.size();
  while (left > 0) {
    ssize_t n = ::write(fd, p, left);
    if (n < 0) {
      if (errno == EINTR) continue;
      fail("write", path, errno);
    }
    p += n;
    left -= static_cast<size_t>(n);
  }
}


// A new file from `templ` (ending in XXXXXX, then `suffix_length` more characters), created with
// O_EXCL|O_NOFOLLOW under a name nobody could predict, set to `mode` and checked to be a regular
// file of ours with exactly that mode. `templ` becomes the file's name.
int create_exclusively(std::string& templ, int suffix_length, unsigned mode) {
  int fd = ::mkostemps(templ.data(), suffix_length, O_CLOEXEC | O_NOFOLLOW);
  if (fd < 0) fail("create", templ, errno);
  struct stat st {};
  // mkostemps creates 0600; fchmod sets the mode wanted, which the umask must not narrow.
  if (::fchmod(fd, mode) != 0 || ::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || st.st_uid != ::geteuid() ||
      (st.st_mode & 07777) != mode) {
    int err = errno;
    ::close(fd);
    ::unlink(templ.c_str());
    throw Error("cannot create " + templ + " with mode " + std::to_string(mode) + " owned by this user" +
                (err ? std::string(": ") + std::strerror(err) : std::string()));
  }
  return fd;
}

void write_and_sync(int fd, const std::string& content, const std::string& path) {
  try {
    write_all(fd, content, path);
    if (::fsync(fd) != 0) fail("fsync", path, errno);
  } catch (...) {
    ::close(fd);
    ::unlink(path.c_str());
    throw;
  }
}

}  // namespace

void fsync_directory_of(const std::string& path) {
  std::string dir = std::filesystem::path(path).parent_path().string();
  if (dir.empty()) dir = ".";
  int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) fail("open directory", dir, errno);
  int rc = ::fsync(fd);
  int err = errno;
  ::close(fd);
  if (rc != 0) fail("fsync directory", dir, err);
}

std::string write_new_private_file(const std::string& dir, const std::string& prefix, const std::string& suffix,
                                   const std::string& content) {
  std::string path = (std::filesystem::path(dir) / (prefix + "XXXXXX" + suffix)).string();
  int fd = create_exclusively(path, static_cast<int>(suffix.size()), 0600);
  write_and_sync(fd, content, path);
  if (::close(fd) != 0) {
    int err = errno;
    ::unlink(path.c_str());
    fail("close", path, err);
  }
  return path;
}

void write_file_atomically(const std::string& path, const std::string& content, unsigned mode) {
  std::string tmp = path + ".tmp-XXXXXX";
  int fd = create_exclusively(tmp, 0, mode);
  write_and_sync(fd, content, tmp);
  if (::close(fd) != 0) {
    int err = errno;
    ::unlink(tmp.c_str());
    fail("close", tmp, err);
  }
  if (::rename(tmp.c_str(), path.c_str()) != 0) {
    int err = errno;
    ::unlink(tmp.c_str());
    fail("rename " + tmp + " to", path, err);
  }
  fsync_directory_of(path);
}

std::optional<std::string> read_file_if_exists(const std::string& path) {
  std::error_code ec;
  if (!std::filesystem::exists(path, ec) && !ec) return std::nullopt;
  std::ifstream in(path, std::ios::binary);
  if (!in) fail("read", path, errno);
  std::string contents;
  // The size is a hint (the file may change), and only up to 64 MiB is reserved on its word.
  if (auto size = std::filesystem::file_size(path, ec); !ec) contents.reserve(std::min<uintmax_t>(size, 64u << 20));
  char chunk[1 << 16];
  do {
    in.read(chunk, sizeof chunk);
    contents.append(chunk, static_cast<size_t>(in.gcount()));
  } while (in);
  if (in.bad()) fail("read", path, errno);
  return contents;
}

}  // namespace dbform
