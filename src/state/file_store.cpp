#include "util/host.h"
#include "state/file_store.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <filesystem>
#include <cstring>
#include <fcntl.h>

#include "state/codec.h"
#include "util/atomic_file.h"
#include "util/duration.h"
#include "util/file_lock.h"
#include "util/text.h"
#include "util/json_limits.h"

namespace dbform {

namespace fs = std::filesystem;

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
  if (pid == 0) return "another dbform process (it has not written its details yet)";
  return "pid " + std::to_string(pid) + " on " + host + ", running `" + operation + "` since " + since;
}

std::string lock_refused_advice(Duration timeout) {
  if (timeout <= Duration(0)) return ". Wait for it to finish, or pass --lock-timeout to wait for it";
  return ". It still held it after --lock-timeout " + format_duration(timeout) +
         ": wait for it to finish, or pass a longer --lock-timeout";
}

std::unique_ptr<StateLock> lock_state(StateStore& store, const std::string& operation, Duration timeout,
                                      const LockWaitNotice& notice) {
  if (timeout <= Duration(0) || !notice) return store.lock(operation, timeout);
  try {
    return store.lock(operation, Duration(0));
  } catch (const LockError&) {
    notice(store.lock_holder().value_or(LockInfo{}).str(), timeout);
  }
  return store.lock(operation, timeout);
}

namespace {

// A state file given as a symbolic link is the link's target: written in the target's directory
// (the link stays a link). A link to nothing is an error: read as "no state yet", it would have
// every resource created again.
std::string through_links(const std::string& path) {
  std::error_code ec;
  if (!fs::is_symlink(fs::symlink_status(path, ec))) return path;
  auto target = fs::canonical(path, ec);
  if (ec) {
    std::error_code link_ec;
    throw StateError(path + " is a symbolic link to " + fs::read_symlink(path, link_ec).string() +
                     ", which cannot be reached (" + ec.message() +
                     "): refusing to read it as no state, which would create every resource again. Restore the "
                     "link's target, or give --state the state file itself");
  }
  return target.string();
}

}  // namespace

FileStateStore::FileStateStore(std::string path)
    : given_(std::move(path)), path_(through_links(given_)), journal_path_(path_ + ".journal") {
  // Refused before anything is read or written: a FIFO would hang the read, a directory or device
  // is no state, and dbform's own files are never written through a link (docs/state.md). A link
  // is named as given, with what it points to.
  try {
    require_regular_or_absent(path_, Links::Follow);
  } catch (const Error& e) {
    const std::string what = e.what(), prefix = path_ + " is ";
    if (given_ == path_ || what.rfind(prefix, 0) != 0) throw;
    throw Error(given_ + " is a symbolic link to " + path_ + ", which is " + what.substr(prefix.size()));
  }
  for (const std::string& own : own_files())
    if (own != path_) require_regular_or_absent(own, Links::Refuse);
}

std::string FileStateStore::command_line_args() const { return "--state " + shell_quote(given_); }

namespace {

size_t file_size(const std::string& path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0 ? static_cast<size_t>(st.st_size) : 0;
}

// The key id a journal line's passwords are sealed with, "" for a line in clear; a line that is not
// JSON counts as in the document's form (`fallback`), so that replaying it reports it.
std::string journal_form(const std::string& line, const std::string& fallback, long long* serial) {
  std::string problem;
  const nlohmann::json j = parse_json_within(line, JsonLimits{kMaxStateBytes, kMaxStateDepth}, problem);
  if (j.is_discarded()) return fallback;
  if (auto at = j.find("serial"); at != j.end() && at->is_number_integer()) *serial = at->get<long long>();
  return journal_entry_key_id(j);
}

std::string key_words(const std::string& key_id) { return key_id.empty() ? "in clear" : "sealed with key id " + key_id; }

}  // namespace

std::optional<State> FileStateStore::read_current() {
  // Without the lock (a plan reads so), a whole write can replace the document and remove its
  // journal between the two reads: read again until the document was one file throughout.
  for (int attempt = 0; attempt < 100; ++attempt) {
    bool torn = false;
    auto state = read_once(torn);
    if (!torn) return state;
  }
  throw StateError(path_ + " kept changing while it was read (another run is writing it); nothing was changed. "
                   "Run the command again");
}

