#include "read/catalogs.h"

#include <algorithm>
#include <optional>

#include "plan/database_objects.h"
#include "sql/objects.h"
#include "util/error.h"
#include "util/parallel.h"
#include "util/text.h"

namespace dbform {

using nlohmann::json;

namespace {

struct ServiceObjects {
  const ResourceRecord* service = nullptr;
  std::vector<ResourceRecord*> objects;  // its created object records
};

// What the object is declared as now, or (no longer declared) what its record says it was.
const json& declared_settings(const std::map<std::string, const PlannedAction*>& planned, const ResourceRecord& rec) {
  auto found = planned.find(rec.address);
  if (found != planned.end() && found->second->after.is_object()) return found->second->after;
  return rec.settings;
}

}  // namespace

CatalogRefresh refresh_catalogs(State& state, const Plan& plan, const std::vector<std::string>& projects,
                                const SqlConnector* sql, Clock& clock, int parallelism) {
  CatalogRefresh out;
  std::map<std::string, const PlannedAction*> planned;
  for (const auto& a : plan.actions)
    if (kind_form(a.kind).in_database) planned.emplace(a.address, &a);
  std::map<std::string, ServiceObjects> services;  // service address -> its objects
  for (auto& rec : state.resources) {
    if (!kind_form(rec.kind).in_database || rec.create_pending ||
        std::find(projects.begin(), projects.end(), rec.project_id) == projects.end())
      continue;
    const std::string address = resource_address(rec.project_id, ResourceKind::Service, rec.parent);
    const ResourceRecord* service = state.find(address);
    if (!service || service->id.empty() || service->deleted_outside) continue;  // nothing to read them from
    ServiceObjects& s = services[address];
    s.service = service;
    s.objects.push_back(&rec);
  }
  auto last_read = [&](const std::string& address) {
    return state.refreshed && state.refreshed->catalogs.count(address) ? state.refreshed->catalogs.at(address) : "";
  };
  std::vector<ServiceObjects*> to_read;
  for (auto& [address, s] : services) {
    const auto why = sql ? admin_unreachable(*s.service)
                         : std::optional<std::string>("this run has no connections to databases");
    if (why) {
      out.unread.push_back({address, *why, last_read(address)});
    } else {
      to_read.push_back(&s);
    }
  }
  struct Read {
    DbObjects objects;
    int server_version_num = 0;
    std::string problem;
  };
  // Each service on its own connection; only the catalogs are read here, the state is not touched.
  auto reads = in_parallel<Read>(to_read.size(), static_cast<size_t>(std::max(1, parallelism)), [&](size_t i) {
    Read r;
    const ServiceObjects& s = *to_read[i];
    DbObjects wanted;
    for (const ResourceRecord* rec : s.objects)
      add_db_object(rec->kind, rec->name, declared_settings(planned, *rec), wanted);
    try {
      const ConnectTarget target = admin_target(*s.service);
      const SqlSessionOptions options{.read_only = true,
                                      .statement_timeout = kCatalogStatementTimeout,
                                      .connect_timeout = kCatalogConnectTimeout};
      auto session = sql->connect(target, options);
      r.server_version_num = server_version(*session);
      r.objects = read_objects(*session, wanted, kCatalogStatementTimeout);
    } catch (const std::exception& e) {
      r.problem = scrub(describe_exception(e));
    }
    return r;
  });
  const std::string now = format_utc(clock.wall_now());
  for (size_t i = 0; i < to_read.size(); ++i) {
    const ServiceObjects& s = *to_read[i];
    const Read& r = reads[i];
    if (!r.problem.empty()) {
      out.unread.push_back({s.service->address, "its catalogs could not be read: " + r.problem,
                            last_read(s.service->address)});
      continue;
    }
    out.read_at[s.service->address] = now;
    for (ResourceRecord* rec : s.objects) {
      json observed = observed_settings(rec->kind, rec->name, declared_settings(planned, *rec), r.objects,
                                        r.server_version_num);
      const bool gone = observed.is_null();
      if (gone == rec->deleted_outside && (gone || observed == rec->observed)) continue;
      if (gone && !rec->deleted_outside) out.dropped.push_back(rec->address);
      rec->deleted_outside = gone;
      if (!gone) rec->observed = std::move(observed);
      out.changed.push_back(rec->address);
    }
  }
  std::sort(out.unread.begin(), out.unread.end(),
            [](const CatalogsUnread& a, const CatalogsUnread& b) { return a.service < b.service; });
  return out;
}

}  // namespace dbform
