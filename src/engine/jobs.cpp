#include "engine/jobs.h"

#include <spdlog/spdlog.h>

#include "util/text.h"

namespace dbform {

namespace {

// Each attempt after the first follows a lookup that proved nothing of that name exists, so trying
// again is safe; several tries let one run converge through a flaky API (20% of calls failing).
constexpr int kMaxCreateAttempts = 6;

ServiceCreateRequest service_request(const PlannedAction& a) {
  const auto& s = a.after;
  ServiceCreateRequest r;
  r.name = a.name;
  if (s.contains("addons")) r.addons = s["addons"].get<std::vector<std::string>>();
  if (s.contains("cpu_millis")) r.cpu_millis = s["cpu_millis"].get<std::string>();
  if (s.contains("memory_gbs")) r.memory_gbs = s["memory_gbs"].get<std::string>();
  if (s.contains("environment_tag")) r.environment_tag = s["environment_tag"].get<std::string>();
  if (s.contains("region_code")) r.region_code = s["region_code"].get<std::string>();
  if (s.contains("replica_count")) r.replica_count = s["replica_count"].get<long long>();
  return r;
}

VpcCreateRequest vpc_request(const PlannedAction& a) {
  return {a.name, a.after.value("cidr", ""), a.after.value("region_code", "")};
}

// Lists the project's resources of the action's kind; fills `out` when exactly one has its name.
// Returns the ids of every match.
std::vector<std::string> find_by_name(ApiClient& api, const PlannedAction& a, const std::string& key, Outcome& out) {
  std::vector<std::string> ids;
  if (a.kind == ResourceKind::Service) {
    for (auto& s : api.list_services(key, a.project_id))
      // A namesake being deleted is not the one we just created: adopting it would record a
      // database that is about to disappear, so it neither matches nor blocks a create.
      if (s.name == a.name && s.status != "DELETING" && s.status != "DELETED") {
        ids.push_back(s.service_id);
        out.service = std::move(s);
      }
  } else {
    for (auto& v : api.list_vpcs(key, a.project_id))
      if (v.name == a.name) {
        ids.push_back(v.id);
        out.vpc = std::move(v);
      }
  }
  if (ids.size() != 1) {
    out.service.reset();
    out.vpc.reset();
  }
  return ids;
}

}  // namespace

Outcome create_or_adopt(ApiClient& api, const PlannedAction& a, const std::string& key, bool look_first) {
  Outcome out;
  for (int attempt = 1; attempt <= kMaxCreateAttempts; ++attempt) {
    if (look_first) {
      std::vector<std::string> ids = find_by_name(api, a, key, out);
      if (ids.size() == 1) {
        out.adopted = true;
        return out;
      }
      if (ids.size() > 1) {
        out.error = std::to_string(ids.size()) + " " + kind_plural(a.kind) + " named `" + a.name + "` exist (" +
                    join(ids, ", ") + "); dbform cannot tell which one it created. Delete the extra ones, "
                    "then run apply again";
        return out;
      }
    }
    try {
      if (a.kind == ResourceKind::Service) out.service = api.create_service(key, a.project_id, service_request(a));
      else out.vpc = api.create_vpc(key, a.project_id, vpc_request(a));
      return out;
    } catch (const ApiError& e) {
      if (!e.outcome_unknown()) {
        out.error = e.what();
        out.nothing_created = true;
        return out;
      }
      spdlog::warn("{}: create outcome unknown ({}); looking it up by name", a.address, e.what());
      look_first = true;
    }
  }
  out.error = "the create's outcome stayed unknown after " + std::to_string(kMaxCreateAttempts) +
              " attempts; the next apply looks it up by name again";
  return out;
}

Outcome poll_service(ApiClient& api, const PlannedAction& a, const std::string& service_id, const std::string& key) {
  Outcome out;
  out.type = JobType::Poll;
  try {
    out.service = api.get_service(key, a.project_id, service_id);
    out.gone = !out.service;
  } catch (const ApiError& e) {
    out.error = e.what();
    out.transient = e.status() == 0 || e.status() == 429 || e.status() >= 500;
  } catch (const std::exception& e) {  // a 2xx that is not a service: the API misbehaved; keep trying
    out.error = e.what();
    out.transient = true;
  }
  return out;
}

void record_service(ResourceRecord& rec, const Service& s, const std::string& now) {
  if (!s.service_id.empty()) rec.id = s.service_id;
  if (!s.status.empty()) rec.status = s.status;
  if (!s.endpoint.empty()) {
    rec.endpoint_host = s.endpoint.host;
    rec.endpoint_port = s.endpoint.port;
  }
  if (!s.pooler_endpoint.empty()) {
    rec.pooler_host = s.pooler_endpoint.host;
    rec.pooler_port = s.pooler_endpoint.port;
  }
  if (!s.initial_password.empty()) rec.initial_password = s.initial_password;  // never overwritten by empty
  rec.last_response = s.raw;
  rec.updated_at = now;
}

void record_vpc(ResourceRecord& rec, const Vpc& v, const std::string& now) {
  if (!v.id.empty()) rec.id = v.id;
  rec.last_response = v.raw;
  rec.updated_at = now;
}

}  // namespace dbform
