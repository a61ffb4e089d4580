#include "manifest/model.h"

#include <algorithm>
#include <cctype>
#include <stdexcept>

namespace dbform {

nlohmann::json settings_json(const DesiredService& s) {
  nlohmann::json j = nlohmann::json::object();
  if (!s.addons.empty()) {
    // Addons are a set (the validator refuses repeats): sorted, so reordering them is no change.
    std::vector<std::string> addons = s.addons;
    std::sort(addons.begin(), addons.end());
    j["addons"] = addons;
  }
  if (s.cpu_millis) j["cpu_millis"] = *s.cpu_millis;
  if (s.memory_gbs) j["memory_gbs"] = *s.memory_gbs;
  if (s.environment_tag) j["environment_tag"] = *s.environment_tag;
  if (s.region_code) j["region_code"] = *s.region_code;
  if (s.replica_count) j["replica_count"] = *s.replica_count;
  if (s.sync_replica_count) j["sync_replica_count"] = *s.sync_replica_count;
  if (s.paused) j["paused"] = *s.paused;
  if (s.vpc) j["vpc"] = *s.vpc;
  if (s.connection_pooler) j["connection_pooler"] = *s.connection_pooler;
  if (s.fork) {
    j["fork"] = {{"from", s.fork->from}, {"strategy", s.fork->strategy}};
    if (!s.fork->target_time.empty()) j["fork"]["target_time"] = s.fork->target_time;
  }
  return j;
}

nlohmann::json settings_json(const DesiredVpc& v) {
  return {{"cidr", v.cidr}, {"region_code", v.region_code}};
}

nlohmann::json settings_json(const DesiredReplicaSet& r) {
  nlohmann::json j = {{"nodes", r.nodes}, {"cpu_millis", r.cpu_millis}, {"memory_gbs", r.memory_gbs}};
  if (r.connection_pooler) j["connection_pooler"] = *r.connection_pooler;
  if (r.environment_tag) j["environment_tag"] = *r.environment_tag;
  return j;
}

nlohmann::json settings_json(const DesiredPeering& p) {
  return {{"peer_account_id", p.peer_account_id},
          {"peer_region_code", p.peer_region_code},
          {"peer_vpc_id", p.peer_vpc_id}};
}

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

Declaration declaration_of(const DesiredVpc& v) {
  return {ResourceKind::Vpc, kNoParent, v.name, v.deletion_protection, v.import_id, v.renamed_from,
          v.policy_waivers, v.location, &v};
}
Declaration declaration_of(const DesiredPeering& p, const DesiredVpc& in) {
  return {ResourceKind::Peering, in.name, p.peer_vpc_id, p.deletion_protection, p.import_id, kNotRenamed,
          p.policy_waivers, p.location, &p};
}
Declaration declaration_of(const DesiredService& s) {
  return {ResourceKind::Service, kNoParent, s.name, s.deletion_protection, s.import_id, s.renamed_from,
          s.policy_waivers, s.location, &s};
}
Declaration declaration_of(const DesiredReplicaSet& r, const DesiredService& in) {
  return {ResourceKind::ReplicaSet, in.name, r.name, r.deletion_protection, r.import_id, kNotRenamed,
          r.policy_waivers, r.location, &r};
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
