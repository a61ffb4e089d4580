#pragma once
#include <optional>
#include <string>

namespace dbform {

// Replaces `path` with `content` so that a reader (or a crash) sees either the old or the new
// file, never a mix: write PATH.tmp with `mode`, fsync it, rename over PATH, fsync the directory.
// Throws Error naming the path and the system's reason.
void write_file_atomically(const std::string& path, const std::string& content, unsigned mode = 0600);

// The whole file, or nullopt when it does not exist. Throws Error for any other failure.
std::optional<std::string> read_file_if_exists(const std::string& path);

}  // namespace dbform
