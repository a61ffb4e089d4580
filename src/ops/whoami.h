#pragma once
// `whoami` as an operation of the core: each project's key resolved exactly as plan and apply
// resolve it (ops/keys.h) and, unless offline, asked whom it belongs to (GET /auth/info). Nothing
// is printed here: the command line prints one line per verdict.
#include <string>

#include "manifest/model.h"
#include "util/env.h"

namespace dbform {

class ApiClient;  // api/client.h: the .cpp calls it

struct KeyVerdict {
  enum class Is {
    Found,         // a key was resolved (offline: not asked)
    Ok,            // the API says it is this project's
    NoKey,         // no variable gives one (`why` names those tried)
    WrongProject,  // it belongs to project `owner_id`
    NotChecked,    // the API gave no answer (the network, a refused certificate): nothing known of the key
    Refused,       // the API refused it (`why`)
  };
  Is is = Is::Found;
  std::string project;
  std::string variable;  // where the key came from (never the key itself)
  // Ok, WrongProject, and the default key's: "key `NAME` from VARIABLE (public key P), issued by
  // USER <EMAIL> on DATE", as the API describes it.
  std::string key;
  std::string owner_id, owner_name;  // the project the API says the key belongs to
  std::string why;                   // NoKey, NotChecked, Refused: the error's message
};

// The key `project` would use, asking nothing: Found (with `variable`) or NoKey.
KeyVerdict resolve_project_key(const Manifest& manifest, const std::string& project, const EnvLookup& env);

// The key `project` would use, and whom the API says it belongs to.
KeyVerdict check_project_key(ApiClient& api, const Manifest& manifest, const std::string& project,
                             const EnvLookup& env);

// DBFORM_API_KEY's owner, for where no manifest declares a project: Ok with `owner_id`. Throws
// UsageError when it is not set, Error when the API refuses it.
KeyVerdict check_default_key(ApiClient& api, const EnvLookup& env);

}  // namespace dbform
