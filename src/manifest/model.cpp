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
  static const std::vector<KindForm> all = {vpc_form(), service_form(), replica_set_form(), peering_form()};
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
const std::optional<std::string> kNotRenamed;

// A declaration as the walk shows it: `parent`, the name of what it lives in.
template <typename T>
Declaration declared(ResourceKind kind, const T& d, const std::string& name, const std::string& parent) {
  const std::optional<std::string>* renamed = &kNotRenamed;
  if constexpr (requires { d.renamed_from; }) renamed = &d.renamed_from;
  return {kind, parent, name, d.deletion_protection, d.import_id, *renamed, d.policy_waivers, d.location, &d};
}

Declaration declaration_of(const DesiredVpc& v) { return declared(ResourceKind::Vpc, v, v.name, kNoParent); }
Declaration declaration_of(const DesiredPeering& p, const DesiredVpc& in) {
  return declared(ResourceKind::Peering, p, p.peer_vpc_id, in.name);
}
Declaration declaration_of(const DesiredService& s) { return declared(ResourceKind::Service, s, s.name, kNoParent); }
Declaration declaration_of(const DesiredReplicaSet& r, const DesiredService& in) {
  return declared(ResourceKind::ReplicaSet, r, r.name, in.name);
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
  });
}

std::string resource_address(const std::string& project_id, ResourceKind kind, const std::string& name,
                             const std::string& parent) {
  if (auto outer = parent_kind(kind))
    return resource_address(project_id, *outer, parent) + "/" + kind_plural(kind) + "/" + name;
  return project_id + "/" + kind_plural(kind) + "/" + name;
}

std::optional<AddressParts> parse_address(std::string_view address) {
  std::vector<std::string> parts;
  for (size_t start = 0;;) {
    const size_t slash = address.find('/', start);
    parts.emplace_back(address.substr(start, slash == std::string_view::npos ? slash : slash - start));
    if (slash == std::string_view::npos) break;
    start = slash + 1;
  }
  if (parts.size() != 3 && parts.size() != 5) return std::nullopt;
  for (const auto& part : parts)
    if (!is_valid_name(part)) return std::nullopt;
  for (const auto& k : kind_forms()) {
    const auto outer = k.parent;
    const bool nested = parts.size() == 5;
    if (nested != outer.has_value() || parts[parts.size() - 2] != k.plural) continue;
    if (nested && parts[1] != kind_plural(*outer)) continue;
    return AddressParts{parts[0], k.kind, parts.back(), nested ? parts[2] : ""};
  }
  return std::nullopt;
}

}  // namespace dbform
