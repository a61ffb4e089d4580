#include "read/namesakes.h"

#include <algorithm>
#include <optional>
#include <set>
#include <unordered_map>
#include <unordered_set>

#include "state/model.h"
#include "util/parallel.h"

namespace dbform {

std::vector<ChildScope> child_scopes(const State& state, const Plan& plan) {
  std::vector<ChildScope> out;
  std::set<std::string> seen;
  auto add = [&](const std::string& project, ResourceKind kind, const std::string& parent) {
    const auto outer = parent_kind(kind);
    if (!outer || kind_form(kind).in_database) return;  // inside a database: no list in the API
    const ResourceRecord* rec = state.find(resource_address(project, *outer, parent));
    if (rec && !rec->id.empty() && !rec->deleted_outside &&
        seen.insert(resource_address(project, kind, "", parent)).second)
      out.push_back({project, kind, parent, rec->id});
  };
  for (const auto& r : state.resources) add(r.project_id, r.kind, r.parent);
  for (const auto& a : plan.actions) add(a.project_id, a.kind, a.parent);
  return out;
}

ProjectListings list_projects(ApiClient& api, const std::vector<std::string>& projects,
                              const std::map<std::string, ProjectKey>& keys, int parallelism,
                              const std::vector<ChildScope>& children, ProjectListings listed_already,
                              const ListedKinds& kinds) {
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
      // Each worker moves out its own project's element: no two touch the same one.
      if (auto failed = listed_already.errors.find(projects[i]); failed != listed_already.errors.end())
        return Listed{std::nullopt, failed->second};
      if (auto before = listed_already.listed.find(projects[i]); before != listed_already.listed.end())
        listing = std::move(before->second);
      else
        for (const ResourceType* type : resource_types())
          if (!parent_kind(type->kind) && (!kinds || kinds(projects[i], type->kind)))
            listing[{type->kind, ""}] = type->list(api, key, {projects[i], ""});
      for (const ChildScope& c : children)
        if (c.project_id == projects[i])
          listing[{c.kind, c.parent}] = type_of(c.kind).list(api, key, {c.project_id, c.parent_id});
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

ListedKinds kinds_in(const Manifest& manifest, const State& state) {
  auto used = std::make_shared<std::set<std::pair<std::string, ResourceKind>>>();
  for (const auto& p : manifest.projects)
    for_each_declaration(p, [&](const Declaration& d) {
      if (!parent_kind(d.kind)) used->emplace(p.id, d.kind);
    });
  for (const auto& rec : state.resources)
    if (!parent_kind(rec.kind)) used->emplace(rec.project_id, rec.kind);
  return [used](const std::string& project_id, ResourceKind kind) { return used->count({project_id, kind}) > 0; };
}

namespace {

// The ids of the live resources listed with `a`'s name, kind and parent that `keep` accepts.
template <typename Keep>
std::vector<std::string> listed_namesakes(const PlannedAction& a, const ProjectListings& listings, Keep keep) {
  std::vector<std::string> ids;
  auto listing = listings.listed.find(a.project_id);
  if (listing == listings.listed.end()) return ids;
  const ResourceType& type = type_of(a.kind);
  if (auto of_kind = listing->second.find({a.kind, a.parent}); of_kind != listing->second.end())
    for (const auto& s : of_kind->second)
      // A recorded resource deleted outside dbform may still be listed as being deleted: not a namesake.
      if (s.name == a.name && type.is_live(s) && s.id != a.resource_id && keep(s)) ids.push_back(s.id);
  return ids;
}

bool renames(const PlannedAction& a) {
  return std::any_of(a.calls.begin(), a.calls.end(), [](const PlannedCall& c) { return call_type(c.call).renames; });
}

// Whether the action claims a name: a create (a replacement's included) or a rename.
bool claims_name(const PlannedAction& a) {
  if (kind_form(a.kind).in_database) return false;  // its names are the catalogs' (read by its step)
  return a.action == Action::Create || a.action == Action::Replace || renames(a);
}

}  // namespace

Namesakes namesakes_in(const Plan& plan, const ProjectListings& listings) {
  Namesakes found;
  for (const auto& a : plan.actions)
    if (claims_name(a))
      if (auto ids = listed_namesakes(a, listings, [](const Shown&) { return true; }); !ids.empty())
        found[a.address] = std::move(ids);
  return found;
}

Namesakes unrecorded_twins(const Plan& plan, const State& state, const ProjectListings& listings) {
  auto key = [](ResourceKind kind, const std::string& project, const std::string& parent, const std::string& name) {
    // NUL-separated: a name the API lists may hold a slash.
    return std::string(kind_name(kind)) + '\0' + project + '\0' + parent + '\0' + name;
  };
  std::unordered_set<std::string> recorded;  // kind, project and id of every record
  for (const auto& r : state.resources)
    if (!r.id.empty()) recorded.insert(key(r.kind, r.project_id, "", r.id));
  // Every listed resource by kind, project, parent and name: a project lists thousands of services,
  // and each declared one looks for its namesakes once.
  std::unordered_map<std::string, std::vector<const Shown*>> by_name;
  for (const auto& [project, listing] : listings.listed)
    for (const auto& [scope, shown] : listing)
      for (const auto& s : shown) by_name[key(scope.first, project, scope.second, s.name)].push_back(&s);
  Namesakes found;
  for (const auto& a : plan.actions) {
    // Only what stays recorded under its declared name: not a conflict (its id field names the
    // namesakes), a create, a resource leaving or being replaced, nor one whose rename is still to
    // come (a namesake of its new name is another resource, which the rename would duplicate).
    const bool stays = a.action == Action::NoOp || a.action == Action::Wait || a.action == Action::Update;
    if (!stays || renames(a)) continue;
    const auto named = by_name.find(key(a.kind, a.project_id, a.parent, a.name));
    if (named == by_name.end()) continue;
    const ResourceRecord* rec = state.find(a.address);
    if (!rec || rec->id.empty()) continue;
    const ResourceType& type = type_of(a.kind);
    std::vector<std::string> ids;  // as listed_namesakes() finds them, from the index
    for (const Shown* s : named->second)
      if (type.is_live(*s) && s->id != a.resource_id && !recorded.count(key(a.kind, a.project_id, "", s->id)))
        ids.push_back(s->id);
    if (!ids.empty()) found[a.address] = std::move(ids);
  }
  return found;
}

NamesakeScan scan_namesakes(ApiClient& api, const Plan& plan, const State& state,
                            const std::map<std::string, ProjectKey>& keys, int parallelism) {
  std::vector<std::string> projects;
  std::set<std::string> seen;
  for (const auto& a : plan.actions)
    if (claims_name(a) && seen.insert(a.project_id).second) projects.push_back(a.project_id);
  std::vector<ChildScope> children;
  for (auto& c : child_scopes(state, plan)) {
    const bool creates = std::any_of(plan.actions.begin(), plan.actions.end(), [&](const PlannedAction& a) {
      return claims_name(a) && a.kind == c.kind && a.project_id == c.project_id && a.parent == c.parent;
    });
    if (creates) children.push_back(std::move(c));
  }
  ProjectListings listings = list_projects(api, projects, keys, parallelism, children);
  return {namesakes_in(plan, listings), std::move(listings.errors)};
}

}  // namespace dbform
