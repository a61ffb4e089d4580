#include "util/atomic_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <string_view>

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

// write_file_atomically's temporary file: PATH + this + mkostemps' six characters.
constexpr std::string_view kAtomicSuffix = ".tmp-";
constexpr size_t kRandomChars = 6;

void write_file_atomically(const std::string& path, const std::string& content, unsigned mode) {
  std::string tmp = path + std::string(kAtomicSuffix) + std::string(kRandomChars, 'X');
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

void remove_atomic_write_leftovers(const std::string& path) {
  namespace fs = std::filesystem;
  const fs::path file(path);
  const std::string prefix = file.filename().string() + std::string(kAtomicSuffix);
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(file.has_parent_path() ? file.parent_path() : ".", ec)) {
    const std::string name = entry.path().filename().string();
    if (name.size() == prefix.size() + kRandomChars && name.starts_with(prefix) &&
        std::all_of(name.begin() + prefix.size(), name.end(), [](unsigned char c) { return std::isalnum(c); }))
      ::unlink(entry.path().c_str());
  }
}

namespace {

std::string not_regular(const std::string& path, mode_t mode) {
  const char* what = S_ISDIR(mode)                    ? "a directory"
                     : S_ISFIFO(mode)                   ? "a named pipe (FIFO)"
                     : S_ISCHR(mode) || S_ISBLK(mode)   ? "a device"
                     : S_ISSOCK(mode)                   ? "a socket"
                     : S_ISLNK(mode)                    ? "a symbolic link"
                                                        : "something else";
  return path + " is " + what + ", not a regular file: refusing to use it";
}

}  // namespace

int open_own_file(const std::string& path, int access) {
  int fd = ::open(path.c_str(), access | O_CREAT | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY, 0600);
  if (fd < 0 && errno == ELOOP) throw Error(not_regular(path, S_IFLNK));
  if (fd < 0) fail("open", path, errno);
  struct stat st {};
  if (::fstat(fd, &st) != 0) {
    const int err = errno;
    ::close(fd);
    fail("inspect", path, err);
  }
  if (!S_ISREG(st.st_mode) || st.st_nlink > 1) {
    ::close(fd);
    if (!S_ISREG(st.st_mode)) throw Error(not_regular(path, st.st_mode));
    throw Error(path + " has other names (hard links): refusing to write it, which would change the file behind "
                       "those names. Remove it if no dbform is running");
  }
  return fd;
}

void require_regular_or_absent(const std::string& path, Links links) {
  struct stat st {};
  const int rc = links == Links::Follow ? ::stat(path.c_str(), &st) : ::lstat(path.c_str(), &st);
  if (rc != 0) {
    if (errno == ENOENT) return;
    fail("inspect", path, errno);
  }
  if (!S_ISREG(st.st_mode)) throw Error(not_regular(path, st.st_mode));
}

std::optional<std::string> read_file_if_exists(const std::string& path, Links links, size_t max_bytes) {
  // O_NONBLOCK: opening a FIFO must not wait for a writer; fstat then refuses it.
  const int nofollow = links == Links::Refuse ? O_NOFOLLOW : 0;
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY | nofollow);
  if (fd < 0) {
    if (errno == ENOENT) return std::nullopt;
    if (errno == ELOOP && links == Links::Refuse) throw Error(not_regular(path, S_IFLNK));
    fail("read", path, errno);
  }
  struct stat st {};
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    const int err = errno;
    ::close(fd);
    if (st.st_mode != 0 && !S_ISREG(st.st_mode)) throw Error(not_regular(path, st.st_mode));
    fail("read", path, err);
  }
  std::string contents;
  // The size is a hint (the file may change), and only up to 64 MiB is reserved on its word.
  contents.reserve(std::min<uintmax_t>({static_cast<uintmax_t>(st.st_size), max_bytes, 64u << 20}));
  char chunk[1 << 16];
  for (;;) {
    ssize_t n = ::read(fd, chunk, sizeof chunk);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      const int err = errno;
      ::close(fd);
      fail("read", path, err);
    }
    if (n == 0) break;
    contents.append(chunk, static_cast<size_t>(n));
    if (contents.size() > max_bytes) {
      ::close(fd);
      throw FileTooLarge(path + " is larger than " + std::to_string(max_bytes) + " bytes");
    }
  }
  ::close(fd);
  return contents;
}

}  // namespace dbform
