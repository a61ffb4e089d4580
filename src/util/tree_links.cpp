#include "util/tree_links.h"

#include "util/text.h"

namespace fs = std::filesystem;

namespace dbform {

namespace {

fs::path absolute_as_written(const fs::path& p) {
  std::error_code ec;
  fs::path abs = fs::absolute(p, ec);
  return (ec ? p : abs).lexically_normal();
}

fs::path resolved(const fs::path& p) {
  std::error_code ec;
  fs::path r = fs::weakly_canonical(p, ec);
  return ec ? absolute_as_written(p) : r;
}

bool lies_in(const fs::path& inner, const fs::path& tree) {
  auto i = inner.begin();
  for (auto t = tree.begin(); t != tree.end(); ++t, ++i) {
    if (t->empty() && std::next(t) == tree.end()) return true;  // a tree written with a trailing slash
    if (i == inner.end() || *i != *t) return false;
  }
  return true;
}

// The first link on the way from the tree to `path` (the entry itself, or a directory above it),
// as written, for the message: "m/b.yaml", or "m" when the directory itself was replaced; empty
// when there is none (a path that names a place outside the tree as it is written).
fs::path first_link(const fs::path& path) {
  fs::path walked;
  for (const auto& part : absolute_as_written(path)) {
    walked /= part;
    std::error_code ec;
    if (fs::is_symlink(fs::symlink_status(walked, ec))) return walked;
  }
  return {};
}

}  // namespace

fs::path repository_tree(const fs::path& declared_in, const fs::path& given) {
  std::error_code ec;
  for (fs::path dir = absolute_as_written(declared_in);; dir = dir.parent_path()) {
    if (fs::exists(fs::symlink_status(dir / ".git", ec))) return resolved(dir);
    if (dir == dir.root_path() || dir.parent_path() == dir || dir.empty()) break;
  }
  return resolved(given);
}

std::string outside_tree(const fs::path& path, const fs::path& tree) {
  const fs::path target = resolved(path);
  // The repository's own .git is not its work tree: a checkout keeps the token it fetched with
  // in .git/config.
  const bool in_git = lies_in(target, tree / ".git");
  if (lies_in(target, tree) && !in_git) return "";
  const std::string outside = in_git ? "into the repository's .git directory " + scrub((tree / ".git").string())
                                     : "outside the repository tree " + scrub(tree.string());
  const fs::path link = first_link(path);
  if (link.empty())
    return "it lies " + std::string(in_git ? "in the repository's .git directory " + scrub((tree / ".git").string())
                                           : "outside the repository tree " + scrub(tree.string())) +
           ": only files of the work tree are read";
  std::error_code ec;
  const fs::path written = fs::read_symlink(link, ec);
  std::string what = "a symbolic link";
  if (link != absolute_as_written(path)) what = "reached through the symbolic link " + scrub(link.string());
  return what + " to " + scrub((ec ? target : written).string()) + ", which leads " + outside +
         ": a link is followed only to a file inside it";
}

}  // namespace dbform
