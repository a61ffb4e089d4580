#pragma once
#include <string>
#include <vector>

#include "manifest/model.h"
#include "util/diagnostics.h"
#include "util/env.h"

namespace dbform {

// What one manifest file may hold: bytes, values with its aliases expanded, and aliases. Past any,
// the file is refused with one error (the rest of the manifests are still checked).
constexpr size_t kMaxManifestBytes = size_t{16} << 20;
constexpr size_t kMaxManifestNodes = 2'000'000;
constexpr size_t kMaxManifestAliases = 10'000;

// Whether a directory entry is a manifest: its name ends in .yaml or .yml, in any case (a
// `users.YAML` skipped would count as undeclared).
bool is_manifest_file_name(const std::string& path);

// Reads every manifest named by `paths` (files, or directories meaning every *.yaml / *.yml in
// them, sorted), interpolates ${NAME} from `env`'s DBFORM_VAR_NAME, validates strictly and merges
// projects that share an id. Every problem found is added to `diags` (all of them, not just the
// first), none quoting the value of a secret variable (an API key, the state's passphrase); the
// returned manifest is only meaningful when `diags.has_errors()` is false.
Manifest load_manifests(const std::vector<std::string>& paths, const EnvLookup& env, Diagnostics& diags);

// The same, for one in-memory document (`name` is used in locations). For tests and tools.
Manifest load_manifest_text(const std::string& name, const std::string& text, const EnvLookup& env,
                            Diagnostics& diags);

}  // namespace dbform
