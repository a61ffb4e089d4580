#include "engine/namesakes.h"

#include <optional>
#include <set>

#include "state/model.h"
#include "util/parallel.h"

namespace dbform {

ProjectListings list_projects(ApiClient& api, const std::vector<std::string>& projects,
                              const std::map<std::string, ProjectKey>& keys, int parallelism) {
  for (const auto& project : projects)
    if (!keys.count(project)) throw Error("no API key was resolved for project `" + project + "`");
  struct Listed {
    std::optional<ProjectListing> listing;
    std::string error;
  };
  // Each project is a short call per kind: `parallelism` projects at a time.
  auto listed = in_parallel<Listed>(projects.size(), static_cast<size_t>(std::max(1, parallelism)), [&](size_t i) {
    const std::string& key = keys.at(projects[i]).key;
    try {
      ProjectListing listing;
      for (const ResourceType* type : resource_types())
        if (!parent_kind(type->kind)) listing[type->kind] = type->list(api, key, {projects[i], ""});
      return Listed{std::move(listing), ""};
    } catch (const std::exception& e) {
      return Listed{std::nullopt, describe_exception(e)};
    }
  });
  ProjectListings out;
  for (size_t i = 0; i < projects.size(); ++i) {
    if (listed[i].listing) out.listed[projects[i]] = std::move(*listed[i].listing);
    else out.errors[projects[i]] = std::move(listed[i].error);
  }
  return out;
}

Namesakes namesakes_in(const Plan& plan, const ProjectListings& listings) {
  Namesakes found;
  for (const auto& a : plan.actions) {
    if (a.action != Action::Create) continue;
    auto listing = listings.listed.find(a.project_id);
    if (listing == listings.listed.end()) continue;
    std::vector<std::string> ids;
    const ResourceType& type = type_of(a.kind);
    if (auto of_kind = listing->second.find(a.kind); of_kind != listing->second.end())
      for (const auto& s : of_kind->second)
        // A recorded resource deleted outside dbform may still be listed as being deleted: not a namesake.
        if (s.name == a.name && type.is_live(s) && s.id != a.resource_id) ids.push_back(s.id);
    if (!ids.empty()) found[a.address] = std::move(ids);
  }
  return found;
}

NamesakeScan scan_namesakes(ApiClient& api, const Plan& plan, const std::map<std::string, ProjectKey>& keys,
                            int parallelism) {
  std::vector<std::string> projects;
  std::set<std::string> seen;
  for (const auto& a : plan.actions)
    if (a.action == Action::Create && seen.insert(a.project_id).second) projects.push_back(a.project_id);
  ProjectListings listings = list_projects(api, projects, keys, parallelism);
  return {namesakes_in(plan, listings), std::move(listings.errors)};
}

}  // namespace dbform
