#include "engine/namesakes.h"

#include <future>
#include <set>

#include "state/model.h"

namespace dbform {

bool is_live_namesake(const Service& s) { return s.status != "DELETING" && s.status != "DELETED"; }

ProjectListings list_projects(ApiClient& api, const std::vector<std::string>& projects,
                              const std::map<std::string, ProjectKey>& keys, int parallelism) {
  ProjectListings out;
  const size_t step = static_cast<size_t>(std::max(1, parallelism));
  // A few projects at a time: each is two short calls.
  for (size_t begin = 0; begin < projects.size(); begin += step) {
    const size_t end = std::min(projects.size(), begin + step);
    std::vector<std::future<ProjectListing>> running;
    for (size_t i = begin; i < end; ++i) {
      auto key = keys.find(projects[i]);
      if (key == keys.end()) throw Error("no API key was resolved for project `" + projects[i] + "`");
      running.push_back(std::async(std::launch::async, [&api, project = projects[i], k = key->second.key] {
        return ProjectListing{api.list_services(k, project), api.list_vpcs(k, project)};
      }));
    }
    for (size_t i = begin; i < end; ++i) {
      try {
        out.listed[projects[i]] = running[i - begin].get();
      } catch (const std::exception& e) {
        out.errors[projects[i]] = e.what();
      }
    }
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
    if (a.kind == ResourceKind::Service) {
      for (const auto& s : listing->second.services)
        // A recorded service deleted outside dbform may still be listed as DELETING: not a namesake.
        if (s.name == a.name && is_live_namesake(s) && s.service_id != a.resource_id) ids.push_back(s.service_id);
    } else {
      for (const auto& v : listing->second.vpcs)
        if (v.name == a.name && v.id != a.resource_id) ids.push_back(v.id);
    }
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
