#pragma once
#include <optional>
#include <string>

namespace dbform {

// Replaces `path` with `content` so that a reader (or a crash) sees either the old or the new
// file, never a mix: write a new temporary file beside it (created exclusively under an
// unpredictable name, its mode set to `mode` and verified), fsync it, rename over PATH, fsync the
// directory. Throws Error naming the path and the system's reason.
void write_file_atomically(const std::string& path, const std::string& content, unsigned mode = 0600);

// Writes `content` to a new file in `dir` named PREFIX + six random characters + SUFFIX, created
// exclusively (never a file or link placed there beforehand), owned by us with mode 0600 (checked),
// and fsynced. Returns its path. For secrets written outside the state (recovery files).
std::string write_new_private_file(const std::string& dir, const std::string& prefix, const std::string& suffix,
                                   const std::string& content);

// fsync of the directory that holds `path`, so that a file created or renamed there stays.
void fsync_directory_of(const std::string& path);

// The whole file, or nullopt when it does not exist. Throws Error for any other failure.
std::optional<std::string> read_file_if_exists(const std::string& path);

}  // namespace dbform
