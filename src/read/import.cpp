#include "read/import.h"

#include <set>

#include "manifest/model.h"
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
ResourceRecord imported_record(const AddressParts& at, const Shown& shown, const VpcNames& vpc_names,
                               const std::string& now) {
  ResourceRecord r;
  r.address = resource_address(at.project_id, at.kind, at.name, at.parent);
  r.project_id = at.project_id;
  r.kind = at.kind;
  r.name = at.name;
  r.parent = at.parent;
  r.created_at = now;
  record_answer(r, shown, now);
  r.initial_password.clear();  // never from a read; and a list never carries one
  r.observed = type_of(at.kind).observe(shown, nlohmann::json::object(), vpc_names);
  r.settings = as_set(r.observed);
  return r;
}

}  // namespace

ResourceRecord import_by_id(ApiClient& api, const std::string& key, const std::string& address, const State& state,
                            const std::string& id, const std::string& now) {
  const std::optional<AddressParts> at = parse_address(address);
  if (!at) throw Error("`" + address + "` is not the address of a resource dbform can import");
  for (const auto& r : state.resources)
    if (r.id == id && r.project_id == at->project_id)
      throw Error("id " + id + " is recorded already, as " + r.address + "; nothing was changed");
  const ResourceType& type = type_of(at->kind);
  const std::string kind = kind_noun(at->kind);
  const Scope scope = scope_of(state, at->project_id, at->kind, at->parent);
  if (const auto outer = parent_kind(at->kind); outer && scope.parent_id.empty())
    throw Error("the state records no " + std::string(kind_noun(*outer)) + " " +
                resource_address(at->project_id, *outer, at->parent) + " with an id, and a " + kind +
                " is read through it; nothing was changed. Import it first: `dbform import " +
                resource_address(at->project_id, *outer, at->parent) + " ID`");
  std::optional<Shown> shown = type.get(api, key, scope, id);
  const nlohmann::json owner = shown ? shown->raw.value("project_id", nlohmann::json()) : nlohmann::json();
  const std::string where = scope.parent_id.empty() ? "project " + at->project_id
                                                    : resource_address(at->project_id, *parent_kind(at->kind), at->parent);
  if (!shown || (owner.is_string() && owner != at->project_id))
    throw Error(where + " has no " + kind + " with id " + id + " (GET answered 404); nothing was changed");
  if (!type.is_live(*shown)) throw Error(kind + " " + id + " is " + shown->status + "; nothing was changed");
  // A nested resource has no rename call: the name it is recorded under must be its own (a
  // peering's is its peer VPC's id).
  if (parent_kind(at->kind) && shown->name != at->name)
    throw Error(kind + " " + id + " of " + where + " is `" + one_line_excerpt(shown->name, 130) + "`, not `" +
                at->name + "`; nothing was changed. Declare and import it as " +
                resource_address(at->project_id, at->kind, shown->name, at->parent));
  return imported_record(*at, *shown, recorded_vpc_names(state, at->project_id), now);
}

Imports read_imports(ApiClient& api, const Manifest& manifest, const State& state,
                     const std::map<std::string, ProjectKey>& keys, const std::string& now) {
  Imports found;
  std::optional<State> with;  // the state and what is imported so far (a set's service, a peering's VPC), once needed
  for (const auto& project : manifest.projects) {
    auto key = keys.find(project.id);
    if (key == keys.end()) continue;
    auto read = [&](ResourceKind kind, const std::string& name, const std::string& parent,
                    const std::optional<std::string>& id) {
      const std::string address = resource_address(project.id, kind, name, parent);
      if (!id || state.find(address)) return;  // recorded: the line is history
      ImportFinding f;
      try {
        if (!with) with = state;
        ResourceRecord rec = import_by_id(api, key->second.key, address, *with, *id, now);
        const nlohmann::json shown_name = rec.last_response.value("name", nlohmann::json());
        if (shown_name.is_string() && shown_name != name)
          throw Error(std::string(kind_noun(kind)) + " " + *id + " is named `" +
                      one_line_excerpt(shown_name.get<std::string>(), 130) + "`, not `" + name +
                      "`: declare it under its own name (a rename can follow once it is recorded)");
        with->upsert(rec);
        f.record = std::move(rec);
      } catch (const ApiError&) {
        throw;
      } catch (const TransportError&) {
        throw;
      } catch (const Error& e) {
        std::string why = e.what();  // a plan's reason: the "nothing was changed" of `dbform import` goes
        for (size_t at; (at = why.find("; nothing was changed")) != std::string::npos;) why.erase(at, 21);
        f.problem = "`import_id: " + *id + "` cannot be imported: " + why;
      }
      found[address] = std::move(f);
    };
    // Each declaration before what lives in it: a set's service, a peering's VPC is imported first.
    for_each_declaration(project, [&](const Declaration& d) { read(d.kind, d.name, d.parent, d.import_id); });
  }
  return found;
}

