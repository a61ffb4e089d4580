#pragma once
// Reads rule files as the manifests are read: strictly, every problem located (file:line:col), an
// unknown key, kind, field or action an error with the closest known one, never a rule that
// silently passes.
#include <string>
#include <vector>

#include "policy/rules.h"
#include "util/diagnostics.h"

namespace dbform {

// Every file named, in order; rule ids unique across them. Problems go to `diags`; the set is only
// meaningful when it has no error.
PolicySet load_policy_files(const std::vector<std::string>& paths, Diagnostics& diags);

// One in-memory rule file (`name` is used in locations). For tests and tools.
PolicySet load_policy_text(const std::string& name, const std::string& text, Diagnostics& diags);

// The files DBFORM_POLICY names: a ':'-separated list, empty entries skipped.
std::vector<std::string> split_policy_path(const std::string& value);

}  // namespace dbform
