#pragma once
// Which files the manifest paths name, and reading them. A manifest path (a file, or a directory
// of *.yaml files) is the user's; what is in it may be a pull request's: an entry that cannot be
// read is an error naming it (what it declares must never count as undeclared), and an entry that
// is a symbolic link is read only when it leads to a file inside the repository tree.
#include <optional>
#include <string>
#include <unordered_set>
#include <vector>

#include "util/diagnostics.h"

namespace dbform {

// The files one `-f PATH` names: the file itself, or a directory's manifests sorted by name. Every
// problem (an unreadable entry, a link out of the tree, an empty directory) is added to `diags`;
// then nothing of that path is returned.
std::vector<std::string> files_named_by(const std::string& path, Diagnostics& diags);

// Whether a file was already named under this or another name (`-f . -f a.yaml`).
class SeenFiles {
 public:
  bool first_time(const std::string& file);

 private:
  std::unordered_set<std::string> seen_;
};

// A manifest file's whole text, or nullopt with the reason in `diags` (gone since it was listed,
// larger than a manifest may be, unreadable).
std::optional<std::string> read_manifest_file(const std::string& path, Diagnostics& diags);

}  // namespace dbform
