#include "engine/namesakes.h"

#include <future>
#include <set>

#include "state/model.h"

namespace dbform {

namespace {

struct ProjectListing {
  std::vector<Service> services;
  std::vector<Vpc> vpcs;
};

}  // namespace

bool is_live_namesake(const Service& s) { return s.status != "DELETING" && s.status != "DELETED"; }

NamesakeScan scan_namesakes(ApiClient& api, const Plan& plan, const std::map<std::string, ProjectKey>& keys,
                            int parallelism) {
  std::vector<std::string> projects;
  std::set<std::string> seen;
  for (const auto& a : plan.actions)
    if (a.action == Action::Create && seen.insert(a.project_id).second) projects.push_back(a.project_id);

  NamesakeScan scan;
  std::map<std::string, ProjectListing> listings;
  // A few projects at a time: each is two short calls.
  for (size_t begin = 0; begin < projects.size(); begin += static_cast<size_t>(std::max(1, parallelism))) {
    const size_t end = std::min(projects.size(), begin + static_cast<size_t>(std::max(1, parallelism)));
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
        listings[projects[i]] = running[i - begin].get();
      } catch (const std::exception& e) {
        scan.errors[projects[i]] = e.what();
      }
    }
  }
  for (const auto& a : plan.actions) {
    if (a.action != Action::Create) continue;
    auto listing = listings.find(a.project_id);
    if (listing == listings.end()) continue;
    std::vector<std::string> ids;
    if (a.kind == ResourceKind::Service) {
      for (const auto& s : listing->second.services)
        if (s.name == a.name && is_live_namesake(s)) ids.push_back(s.service_id);
    } else {
      for (const auto& v : listing->second.vpcs)
        if (v.name == a.name) ids.push_back(v.id);
    }
    if (!ids.empty()) scan.found[a.address] = std::move(ids);
  }
  return scan;
}

}  // namespace dbform
