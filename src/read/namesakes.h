#pragma once
// The name guard (never twice): before anything is created in a project, its services and VPCs
// are listed, and a declared resource the state does not record is not created while one of its
// name exists (a wrong --state path, a lost state or a `state rm` would otherwise make a second).
#include <functional>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "api/client.h"
#include "api/project_key.h"
#include "manifest/model.h"
#include "plan/kinds.h"
#include "plan/model.h"
#include "state/model.h"

namespace dbform {

// A parent whose resources of one kind are listed (a service's read replica sets, a VPC's
// peerings): one call per parent, only for those recorded with an id that the state or the plan
// has such resources in.
struct ChildScope {
  std::string project_id;
  ResourceKind kind;
  std::string parent;     // its name
  std::string parent_id;  // its recorded id
};

// The parents the state's records and the plan's actions of the kinds in another are in.
std::vector<ChildScope> child_scopes(const State& state, const Plan& plan);

// What one project holds, as listed (one call per kind, and per parent for the kinds in another):
// (kind, parent name or "") -> its resources.
using ProjectListing = std::map<std::pair<ResourceKind, std::string>, std::vector<Shown>>;

struct ProjectListings {
  std::map<std::string, ProjectListing> listed;  // project -> what it holds
  std::map<std::string, std::string> errors;     // project -> why it could not be listed
};

// Lists each project's services and VPCs, and what `children` names in it, several projects at
// once (up to `parallelism`). Throws when a project has no key; a project that cannot be listed is
// named in `errors`. A project `listed` holds already is not listed again: only its children are
// (and one it failed to list stays failed).
// `kinds` (unset: every kind) says which kinds of a project are listed: those a refresh has a use
// for, declared or recorded there.
using ListedKinds = std::function<bool(const std::string& project_id, ResourceKind kind)>;
ProjectListings list_projects(ApiClient& api, const std::vector<std::string>& projects,
                              const std::map<std::string, ProjectKey>& keys, int parallelism,
                              const std::vector<ChildScope>& children = {},
                              ProjectListings listed = {}, const ListedKinds& kinds = {});

// The kinds of each project the manifests declare or the state records (a list of the others
// would find nothing to refresh and no name to guard).
ListedKinds kinds_in(const Manifest& manifest, const State& state);

struct NamesakeScan {
  Namesakes found;                            // address of a planned create -> ids of its namesakes
  std::map<std::string, std::string> errors;  // project -> why it could not be listed
};

// One list call per project and kind (and per parent of a planned create in one), for the projects
// of `plan` that claim a name: creates (replacements included) and renames.
NamesakeScan scan_namesakes(ApiClient& api, const Plan& plan, const State& state,
                            const std::map<std::string, ProjectKey>& keys, int parallelism);
// The namesakes of the plan's creates and renames (of the name they take) among what was listed.
Namesakes namesakes_in(const Plan& plan, const ProjectListings& listings);
// Declared resources recorded with an id beside which the lists show live ones of the same name
// and kind that no record holds: duplicates (a create sent again after a settle window shorter
// than the list's lag, or another state's), which nothing else would ever show.
Namesakes unrecorded_twins(const Plan& plan, const State& state, const ProjectListings& listings);

}  // namespace dbform
