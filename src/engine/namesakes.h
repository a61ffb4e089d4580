#pragma once
// The name guard (never twice): before anything is created in a project, its services and VPCs
// are listed, and a declared resource the state does not record is not created while one of its
// name exists (a wrong --state path, a lost state or a `state rm` would otherwise make a second).
#include <map>
#include <string>
#include <vector>

#include "api/client.h"
#include "engine/kinds.h"
#include "engine/keys.h"
#include "plan/model.h"

namespace dbform {

// What one project holds, as listed (one call per kind): kind -> its resources.
using ProjectListing = std::map<ResourceKind, std::vector<Shown>>;

struct ProjectListings {
  std::map<std::string, ProjectListing> listed;  // project -> what it holds
  std::map<std::string, std::string> errors;     // project -> why it could not be listed
};

// Lists each project's services and VPCs, several projects at once (up to `parallelism`). Throws
// when a project has no key; a project that cannot be listed is named in `errors`.
ProjectListings list_projects(ApiClient& api, const std::vector<std::string>& projects,
                              const std::map<std::string, ProjectKey>& keys, int parallelism);

struct NamesakeScan {
  Namesakes found;                            // address of a planned create -> ids of its namesakes
  std::map<std::string, std::string> errors;  // project -> why it could not be listed
};

// One list call per project and kind, for the projects of `plan` that have creates.
NamesakeScan scan_namesakes(ApiClient& api, const Plan& plan, const std::map<std::string, ProjectKey>& keys,
                            int parallelism);
// The namesakes of the plan's creates among what was listed.
Namesakes namesakes_in(const Plan& plan, const ProjectListings& listings);

}  // namespace dbform
