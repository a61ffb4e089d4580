#include "util/atomic_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

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

}  // namespace

void write_file_atomically(const std::string& path, const std::string& content, unsigned mode) {
  std::string tmp = path + ".tmp";
  int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, mode);
  if (fd < 0) fail("create", tmp, errno);
  try {
    ::fchmod(fd, mode);  // O_CREAT's mode is filtered by the umask and ignored for an old file
    write_all(fd, content, tmp);
    if (::fsync(fd) != 0) fail("fsync", tmp, errno);
  } catch (...) {
    ::close(fd);
    ::unlink(tmp.c_str());
    throw;
  }
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
  std::ostringstream ss;
  ss << in.rdbuf();
  if (in.bad()) fail("read", path, errno);
  return ss.str();
}

}  // namespace dbform