void list_children(ApiClient& api, const std::string& key, const std::string& project_id, ProjectListing& listing) {
  for (const ResourceType* type : resource_types()) {
    const auto outer = parent_kind(type->kind);
    if (!outer) continue;
    const ResourceType& parent_type = type_of(*outer);
    auto parents = listing.find({*outer, ""});
    if (parents == listing.end()) continue;
    for (const Shown& parent : parents->second) {
      if (!parent_type.is_live(parent)) continue;
      std::vector<Shown> children = type->list(api, key, {project_id, parent.id});
      auto& listed = listing[{type->kind, parent.name}];
      listed.insert(listed.end(), std::make_move_iterator(children.begin()), std::make_move_iterator(children.end()));
    }
  }
}

std::vector<std::string> name_attachments(State& state, const ResourceRecord& imported) {
  std::vector<std::string> changed;
  const nlohmann::json by_id = "id:" + imported.id;
  for (auto& r : state.resources) {
    const auto& refers = kind_form(r.kind).refers;
    if (r.project_id != imported.project_id || !refers || refers->kind != imported.kind) continue;
    bool named = false;
    for (nlohmann::json* view : {&r.settings, &r.observed})
      if (view->is_object() && view->value(refers->field, nlohmann::json()) == by_id) {
        (*view)[refers->field] = imported.name;
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
  auto check_name = [&](ResourceKind kind, const std::string& name, const std::string& id, const std::string& parent) {
    const std::string address = resource_address(project_id, kind, name, parent);
    if (!is_valid_name(name))
      problems.push_back(std::string(kind_noun(kind)) + " " + one_line_excerpt(id, 64) + ": its name `" +
                         one_line_excerpt(name, 130) +
                         "` cannot be a manifest name (letters, digits, `_` and `-`); rename it first");
    else if (state.find(address))
      problems.push_back(std::string(kind_noun(kind)) + " " + id + ": " + address +
                         " is recorded already (another id); rename one of them first");
    else if (!taken.insert(address).second)
      problems.push_back("two " + std::string(kind_noun(kind)) + "s are named `" + name + "`" +
                         (parent.empty() ? "" : " in " + parent) + "; rename one first");
  };
  VpcNames vpc_names = recorded_vpc_names(state, project_id);
  std::set<std::string> new_vpcs;  // declared by the manifest this import writes
  for (const ResourceType* type : resource_types()) {  // VPCs first: what the others are attached to
    for (const auto& [of, listed] : listing) {
      if (of.first != type->kind) continue;
      const std::string& parent = of.second;
      const std::string kind = kind_noun(type->kind);
      for (const Shown& found : listed) {
        if (recorded_ids.count(found.id) || !type->is_live(found)) continue;
        check_name(type->kind, found.name, found.id, parent);
        ResourceRecord r = imported_record({project_id, type->kind, found.name, parent}, found, vpc_names, now);
        if (is_referred_to(type->kind)) {  // another kind's setting names it (a service's `vpc`)
          vpc_names[found.id] = found.name;
          new_vpcs.insert(found.name);
        }
        const std::string vpc = r.observed.value("vpc", "");
        const std::string declare = ": declare it under that one's declaration, then `dbform import " + r.address +
                                    " " + found.id + "`";
        if (vpc.rfind("id:", 0) == 0)
          problems.push_back(kind + " " + found.id + " is attached to VPC " + r.observed.value("vpc_id", "") +
                             ", which project " + project_id + " does not list; try again later");
        else if (!vpc.empty() && !new_vpcs.count(vpc))
          problems.push_back(kind + " " + found.id + " (`" + found.name + "`) is attached to VPC `" + vpc +
                             "`, which the state records already" + declare);
        else if (const auto outer = parent_kind(type->kind);
                 outer && state.find(resource_address(project_id, *outer, parent)))
          problems.push_back(kind + " " + found.id + " (`" + found.name + "`) is in " +
                             resource_address(project_id, *outer, parent) + ", which the state records already" +
                             declare);
        out.push_back(std::move(r));
      }
    }
  }
  if (!problems.empty())
    throw Error("nothing was imported:\n  " + join(problems, "\n  "));
  return out;
}

std::vector<FoundResource> found_resources(const std::vector<ResourceRecord>& records) {
  std::vector<FoundResource> found;
  found.reserve(records.size());
  for (const auto& r : records) found.push_back({r.kind, r.parent, r.name, r.id, r.settings});
  return found;
}

}  // namespace dbform
