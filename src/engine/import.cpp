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

// The record of an existing resource, as the API shows it: id, status, endpoints, and its
// settings as observed (and as set, so nothing counts as drift). No password: the API returns one
// only to its create; `rotate-password` sets a known one.
ResourceRecord imported_record(ResourceKind kind, const Shown& shown, const std::string& address,
                               const std::string& project_id, const VpcNames& vpc_names, const std::string& now) {
  ResourceRecord r;
  r.address = address;
  r.project_id = project_id;
  r.kind = kind;
  r.name = address.substr(address.rfind('/') + 1);
  r.created_at = now;
  record_answer(r, shown, now);
  r.initial_password.clear();  // never from a read; and a list never carries one
  r.observed = type_of(kind).observe(shown, nlohmann::json::object(), vpc_names);
  r.settings = as_set(r.observed);
  return r;
}

}  // namespace

ResourceRecord import_by_id(ApiClient& api, const std::string& key, const std::string& address, const State& state,
                            const std::string& id, const std::string& now) {
  const auto first = address.find('/'), last = address.rfind('/');
  const std::string project = address.substr(0, first), plural = address.substr(first + 1, last - first - 1);
  for (const auto& r : state.resources)
    if (r.id == id && r.project_id == project)
      throw Error("id " + id + " is recorded already, as " + r.address + "; nothing was changed");
  for (const ResourceType* type : resource_types()) {
    if (plural != kind_plural(type->kind)) continue;
    const std::string kind = kind_name(type->kind);
    std::optional<Shown> shown = type->get(api, key, {project, ""}, id);
    const nlohmann::json owner = shown ? shown->raw.value("project_id", nlohmann::json()) : nlohmann::json();
    if (!shown || (owner.is_string() && owner != project))
      throw Error("project " + project + " has no " + kind + " with id " + id + " (GET answered 404); nothing was changed");
    if (!type->is_live(*shown))
      throw Error(kind + " " + id + " is " + shown->status + "; nothing was changed");
    return imported_record(type->kind, *shown, address, project, recorded_vpc_names(state, project), now);
  }
  throw Error("`" + address + "` is not the address of a resource dbform can import");
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
      problems.push_back(std::string(kind_noun(kind)) + " " + one_line_excerpt(id, 64) + ": its name `" +
                         one_line_excerpt(name, 130) +
                         "` cannot be a manifest name (letters, digits, `_` and `-`); rename it first");
    else if (state.find(address))
      problems.push_back(std::string(kind_noun(kind)) + " " + id + ": " + address +
                         " is recorded already (another id); rename one of them first");
    else if (!taken.insert(address).second)
      problems.push_back("two " + std::string(kind_plural(kind)) + " are named `" + name + "`; rename one first");
    return address;
  };
  VpcNames vpc_names = recorded_vpc_names(state, project_id);
  std::set<std::string> new_vpcs;  // declared by the manifest this import writes
  for (const ResourceType* type : resource_types()) {  // VPCs first: what the others are attached to
    auto listed = listing.find({type->kind, ""});
    if (listed == listing.end()) continue;
    for (const Shown& found : listed->second) {
      if (recorded_ids.count(found.id) || !type->is_live(found)) continue;
      const std::string kind = kind_name(type->kind);
      ResourceRecord r = imported_record(type->kind, found, check_name(type->kind, found.name, found.id), project_id,
                                         vpc_names, now);
      if (type->kind == ResourceKind::Vpc) {
        vpc_names[found.id] = found.name;
        new_vpcs.insert(found.name);
      }
      const std::string vpc = r.observed.value("vpc", "");
      if (vpc.rfind("id:", 0) == 0)
        problems.push_back(kind + " " + found.id + " is attached to VPC " + r.observed.value("vpc_id", "") +
                           ", which project " + project_id + " does not list; try again later");
      else if (!vpc.empty() && !new_vpcs.count(vpc))
        problems.push_back(kind + " " + found.id + " (`" + found.name + "`) is attached to VPC `" + vpc +
                           "`, which the state records already: declare it beside that VPC's declaration, then "
                           "`dbform import " + r.address + " " + found.id + "`");
      out.push_back(std::move(r));
    }
  }
  if (!problems.empty())
    throw Error("nothing was imported:\n  " + join(problems, "\n  "));
  return out;
}

}  // namespace dbform
