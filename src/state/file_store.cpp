#include "util/host.h"
#include "state/file_store.h"

#include <sys/stat.h>
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

// Keeps the current file as PATH.backup without copying it: a hard link to the old inode,
// renamed into place so the backup, too, is replaced atomically. Where the file system refuses
// hard links (SMB, some FUSE mounts) the backup is an atomically written copy instead.
void keep_backup(const std::string& path) {
  std::string tmp = path + ".backup.tmp";
  ::unlink(tmp.c_str());
  if (::link(path.c_str(), tmp.c_str()) == 0) {
    if (::rename(tmp.c_str(), (path + ".backup").c_str()) != 0)
      throw Error("cannot keep a backup of " + path + ": " + std::strerror(errno));
    return;
  }
  if (errno == ENOENT) return;  // first write: nothing to keep
  if (errno != EPERM && errno != ENOTSUP && errno != EOPNOTSUPP && errno != EMLINK && errno != ENOSYS)
    throw Error("cannot keep a backup of " + path + ": " + std::strerror(errno));
  if (auto current = read_file_if_exists(path)) write_file_atomically(path + ".backup", *current, 0600);
}

// Inode, size and modification time: changes whenever another process replaces the file.
std::string file_identity(const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) return "absent";
  return std::to_string(st.st_ino) + ":" + std::to_string(st.st_size) + ":" + std::to_string(st.st_mtim.tv_sec) +
         "." + std::to_string(st.st_mtim.tv_nsec);
}

}  // namespace

std::string LockInfo::str() const {
  return "pid " + std::to_string(pid) + " on " + host + ", running `" + operation + "` since " + since;
}

FileStateStore::FileStateStore(std::string path) : path_(std::move(path)) {}

void FileStateStore::remember(const State& state) {
  seen_ = Seen{state.lineage, state.serial, file_identity(path_)};
}

std::optional<State> FileStateStore::read() {
  auto text = read_file_if_exists(path_);
  if (!text) {
    seen_.reset();
    return std::nullopt;
  }
  State state = parse_state(*text, path_);
  remember(state);
  return state;
}

void FileStateStore::write(State& state) {
  const std::string identity = file_identity(path_);
  if (identity != "absent" && (!seen_ || seen_->file_identity != identity)) {
    // Replaced (or never read) since we last looked: compare with what is there now.
    if (auto text = read_file_if_exists(path_)) {
      State on_disk = parse_state(*text, path_);
      seen_ = Seen{on_disk.lineage, on_disk.serial, identity};
    }
  }
  if (identity != "absent" && seen_ && (seen_->lineage != state.lineage || seen_->serial != state.serial))
    throw StateError(path_ + " changed since it was read (now lineage " + seen_->lineage + " serial " +
                     std::to_string(seen_->serial) + ", expected lineage " + state.lineage + " serial " +
                     std::to_string(state.serial) + "); nothing was overwritten. Run the command again");
  ++state.serial;
  try {
    keep_backup(path_);
    write_file_atomically(path_, serialize_state(state), 0600);
  } catch (...) {
    --state.serial;
    throw;
  }
  remember(state);
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
