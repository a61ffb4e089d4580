#include "engine/import.h"

#include <set>

#include "util/text.h"

namespace dbform {

namespace {

// The settings as observed, as if dbform had set them (the ids of attachments are kept apart).
nlohmann::json as_set(nlohmann::json observed) {
  observed.erase("vpc_id");
  return observed;
}

ResourceRecord blank_record(ResourceKind kind, const std::string& address, const std::string& project_id,
                            const std::string& name, const std::string& now) {
  ResourceRecord r;
  r.address = address;
  r.project_id = project_id;
  r.kind = kind;
  r.name = name;
  r.created_at = now;
  return r;
}

}  // namespace

ResourceRecord imported_record(const Service& s, const std::string& address, const std::string& project_id,
                               const std::string& name, const VpcNames& vpc_names, const std::string& now) {
  ResourceRecord r = blank_record(ResourceKind::Service, address, project_id, name, now);
  record_service(r, s, now);
  r.initial_password.clear();  // never from a read; and a list never carries one
  r.observed = observe(s, nlohmann::json::object(), vpc_names);
  r.settings = as_set(r.observed);
  return r;
}

ResourceRecord imported_record(const Vpc& v, const std::string& address, const std::string& project_id,
                               const std::string& name, const std::string& now) {
  ResourceRecord r = blank_record(ResourceKind::Vpc, address, project_id, name, now);
  record_vpc(r, v, now);
  r.observed = observe(v);
  r.settings = r.observed;
  return r;
}

ResourceRecord import_by_id(ApiClient& api, const std::string& key, const std::string& address, const State& state,
                            const std::string& id, const std::string& now) {
  const auto first = address.find('/'), last = address.rfind('/');
  const std::string project = address.substr(0, first), name = address.substr(last + 1);
  const bool service = address.substr(first + 1, last - first - 1) == "services";
  for (const auto& r : state.resources)
    if (r.id == id && r.project_id == project)
      throw Error("id " + id + " is recorded already, as " + r.address + "; nothing was changed");
  if (service) {
    std::optional<Service> s = api.get_service(key, project, id);
    if (!s || (!s->project_id.empty() && s->project_id != project))
      throw Error("project " + project + " has no service with id " + id + " (GET answered 404); nothing was changed");
    if (s->status == "DELETED" || s->status == "DELETING")
      throw Error("service " + id + " is " + s->status + "; nothing was changed");
    return imported_record(*s, address, project, name, recorded_vpc_names(state, project), now);
  }
  std::optional<Vpc> v = api.get_vpc(key, project, id);
  if (!v) throw Error("project " + project + " has no VPC with id " + id + " (GET answered 404); nothing was changed");
  return imported_record(*v, address, project, name, now);
}

std::vector<std::string> name_attachments(State& state, const std::string& project_id, const std::string& vpc_id,
                                          const std::string& name) {
  std::vector<std::string> changed;
  const nlohmann::json by_id = "id:" + vpc_id;
  for (auto& r : state.resources) {
    if (r.project_id != project_id || r.kind != ResourceKind::Service) continue;
    bool named = false;
    for (nlohmann::json* view : {&r.settings, &r.observed})
      if (view->is_object() && view->value("vpc", nlohmann::json()) == by_id) {
        (*view)["vpc"] = name;
        named = true;
      }
    if (named) changed.push_back(r.address);
  }
  return changed;
}

std::vector<ResourceRecord> unrecorded_resources(const ProjectListing& listing, const std::string& project_id,
                                                 const State& state, const std::string& now) {
  std::set<std::string> recorded_ids;
  for (const auto& r : state.resources)
    if (r.project_id == project_id && !r.id.empty()) recorded_ids.insert(r.id);
  std::vector<std::string> problems;
  std::vector<ResourceRecord> out;
  std::set<std::string> taken;  // addresses given in this import
  auto check_name = [&](ResourceKind kind, const std::string& name, const std::string& id) {
    const std::string address = resource_address(project_id, kind, name);
    if (!is_valid_name(name))
      problems.push_back(std::string(kind_name(kind)) + " " + one_line_excerpt(id, 64) + ": its name `" +
                         one_line_excerpt(name, 130) +
                         "` cannot be a manifest name (letters, digits, `_` and `-`); rename it first");
    else if (state.find(address))
      problems.push_back(std::string(kind_name(kind)) + " " + id + ": " + address +
                         " is recorded already (another id); rename one of them first");
    else if (!taken.insert(address).second)
      problems.push_back("two " + std::string(kind_plural(kind)) + " are named `" + name + "`; rename one first");
    return address;
  };
  VpcNames vpc_names = recorded_vpc_names(state, project_id);
  std::set<std::string> new_vpcs;  // declared by the manifest this import writes
  for (const auto& v : listing.vpcs) {
    if (recorded_ids.count(v.id)) continue;
    out.push_back(imported_record(v, check_name(ResourceKind::Vpc, v.name, v.id), project_id, v.name, now));
    vpc_names[v.id] = v.name;
    new_vpcs.insert(v.name);
  }
  for (const auto& s : listing.services) {
    if (recorded_ids.count(s.service_id) || !is_live_namesake(s)) continue;
    ResourceRecord r = imported_record(s, check_name(ResourceKind::Service, s.name, s.service_id), project_id,
                                       s.name, vpc_names, now);
    const std::string vpc = r.observed.value("vpc", "");
    if (vpc.rfind("id:", 0) == 0)
      problems.push_back("service " + s.service_id + " is attached to VPC " + r.observed.value("vpc_id", "") +
                         ", which project " + project_id + " does not list; try again later");
    else if (!vpc.empty() && !new_vpcs.count(vpc))
      problems.push_back("service " + s.service_id + " (`" + s.name + "`) is attached to VPC `" + vpc +
                         "`, which the state records already: declare the service beside that VPC's declaration, "
                         "then `dbform import " + resource_address(project_id, ResourceKind::Service, s.name) + " " +
                         s.service_id + "`");
    out.push_back(std::move(r));
  }
  if (!problems.empty())
    throw Error("nothing was imported:\n  " + join(problems, "\n  "));
  return out;
}

}  // namespace dbform
