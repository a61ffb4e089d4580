#include "manifest/model.h"

#include <algorithm>
#include <cctype>

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

namespace {

struct KindNames {
  ResourceKind kind;
  const char* name;
  const char* plural;
  const char* noun;
};

constexpr KindNames kKinds[] = {
    {ResourceKind::Service, "service", "services", "service"},
    {ResourceKind::Vpc, "vpc", "vpcs", "VPC"},
    {ResourceKind::ReplicaSet, "replica_set", "replicas", "read replica set"},
    {ResourceKind::Peering, "peering", "peerings", "VPC peering"},
};

const KindNames& names_of(ResourceKind k) { return kKinds[static_cast<size_t>(k)]; }

}  // namespace

const char* kind_name(ResourceKind k) { return names_of(k).name; }
const char* kind_plural(ResourceKind k) { return names_of(k).plural; }
const char* kind_noun(ResourceKind k) { return names_of(k).noun; }

std::optional<ResourceKind> kind_named(std::string_view name) {
  for (const auto& k : kKinds)
    if (name == k.name) return k.kind;
  return std::nullopt;
}

std::optional<ResourceKind> parent_kind(ResourceKind k) {
  if (k == ResourceKind::ReplicaSet) return ResourceKind::Service;
  if (k == ResourceKind::Peering) return ResourceKind::Vpc;
  return std::nullopt;
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
  for (const auto& k : kKinds) {
    const auto outer = parent_kind(k.kind);
    const bool nested = parts.size() == 5;
    if (nested != outer.has_value() || parts[parts.size() - 2] != k.plural) continue;
    if (nested && parts[1] != kind_plural(*outer)) continue;
    return AddressParts{parts[0], k.kind, parts.back(), nested ? parts[2] : ""};
  }
  return std::nullopt;
}

}  // namespace dbform
