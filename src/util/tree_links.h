#pragma once
// The files a pull request can add (manifests, migrations, policies) are read only inside the
// repository tree they belong to: a symbolic link in one of them may point at any file the runner
// can read (~/.pgpass, ~/.git-credentials, /proc/self/environ, a key file), and what dbform reads
// it may quote back in an error a pull request's comment shows.
#include <filesystem>
#include <string>

namespace dbform {

// The tree that files found through `given` may be read from: the nearest directory holding `.git`
// that encloses `declared_in` (both taken as written, made absolute, not followed through links),
// else `given` itself. Returned with every link in it resolved, so that a checkout under a linked
// path (/home -> /data/home) still holds its own files.
std::filesystem::path repository_tree(const std::filesystem::path& declared_in, const std::filesystem::path& given);

// "" when `path` may be read as part of `tree`: wherever its links lead (a link inside the tree
// to another file of it included), it ends inside `tree`. Otherwise why not, naming the link as
// written in the tree and where it leads, never anything read from what it points to. A link
// whose target does not exist is judged by where it points: inside the tree it is left to the
// reader to say it cannot be read.
std::string outside_tree(const std::filesystem::path& path, const std::filesystem::path& tree);

}  // namespace dbform
