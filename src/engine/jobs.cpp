#include "engine/jobs.h"

#include <spdlog/spdlog.h>

#include <algorithm>

#include "engine/namesakes.h"
#include "util/duration.h"
#include "util/text.h"

namespace dbform {

namespace {

// Each attempt after the first follows a lookup that proved nothing of that name exists, so trying
// again is safe; several tries let one run converge through a flaky API (20% of calls failing).
constexpr int kMaxCreateAttempts = 6;
// Lookups after an unknown outcome: at 0, then w/16, w/8, w/4, w/2 and w of the settle window w.
constexpr int kSettleSteps = 5;

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

// A ForkServiceCreate body: the sizes and tag as declared, the rest inherited from the source.
nlohmann::json fork_request(const PlannedAction& a) {
  const nlohmann::json& fork = a.after["fork"];
  nlohmann::json body = {{"name", a.name}, {"fork_strategy", fork["strategy"]}};
  if (fork.contains("target_time")) body["target_time"] = fork["target_time"];
  for (const char* field : {"cpu_millis", "memory_gbs", "environment_tag"})
    if (a.after.contains(field)) body[field] = a.after[field];
  return body;
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
      if (s.name == a.name && is_live_namesake(s)) {
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

// Looks the resource up by name across the settle window, stopping at the first lookup that finds
// anything: a list that lags behind writes shows a just-created resource only seconds later.
// nullopt when a stop ended the wait.
std::optional<std::vector<std::string>> settle_lookup(const CreateContext& ctx, const PlannedAction& a,
                                                      const std::string& key, Outcome& out) {
  const auto start = ctx.clock.now();
  for (int step = 0;; ++step) {
    std::vector<std::string> ids = find_by_name(ctx.api, a, key, out);
    if (!ids.empty() || step == kSettleSteps || ctx.settle_window.count() == 0) return ids;
    const Duration next = ctx.settle_window / (1 << (kSettleSteps - 1 - step));
    spdlog::info("{}: not listed yet; looking again {} after the unknown outcome", a.address, format_duration(next));
    if (!ctx.clock.sleep_until_unless(start + next, ctx.stop)) return std::nullopt;
  }
}

bool stopped(const CreateContext& ctx) { return ctx.stop && ctx.stop->load(); }

}  // namespace

Outcome create_or_adopt(const CreateContext& ctx, const PlannedAction& a, const std::string& key, bool look_first,
                        const std::string& fork_from) {
  Outcome out;
  for (int attempt = 1; attempt <= kMaxCreateAttempts; ++attempt) {
    if (look_first) {
      auto found = settle_lookup(ctx, a, key, out);
      if (!found) {  // the outcome stays unknown: the next apply looks again before creating
        out.stopped = true;
        return out;
      }
      const std::vector<std::string>& ids = *found;
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
    if (stopped(ctx)) {
      out.stopped = true;
      out.not_sent = attempt == 1;  // later attempts follow a create whose outcome is still unknown
      return out;
    }
    try {
      if (!fork_from.empty()) out.service = ctx.api.fork_service(key, a.project_id, fork_from, fork_request(a));
      else if (a.kind == ResourceKind::Service) out.service = ctx.api.create_service(key, a.project_id, service_request(a));
      else out.vpc = ctx.api.create_vpc(key, a.project_id, vpc_request(a));
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

nlohmann::json observe(const Service& s, const nlohmann::json& recorded, const VpcNames& vpc_names) {
  nlohmann::json seen = nlohmann::json::object();
  const nlohmann::json& raw = s.raw;
  nlohmann::json spec;
  if (raw.contains("resources") && raw["resources"].is_array() && !raw["resources"].empty() &&
      raw["resources"][0].is_object())
    spec = raw["resources"][0].value("spec", nlohmann::json::object());
  for (const char* field : {"cpu_millis", "memory_gbs"}) {
    // "shared" is answered as the plan's numbers: it cannot be told apart, so it stays as recorded.
    if (recorded.value(field, nlohmann::json()) == "shared") seen[field] = "shared";
    else if (spec.is_object() && spec.contains(field) && spec[field].is_number()) {
      const nlohmann::json& n = spec[field];
      seen[field] = n.is_number_float() && n.get<double>() != static_cast<double>(static_cast<long long>(n.get<double>()))
                        ? n.dump()
                        : std::to_string(n.get<long long>());
    }
  }
  if (!s.environment.empty()) seen["environment_tag"] = s.environment;
  if (!s.region_code.empty()) seen["region_code"] = s.region_code;
  if (s.replica_count) seen["replica_count"] = *s.replica_count;
  if (s.sync_replica_count) seen["sync_replica_count"] = *s.sync_replica_count;
  if (!s.status.empty()) seen["paused"] = s.status == "PAUSED" || s.status == "PAUSING";
  if (!s.service_type.empty()) {
    // The time-series addon is what makes a TIMESCALEDB (TIMESERIESDB) service; ai cannot be seen.
    std::vector<std::string> addons;
    if (recorded.contains("addons") && recorded["addons"].is_array())
      for (const auto& addon : recorded["addons"]) if (addon == "ai") addons.push_back("ai");
    if (s.service_type == "TIMESCALEDB" || s.service_type == "TIMESERIESDB") addons.push_back("time-series");
    std::sort(addons.begin(), addons.end());
    if (!addons.empty()) seen["addons"] = addons;
  }
  seen["connection_pooler"] = raw.contains("connection_pooler") && raw["connection_pooler"].is_object();
  if (s.vpc_endpoint.is_object() && s.vpc_endpoint.value("vpc_id", nlohmann::json()).is_string()) {
    const std::string id = s.vpc_endpoint["vpc_id"].get<std::string>();
    auto name = vpc_names.find(id);
    seen["vpc"] = name != vpc_names.end() ? name->second : "id:" + id;
    seen["vpc_id"] = id;
  }
  return seen;
}

nlohmann::json observe(const Vpc& v) {
  nlohmann::json seen = nlohmann::json::object();
  if (!v.cidr.empty()) seen["cidr"] = v.cidr;
  if (!v.region_code.empty()) seen["region_code"] = v.region_code;
  return seen;
}

VpcNames recorded_vpc_names(const State& state, const std::string& project_id) {
  VpcNames names;
  for (const auto& r : state.resources)
    if (r.kind == ResourceKind::Vpc && r.project_id == project_id && !r.id.empty()) names[r.id] = r.name;
  return names;
}

bool call_took_effect(const std::string& call, const nlohmann::json& body, const nlohmann::json& shown,
                      ResourceKind kind) {
  if (!shown.is_object()) return false;
  if (call == "rename") return shown.value("name", nlohmann::json()) == body.value("name", nlohmann::json());
  return kind == ResourceKind::Service && call_took_effect(call, body, parse_service(shown));
}

bool call_took_effect(const std::string& call, const nlohmann::json& body, const Service& s) {
  const nlohmann::json seen = observe(s, nlohmann::json::object(), {});
  auto sent = [&](const char* field) { return body.is_object() ? body.value(field, nlohmann::json()) : nlohmann::json(); };
  auto shows = [&](const char* field, const nlohmann::json& value) {
    return !value.is_null() && seen.value(field, nlohmann::json()) == value;
  };
  if (call == "resize") return shows("cpu_millis", sent("cpu_millis")) && shows("memory_gbs", sent("memory_gbs"));
  if (call == "setEnvironment") return shows("environment_tag", sent("environment"));
  if (call == "setHA")
    return (sent("replica_count").is_null() || shows("replica_count", sent("replica_count"))) &&
           (sent("sync_replica_count").is_null() || shows("sync_replica_count", sent("sync_replica_count")));
  // Watched until PAUSED, or READY again.
  if (call == "stop") return s.status == "PAUSED";
  if (call == "start") return s.status == "READY";
  if (call == "enablePooler") return shows("connection_pooler", true);
  if (call == "disablePooler") return shows("connection_pooler", false);
  // An attachment whose VPC id is not known yet has not been made, whatever the service shows.
  if (call == "attachToVPC") return shows("vpc_id", sent("vpc_id"));
  if (call == "detachFromVPC") return sent("vpc_id").is_string() && !shows("vpc_id", sent("vpc_id"));
  return false;
}

namespace {

// A read that failed: worth trying again when the network or the API may recover.
void note_poll_failure(Outcome& out, const std::exception& e) {
  out.error = describe_exception(e);
  if (auto api_error = dynamic_cast<const ApiError*>(&e)) {
    out.http_status = api_error->status();
    out.transient = api_error->status() == 0 || api_error->status() == 429 || api_error->status() >= 500;
  } else {
    // A 2xx that is not what was asked for: the API misbehaved; keep trying. No memory: waiting
    // would not bring it back, and the watch would run to its timeout saying nothing of it.
    out.transient = !dynamic_cast<const std::bad_alloc*>(&e);
  }
}

}  // namespace

Outcome poll_service(ApiClient& api, const PlannedAction& a, const std::string& service_id, const std::string& key) {
  Outcome out;
  out.type = JobType::Poll;
  try {
    out.service = api.get_service(key, a.project_id, service_id);
    out.gone = !out.service;
  } catch (const std::exception& e) {
    note_poll_failure(out, e);
  }
  return out;
}

Outcome poll_project(ApiClient& api, const std::string& project_id, const std::string& key) {
  Outcome out;
  out.type = JobType::PollList;
  try {
    out.listed = api.list_services(key, project_id);
  } catch (const std::exception& e) {
    note_poll_failure(out, e);
  }
  return out;
}

Outcome send_update(ApiClient& api, const PlannedAction& a, const std::string& service_id, const std::string& key,
                    const std::string& call, const nlohmann::json& body) {
  Outcome out;
  out.type = JobType::Call;
  try {
    if (a.kind == ResourceKind::Service) out.service = api.update_service(key, a.project_id, service_id, call, body);
    else api.update_vpc(key, a.project_id, service_id, call, body);
  } catch (const std::exception& e) {
    note_poll_failure(out, e);
  }
  return out;
}

Outcome delete_resource(ApiClient& api, const PlannedAction& a, const std::string& id, const std::string& key) {
  Outcome out;
  out.type = JobType::Delete;
  try {
    // Just before the call, the API must still show this id under the recorded name: a record
    // edited by hand, or an id reused, must not delete another database.
    std::optional<std::string> shown_name;
    if (a.kind == ResourceKind::Service) {
      if (auto s = api.get_service(key, a.project_id, id)) shown_name = s->name;
    } else if (auto v = api.get_vpc(key, a.project_id, id)) {
      shown_name = v->name;
    }
    if (!shown_name) {
      out.gone = true;  // gone already (404): nothing to delete
      return out;
    }
    if (*shown_name != a.name) {
      out.error = "refused: the API shows " + std::string(kind_name(a.kind)) + " id " + id + " named `" +
                  valid_utf8(*shown_name) + "`, not `" + a.name +
                  "` as recorded, so the record does not describe it (a hand edit?). Nothing was deleted; check "
                  "`dbform state show " + a.address + "`";
      return out;
    }
    out.gone = a.kind == ResourceKind::Service ? !api.delete_service(key, a.project_id, id)
                                               : !api.delete_vpc(key, a.project_id, id);
  } catch (const std::exception& e) {
    note_poll_failure(out, e);
  }
  return out;
}

Outcome set_password(ApiClient& api, const PlannedAction& a, const std::string& service_id, const std::string& key,
                     const std::string& password) {
  Outcome out;
  out.type = JobType::Password;
  if (password.empty()) {  // never: the engine sends only a recorded pending password
    out.error = "no new password was recorded";
    return out;
  }
  try {
    api.update_password(key, a.project_id, service_id, password);
  } catch (const std::exception& e) {
    out.error = describe_exception(e);
  }
  return out;
}

void record_service(ResourceRecord& rec, const Service& s, const std::string& now) {
  // An id, once recorded, is the resource's: an answer naming another one cannot move it.
  if (rec.id.empty() && !s.service_id.empty()) rec.id = s.service_id;
  if (!s.status.empty()) rec.status = s.status;
  if (!s.endpoint.empty()) {
    rec.endpoint_host = s.endpoint.host;
    rec.endpoint_port = s.endpoint.port;
  }
  // A service answer without a pooler has none (any more).
  rec.pooler_host = s.pooler_endpoint.host;
  rec.pooler_port = s.pooler_endpoint.port;
  if (!s.initial_password.empty()) rec.initial_password = s.initial_password;  // never overwritten by empty
  rec.last_response = s.raw;
  rec.updated_at = now;
}

void record_vpc(ResourceRecord& rec, const Vpc& v, const std::string& now) {
  if (rec.id.empty() && !v.id.empty()) rec.id = v.id;
  rec.last_response = v.raw;
  rec.updated_at = now;
}

}  // namespace dbform