std::optional<State> FileStateStore::read_once(bool& torn) {
  const std::string identity = file_identity(path_);
  auto text = read_file_if_exists(path_, Links::Follow, kMaxStateBytes);
  if (!text) {
    if (read_file_if_exists(journal_path_, Links::Refuse))
      throw StateError(journal_path_ + " exists but " + path_ + " does not: refusing to guess the state. Restore " +
                       path_ + " (from " + path_ + ".backup), or remove the journal if the state is really gone");
    seen_.reset();
    return std::nullopt;
  }
  std::string key_id;
  State state = parse_state(*text, path_, cipher(), &key_id);
  size_t acknowledged = 0;
  bool leftover = false;
  if (auto journal = read_file_if_exists(journal_path_, Links::Refuse)) {
    size_t line_no = 0;
    for (size_t end; (end = journal->find('\n', acknowledged)) != std::string::npos; acknowledged = end + 1) {
      const std::string line = journal->substr(acknowledged, end - acknowledged);
      ++line_no;
      // A journal is appended to only in its document's form (write_changes rewrites the whole
      // state first otherwise), so a line in another form was folded into the document by a whole
      // rewrite (rekey, encrypt, decrypt) that was killed before it removed the journal: skipped.
      // Such a leftover holds only what its document does, so its serial is the document's or
      // older: a newer line in another form was written for another document (a hand edit, a copy
      // from another state), and skipping it would lose a change silently.
      long long serial = 0;
      if (const std::string form = journal_form(line, key_id, &serial); form != key_id) {
        if (serial > state.serial) {
          // Read without the lock while a rewrite to another key replaced the document and its new
          // journal began: read again. Otherwise it is the damage said below.
          if (file_identity(path_) != identity) {
            torn = true;
            return std::nullopt;
          }
          throw StateError(journal_path_ + " line " + std::to_string(line_no) + " (serial " + std::to_string(serial) +
                           ") is " + key_words(form) + ", and " + path_ + " (serial " + std::to_string(state.serial) +
                           ") " + key_words(key_id) + ": the line is newer than the document, so it is not what a "
                           "killed rekey left behind, and it cannot be read with the document. Nothing was changed. "
                           "Put back the journal that goes with this document, or the document that goes with this "
                           "journal (its .backup?)");
        }
        leftover = true;
        continue;
      }
      try {
        apply_journal_entry(state, line, journal_path_ + " line " + std::to_string(line_no), cipher());
      } catch (const StateError&) {
        // Read without the lock while a whole write replaced the document and a new journal began
        // after it: its lines do not follow the document read. Read again; otherwise it is damage.
        if (file_identity(path_) == identity) throw;
        torn = true;
        return std::nullopt;
      }
    }
    // Bytes after the last newline are an append a crash cut short: never acknowledged, so nothing
    // was sent on the strength of it. The next append writes over them.
  }
  torn = file_identity(path_) != identity;
  seen_ = Seen{state.lineage, state.serial, identity, acknowledged, text->size(), key_id, leftover, state.sealed_whole};
  return state;
}

std::optional<State> FileStateStore::read() {
  auto state = read_current();
  if (!state) return state;
  return checked_unique(std::move(*state), path_);
}

void FileStateStore::check_unchanged(const State& state) {
  const std::string identity = file_identity(path_);
  if (identity == "absent") return;  // the first write
  if (!seen_ || seen_->file_identity != identity || file_size(journal_path_) != seen_->journal_bytes)
    read_current();  // replaced or appended to (or never read) since we last looked: compare with what is there now
  if (seen_ && (seen_->lineage != state.lineage || seen_->serial != state.serial))
    throw StateError(path_ + " changed since it was read (now lineage " + seen_->lineage + " serial " +
                     std::to_string(seen_->serial) + ", expected lineage " + state.lineage + " serial " +
                     std::to_string(state.serial) + "); nothing was overwritten. Run the command again");
}

void FileStateStore::write(State& state) { write_whole(state, false); }

void FileStateStore::write_whole(State& state, bool stored) {
  try {
    write_whole_once(state, stored && !write_failed_);
    write_failed_ = false;
  } catch (...) {
    write_failed_ = true;
    throw;
  }
}

