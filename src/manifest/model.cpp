#include "manifest/model.h"

#include <algorithm>
#include <cctype>
#include <stdexcept>

namespace dbform {

bool is_policy_rule_id(std::string_view s) {
  auto lower_or_digit = [](char c) { return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9'); };
  if (s.empty() || s.size() > 64 || !lower_or_digit(s[0])) return false;
  return std::all_of(s.begin(), s.end(), [&](char c) { return lower_or_digit(c) || c == '-'; });
}

bool is_valid_name(std::string_view s) {
  auto alnum = [](char c) { return std::isalnum(static_cast<unsigned char>(c)) != 0; };
  if (s.empty() || s.size() > kMaxNameLength || !alnum(s[0])) return false;
  return std::all_of(s.begin(), s.end(), [&](char c) { return alnum(c) || c == '-' || c == '_'; });
}

const std::vector<KindForm>& kind_forms() {
  // The order of the walk and of a generated manifest: VPCs (which services name) first. A new kind
  // is its file (kind_NAME.cpp) and a line here.
  static const std::vector<KindForm> all = {vpc_form(),  service_form(),   replica_set_form(),
                                            peering_form(), role_form(),   schema_form(),
                                            extension_form(), grant_form()};
  return all;
}

const KindForm& kind_form(ResourceKind k) {
  for (const KindForm& form : kind_forms())
    if (form.kind == k) return form;
  throw std::logic_error("a resource kind without a row in kind_forms()");
}

const char* kind_name(ResourceKind k) { return kind_form(k).name; }
const char* kind_plural(ResourceKind k) { return kind_form(k).plural; }
const char* kind_noun(ResourceKind k) { return kind_form(k).noun; }
std::optional<ResourceKind> parent_kind(ResourceKind k) { return kind_form(k).parent; }

bool is_referred_to(ResourceKind k) {
  return std::any_of(kind_forms().begin(), kind_forms().end(),
                     [&](const KindForm& form) { return form.refers && form.refers->kind == k; });
}

std::optional<ResourceKind> kind_named(std::string_view name) {
  for (const auto& k : kind_forms())
    if (name == k.name) return k.kind;
  return std::nullopt;
}

namespace {

const std::string kNoParent;
const std::optional<std::string> kNotRenamed, kNotImported;
const std::vector<PolicyWaiver> kNoWaivers;

// A declaration as the walk shows it: `parent`, the name of what it lives in. A kind without a
// field (a schema has no deletion_protection, no object of a database an import_id) shows none.
template <typename T>
Declaration declared(ResourceKind kind, const T& d, const std::string& name, const std::string& parent) {
  const std::optional<std::string>* renamed = &kNotRenamed;
  const std::optional<std::string>* import_id = &kNotImported;
  const std::vector<PolicyWaiver>* waivers = &kNoWaivers;
  bool protection = false;
  if constexpr (requires { d.renamed_from; }) renamed = &d.renamed_from;
  if constexpr (requires { d.import_id; }) import_id = &d.import_id;
  if constexpr (requires { d.policy_waivers; }) waivers = &d.policy_waivers;
  if constexpr (requires { d.deletion_protection; }) protection = d.deletion_protection;
  return {kind, parent, name, protection, *import_id, *renamed, *waivers, d.location, &d};
}

Declaration declaration_of(const DesiredVpc& v) { return declared(ResourceKind::Vpc, v, v.name, kNoParent); }
Declaration declaration_of(const DesiredPeering& p, const DesiredVpc& in) {
  return declared(ResourceKind::Peering, p, p.peer_vpc_id, in.name);
}
Declaration declaration_of(const DesiredService& s) { return declared(ResourceKind::Service, s, s.name, kNoParent); }
Declaration declaration_of(const DesiredReplicaSet& r, const DesiredService& in) {
  return declared(ResourceKind::ReplicaSet, r, r.name, in.name);
}
Declaration declaration_of(const DesiredRole& r, const DesiredService& in) {
  return declared(ResourceKind::Role, r, r.name, in.name);
}
Declaration declaration_of(const DesiredSchema& x, const DesiredService& in) {
  return declared(ResourceKind::Schema, x, x.name, in.name);
}
Declaration declaration_of(const DesiredExtension& x, const DesiredService& in) {
  return declared(ResourceKind::Extension, x, x.name, in.name);
}
// A grant's name is its (role, object): ROLE/SCHEMA, ROLE/SCHEMA/tables, ROLE/SCHEMA/tables/NAME.
// The walk keeps it while the view is used: the name lives beside the grant.
Declaration declaration_of(const DesiredGrant& g, const DesiredService& in) {
  return declared(ResourceKind::Grant, g, g.address_name, in.name);
}

// The database's declarations of `s`, in the order they are made.
template <typename Visit>
void for_each_object(const DesiredService& s, Visit visit) {
  for (const auto& r : s.roles) visit(declaration_of(r, s));
  for (const auto& x : s.schemas) visit(declaration_of(x, s));
  for (const auto& x : s.extensions) visit(declaration_of(x, s));
  for (const auto& g : s.grants) visit(declaration_of(g, s));
}

// Moves the items of `from` that `keep` accepts to the end of `into`, each after `children(item)`
// has dropped what lives in it that `keep` refuses.
template <typename T, typename Children>
void move_kept(std::vector<T>& from, std::vector<T>& into, const std::function<bool(const Declaration&)>& keep,
               Children children) {
  for (auto& item : from) {
    if (!keep(declaration_of(item))) continue;
    children(item);
    into.push_back(std::move(item));
  }
}

}  // namespace

nlohmann::json Declaration::settings() const {
  return std::visit([](const auto* d) { return settings_json(*d); }, declared);
}

void for_each_declaration(const DesiredProject& project, const DeclarationVisitor& visit) {
  for (const auto& v : project.vpcs) {
    visit(declaration_of(v));
    for (const auto& p : v.peerings) visit(declaration_of(p, v));
  }
  for (const auto& s : project.services) {
    visit(declaration_of(s));
    for (const auto& r : s.read_replicas) visit(declaration_of(r, s));
    for_each_object(s, visit);
  }
}

bool declares_any(const DesiredProject& project) {
  bool any = false;
  for_each_declaration(project, [&](const Declaration&) { any = true; });
  return any;
}

void move_declarations(DesiredProject& from, DesiredProject& into, const std::function<bool(const Declaration&)>& keep) {
  move_kept(from.vpcs, into.vpcs, keep, [&](DesiredVpc& v) {
    std::erase_if(v.peerings, [&](const DesiredPeering& p) { return !keep(declaration_of(p, v)); });
  });
  move_kept(from.services, into.services, keep, [&](DesiredService& s) {
    std::erase_if(s.read_replicas, [&](const DesiredReplicaSet& r) { return !keep(declaration_of(r, s)); });
    std::erase_if(s.roles, [&](const DesiredRole& r) { return !keep(declaration_of(r, s)); });
    std::erase_if(s.schemas, [&](const DesiredSchema& x) { return !keep(declaration_of(x, s)); });
    std::erase_if(s.extensions, [&](const DesiredExtension& x) { return !keep(declaration_of(x, s)); });
    std::erase_if(s.grants, [&](const DesiredGrant& g) { return !keep(declaration_of(g, s)); });
  });
}

std::string resource_address(const std::string& project_id, ResourceKind kind, const std::string& name,
                             const std::string& parent) {
  if (auto outer = parent_kind(kind))
    return resource_address(project_id, *outer, parent) + "/" + kind_plural(kind) + "/" + name;
  return project_id + "/" + kind_plural(kind) + "/" + name;
}

namespace {

// A grant's name after PROJECT/services/S/grants/: ROLE/SCHEMA, then tables or sequences, then
// one's name; `parts` from the role on.
bool is_grant_name(const std::vector<std::string>& parts) {
  if (parts.size() < 2 || parts.size() > 4) return false;
  return parts.size() == 2 || parts[2] == "tables" || parts[2] == "sequences";
}

}  // namespace

std::optional<AddressParts> parse_address(std::string_view address) {
  std::vector<std::string> parts;
  for (size_t start = 0;;) {
    const size_t slash = address.find('/', start);
    parts.emplace_back(address.substr(start, slash == std::string_view::npos ? slash : slash - start));
    if (slash == std::string_view::npos) break;
    start = slash + 1;
  }
  for (const auto& part : parts)
    if (!is_valid_name(part)) return std::nullopt;
  const std::string grants = kind_plural(ResourceKind::Grant), services = kind_plural(ResourceKind::Service);
  if (parts.size() >= 6 && parts[1] == services && parts[3] == grants) {
    const std::vector<std::string> name(parts.begin() + 4, parts.end());
    if (!is_grant_name(name)) return std::nullopt;
    std::string joined = name[0];
    for (size_t i = 1; i < name.size(); ++i) joined += "/" + name[i];
    return AddressParts{parts[0], ResourceKind::Grant, joined, parts[2]};
  }
  if (parts.size() != 3 && parts.size() != 5) return std::nullopt;
  for (const auto& k : kind_forms()) {
    const auto outer = k.parent;
    const bool nested = parts.size() == 5;
    if (k.kind == ResourceKind::Grant) continue;
    if (nested != outer.has_value() || parts[parts.size() - 2] != k.plural) continue;
    if (nested && parts[1] != kind_plural(*outer)) continue;
    return AddressParts{parts[0], k.kind, parts.back(), nested ? parts[2] : ""};
  }
  return std::nullopt;
}

}  // namespace dbform
