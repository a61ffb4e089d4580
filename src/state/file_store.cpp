#include "state/file_store.h"

#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "state/codec.h"
#include "util/atomic_file.h"
#include "util/file_lock.h"

namespace dbform {

namespace {

class FileStateLock : public StateLock {
 public:
  explicit FileStateLock(std::unique_ptr<FileLock> lock) : lock_(std::move(lock)) {}

 private:
  std::unique_ptr<FileLock> lock_;
};

std::string hostname() {
  char buf[256] = {0};
  if (::gethostname(buf, sizeof buf - 1) != 0) return "unknown-host";
  return buf;
}

// Keeps the current file as PATH.backup without copying it: a hard link to the old inode,
// renamed into place so the backup, too, is replaced atomically.
void keep_backup(const std::string& path) {
  std::string tmp = path + ".backup.tmp";
  ::unlink(tmp.c_str());
  if (::link(path.c_str(), tmp.c_str()) != 0) {
    if (errno == ENOENT) return;  // first write: nothing to keep
    throw Error("cannot keep a backup of " + path + ": " + std::strerror(errno));
  }
  if (::rename(tmp.c_str(), (path + ".backup").c_str()) != 0)
    throw Error("cannot keep a backup of " + path + ": " + std::strerror(errno));
}

}  // namespace

std::string LockInfo::str() const {
  return "pid " + std::to_string(pid) + " on " + host + ", running `" + operation + "` since " + since;
}

FileStateStore::FileStateStore(std::string path) : path_(std::move(path)) {}

std::optional<State> FileStateStore::read() {
  auto text = read_file_if_exists(path_);
  if (!text) {
    stored_.reset();
    return std::nullopt;
  }
  State state = parse_state(*text, path_);
  stored_ = {state.lineage, state.serial};
  return state;
}

void FileStateStore::write(State& state) {
  if (!stored_) {
    // Written without a read first: make sure we are not replacing someone else's state.
    if (auto text = read_file_if_exists(path_)) {
      State on_disk = parse_state(*text, path_);
      stored_ = {on_disk.lineage, on_disk.serial};
    }
  }
  if (stored_ && (stored_->first != state.lineage || stored_->second != state.serial))
    throw StateError(path_ + " changed since it was read (lineage " + stored_->first + " serial " +
                     std::to_string(stored_->second) + ", expected lineage " + state.lineage + " serial " +
                     std::to_string(state.serial) + "); nothing was overwritten. Run the command again");
  State next = state;
  next.serial = state.serial + 1;
  std::string text = serialize_state(next);
  keep_backup(path_);
  write_file_atomically(path_, text, 0600);
  state.serial = next.serial;
  stored_ = {state.lineage, state.serial};
}

std::unique_ptr<StateLock> FileStateStore::lock(const std::string& operation, Duration timeout) {
  LockInfo me{static_cast<long long>(::getpid()), hostname(), operation, format_utc(std::chrono::system_clock::now())};
  nlohmann::json info = {{"pid", me.pid}, {"host", me.host}, {"operation", me.operation}, {"since", me.since}};
  SystemClock clock;
  std::string holder_text;
  auto lock = FileLock::acquire(path_ + ".lock", info.dump(), timeout, clock, holder_text);
  if (lock) return std::make_unique<FileStateLock>(std::move(lock));
  std::string holder = "another dbform process (it has not written its details yet)";
  try {
    auto j = nlohmann::json::parse(holder_text);
    LockInfo h{j.value("pid", 0LL), j.value("host", ""), j.value("operation", ""), j.value("since", "")};
    holder = h.str();
  } catch (const nlohmann::json::exception&) {
  }
  throw LockError("the state " + path_ + " is locked by " + holder +
                  ". Wait for it to finish, or pass --lock-timeout to wait for it");
}

}  // namespace dbform