void FileStateStore::write_whole_once(State& state, bool stored) {
  check_unchanged(state);
  // The backup is the state as it stood: the document alone, or with its journal folded in, and
  // sealed as the new document is (a state just encrypted, decrypted, rekeyed or converted from the
  // whole-sealed form keeps no copy in the old form). When everything in memory is stored already
  // (a fold), that is the new document one serial behind: serialized once, for both.
  const std::string key_id = written_key_id(state, cipher());
  const bool folded_in = seen_ && (seen_->journal_bytes > 0 || seen_->key_id != key_id || seen_->sealed_whole);
  std::optional<std::string> backup;
  if (folded_in && !stored) {
    if (auto before = read_current()) {
      before->secrets_key_id = state.secrets_key_id;  // in the form being written (`state decrypt` empties it)
      backup = serialize_state(*before, cipher());
    }
  }
  ++state.serial;
  try {
    const std::string document = serialize_state(state, cipher());
    if (folded_in && stored) backup = with_serial(document, state.serial - 1);
    if (backup) write_file_atomically(path_ + ".backup", *backup, 0600);
    else keep_backup(path_);
    write_file_atomically(path_, document, 0600);
  } catch (...) {
    --state.serial;
    throw;
  }
  // Under the lock: what a write of the document or its backup killed before its rename left beside them.
  remove_atomic_write_leftovers(path_);
  remove_atomic_write_leftovers(path_ + ".backup");
  // Everything the journal held is in the document now (a crash before this unlink leaves lines
  // that reading skips, their serials being the document's or older).
  if (::unlink(journal_path_.c_str()) != 0 && errno != ENOENT)
    throw Error("cannot remove " + journal_path_ + ": " + std::strerror(errno));
  seen_ = Seen{state.lineage, state.serial, file_identity(path_), 0, file_size(path_), key_id};
  state.secrets_key_id = key_id;
  state.sealed_whole = false;
}

void FileStateStore::write_changes(State& state, const std::vector<std::string>& changed) {
  if (file_identity(path_) == "absent") return write(state);  // a journal needs a document to start from
  check_unchanged(state);
  // A document in another form (plain, another key, sealed whole) is rewritten whole first: a journal
  // is in the form of its document.
  if (seen_->key_id != written_key_id(state, cipher()) || seen_->leftover_journal || seen_->sealed_whole)
    return write(state);
  try {
    append_to_journal(journal_entry(state, changed, cipher()) + "\n");
  } catch (...) {
    write_failed_ = true;
    throw;
  }
  ++state.serial;
  seen_->serial = state.serial;
  if (journal_outgrew(seen_->journal_bytes, seen_->document_bytes, journal_floor())) write_whole(state, true);  // all saved
}

void FileStateStore::compact(State& state) {
  if (seen_ && seen_->journal_bytes > 0) write_whole(state, true);
}

void FileStateStore::append_to_journal(const std::string& line) {
  const bool created = seen_->journal_bytes == 0 && file_size(journal_path_) == 0;
  const int fd = open_own_file(journal_path_, O_WRONLY);
  auto fail = [&](const char* what) {
    int err = errno;
    ::close(fd);
    throw Error(std::string("cannot ") + what + " " + journal_path_ + ": " + std::strerror(err));
  };
  // Over a torn tail (an append a crash cut short), never after it.
  if (::fchmod(fd, 0600) != 0 || ::ftruncate(fd, static_cast<off_t>(seen_->journal_bytes)) != 0) fail("prepare");
  size_t done = 0;
  while (done < line.size()) {
    ssize_t n = ::pwrite(fd, line.data() + done, line.size() - done, static_cast<off_t>(seen_->journal_bytes + done));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      // What was written of this line stays unacknowledged: the next append writes over it.
      if (n == 0) errno = EIO;
      fail("append to");
    }
    done += static_cast<size_t>(n);
  }
  if (::fdatasync(fd) != 0) fail("fdatasync");
  if (::close(fd) != 0) throw Error("cannot close " + journal_path_ + ": " + std::strerror(errno));
  if (created) fsync_directory_of(journal_path_);
  seen_->journal_bytes += line.size();
}

namespace {

// What a holder wrote in the lock file; nullopt before it has written it.
std::optional<LockInfo> lock_info_of(const std::string& text) {
  try {
    auto j = parse_json(text);
    return LockInfo{j.value("pid", 0LL), j.value("host", ""), j.value("operation", ""), j.value("since", "")};
  } catch (const nlohmann::json::exception&) {
    return std::nullopt;
  }
}

}  // namespace

std::optional<LockInfo> FileStateStore::lock_holder() {
  auto text = FileLock::holder_now(path_ + ".lock");
  if (!text) return std::nullopt;
  if (auto info = lock_info_of(*text)) return info;
  return LockInfo{};  // held, its details not written yet
}

std::unique_ptr<StateLock> FileStateStore::lock(const std::string& operation, Duration timeout) {
  LockInfo me{static_cast<long long>(::getpid()), hostname(), operation, format_utc(std::chrono::system_clock::now())};
  nlohmann::json info = {{"pid", me.pid}, {"host", me.host}, {"operation", me.operation}, {"since", me.since}};
  SystemClock clock;
  std::string holder_text;
  auto lock = FileLock::acquire(path_ + ".lock", dump_json(info), timeout, clock, holder_text);
  if (lock) return std::make_unique<FileStateLock>(std::move(lock));
  const auto holder = lock_info_of(holder_text);
  throw LockError("the state " + path_ + " is locked by " +
                  holder.value_or(LockInfo{}).str() + lock_refused_advice(timeout));
}

}  // namespace dbform
