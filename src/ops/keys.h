#pragma once
#include <map>
#include <string>
#include <vector>

#include "manifest/model.h"
#include "util/env.h"
#include "util/error.h"

namespace dbform {

// api/project_key.h: the key and where it came from. Only named here, so that what includes this
// header (the command line) sees nothing of the API; whoever reads a key includes it.
struct ProjectKey;

// No key is set for a project that needs one.
class MissingKeyError : public Error {
 public:
  using Error::Error;
};

// project id -> key, for the given projects. A project's key comes from its api_key_env variable,
// else DBFORM_API_KEY_<ID>, else DBFORM_API_KEY. Throws Error naming every project without a key and
// the variables that were tried.
std::map<std::string, ProjectKey> resolve_keys(const Manifest& manifest, const std::vector<std::string>& project_ids,
                                               const EnvLookup& env);

}  // namespace dbform
