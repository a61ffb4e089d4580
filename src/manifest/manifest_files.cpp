#include "manifest/manifest_files.h"

#include <algorithm>
#include <filesystem>

#include "manifest/loader.h"
#include "util/atomic_file.h"
#include "util/text.h"
#include "util/tree_links.h"

namespace fs = std::filesystem;

namespace dbform {

namespace {

const std::string kCannotRead = "cannot read this manifest: ";
const std::string kReplaceLink =
    "nothing was read from it; a pull request's manifests are read from inside its repository: replace the link "
    "with the file it stands for";

// Why a manifest path cannot be read as a file ("" when it is a regular file, or a link to one).
// A declaration that cannot be read must never count as "no longer declared":
// every command stops, naming it, and nothing is planned as deleted (docs/safety.md).
std::string unreadable_reason(const std::string& path) {
  std::error_code ec, link_ec;
  const auto status = fs::status(path, ec);
  if (fs::is_regular_file(status)) return "";
  if (fs::is_symlink(fs::symlink_status(path, link_ec))) {
    return "a symbolic link to " + scrub(fs::read_symlink(path, link_ec).string()) + ", which cannot be read (" +
           (ec ? ec.message() : std::string("not a regular file")) + ")";
  }
  if (ec && ec != std::errc::no_such_file_or_directory) return ec.message();  // e.g. a directory it may not enter
  if (!fs::exists(status)) return "no such file or directory";
  if (fs::is_directory(status)) return "a directory, not a manifest file";
  return "not a regular file (a pipe, a device or a socket)";
}

// Every *.yaml / *.yml directly in `dir` (not in subdirectories), sorted by name. An entry of that
// name that cannot be read (a dangling link, a link out of the tree, a pipe, a directory) is an
// error naming it: what it declares would otherwise be planned as deleted.
std::vector<std::string> yaml_files_in(const std::string& dir, Diagnostics& diags) {
  std::vector<std::string> files;
  std::vector<std::pair<std::string, std::string>> unreadable;
  const fs::path tree = repository_tree(dir, dir);
  if (std::string outside = outside_tree(dir, tree); !outside.empty()) {
    diags.error({dir}, "", "cannot read this manifest directory: " + outside,
                "the manifests of a repository are read from inside it; replace the link with the directory");
    return {};
  }
  std::error_code ec;
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    if (!is_manifest_file_name(it->path().string())) continue;
    const std::string file = (fs::path(dir) / it->path().filename()).lexically_normal().string();
    if (std::string outside = outside_tree(file, tree); !outside.empty()) diags.error({file}, "", kCannotRead + outside, kReplaceLink);
    else if (std::string why = unreadable_reason(file); !why.empty()) unreadable.emplace_back(file, std::move(why));
    else files.push_back(file);
  }
  if (ec) {
    diags.error({dir}, "", "cannot list directory: " + ec.message());
    return {};
  }
  std::sort(files.begin(), files.end());
  std::sort(unreadable.begin(), unreadable.end());
  for (const auto& [file, why] : unreadable)
    diags.error({file}, "", "cannot read this manifest: " + why,
                "restore it or remove it from " + dir + "; what it declares must not count as undeclared");
  if (!unreadable.empty() || diags.has_errors()) return {};
  if (files.empty())
    diags.error({dir}, "", "no *.yaml or *.yml files in this directory",
                "pass a manifest file with -f FILE, or the directory that holds the manifests");
  return files;
}

}  // namespace

std::vector<std::string> files_named_by(const std::string& path, Diagnostics& diags) {
  std::error_code ec;
  if (fs::is_directory(fs::status(path, ec))) return yaml_files_in(path, diags);
  const fs::path parent = fs::path(path).parent_path().empty() ? fs::path(".") : fs::path(path).parent_path();
  if (std::string outside = outside_tree(path, repository_tree(parent, parent)); !outside.empty()) {
    diags.error({path}, "", kCannotRead + outside, kReplaceLink);
    return {};
  }
  if (std::string why = unreadable_reason(path); !why.empty()) {
    diags.error({path}, "", "cannot read this manifest: " + why,
                "check the -f argument: a manifest is a file or a directory of *.yaml files");
    return {};
  }
  return {fs::path(path).lexically_normal().string()};
}

bool SeenFiles::first_time(const std::string& file) {
  std::error_code ec;
  auto canonical = fs::weakly_canonical(file, ec);
  return seen_.insert(ec ? file : canonical.string()).second;
}

// Read in chunks, so that a small file costs what it holds; at most one chunk past the cap is
// read, whatever the file (or what replaced it since it was listed) holds.
std::optional<std::string> read_manifest_file(const std::string& path, Diagnostics& diags) {
  try {
    if (auto contents = read_file_if_exists(path, Links::Follow, kMaxManifestBytes)) return contents;
    diags.error({path}, "", "cannot read this manifest: it is gone (removed while dbform read the manifests)");
  } catch (const FileTooLarge&) {
    diags.error({path}, "", "the file is larger than " + std::to_string(kMaxManifestBytes >> 20) +
                                " MiB; a manifest file may hold at most that",
                "split the projects over several files in a directory");
  } catch (const Error& e) {
    diags.error({path}, "", std::string("cannot read this manifest: ") + e.what());
  }
  return std::nullopt;
}

bool is_manifest_file_name(const std::string& path) {
  const std::string ext = lower(fs::path(path).extension().string());
  return ext == ".yaml" || ext == ".yml";
}

}  // namespace dbform
