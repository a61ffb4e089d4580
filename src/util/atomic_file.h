#pragma once
#include <cstdint>
#include <optional>
#include <string>

#include "util/error.h"

namespace dbform {

// Replaces `path` with `content` so that a reader (or a crash) sees either the old or the new
// file, never a mix: write a new temporary file beside it (created exclusively under an
// unpredictable name, its mode set to `mode` and verified), fsync it, rename over PATH, fsync the
// directory. Throws Error naming the path and the system's reason.
void write_file_atomically(const std::string& path, const std::string& content, unsigned mode = 0600);

// Removes the temporary files that write_file_atomically(path, ...) leaves when it is killed before
// its rename. Only for a caller that holds the lock of every writer of `path` (no other write can be
// under way): they may hold content `path` no longer has, e.g. a state in the clear before it was
// encrypted.
void remove_atomic_write_leftovers(const std::string& path);

// Writes `content` to a new file in `dir` named PREFIX + six random characters + SUFFIX, created
// exclusively (never a file or link placed there beforehand), owned by us with mode 0600 (checked),
// and fsynced. Returns its path. For secrets written outside the state (recovery files).
std::string write_new_private_file(const std::string& dir, const std::string& prefix, const std::string& suffix,
                                   const std::string& content);

// fsync of the directory that holds `path`, so that a file created or renamed there stays.
void fsync_directory_of(const std::string& path);

// Whether a symbolic link at the path itself is followed. dbform's own files (journal, backup, lock,
// recovery) are never read or written through one (docs/state.md).
enum class Links { Follow, Refuse };

// A file that holds more than a reader's limit.
class FileTooLarge : public Error {
 public:
  using Error::Error;
};

// The whole file, or nullopt when it does not exist. Only a regular file is read: a FIFO, a device,
// a directory or a socket is refused (Error) before a byte is read, without blocking; so is a
// symbolic link with Links::Refuse. More than `max_bytes` throws FileTooLarge, having read at most
// one chunk past the limit. Throws Error for any other failure, naming the path and the reason.
std::optional<std::string> read_file_if_exists(const std::string& path, Links links = Links::Follow,
                                               size_t max_bytes = SIZE_MAX);

// Opens one of dbform's own files (journal, lock) to write it, creating it with mode 0600: never
// through a symbolic link, never a FIFO or a device (refused without blocking), never a file with
// other names (through a hard link the write would change that other file). `access` is O_WRONLY
// or O_RDWR. Returns the descriptor; throws Error naming the path.
int open_own_file(const std::string& path, int access);

// Error unless `path` is absent or a regular file (not followed through a link with Links::Refuse):
// for the files dbform is about to create or replace.
void require_regular_or_absent(const std::string& path, Links links);

}  // namespace dbform
