// The simulator core: routing, authentication, the in-memory projects and the faults, behind one
// mutex. No sockets here (see server.cpp), so tests drive it directly with a FakeClock.
#include "sim/simulator.h"

#include <algorithm>
#include <set>

#include "sim/auth.h"
#include "sim/faults.h"
#include "sim/resources.h"
#include "sim/validation.h"
#include "util/text.h"

namespace dbform {

namespace {

using nlohmann::json;
using sim::json_error;

enum class RouteId { AuthInfo, Services, Service, UpdatePassword, Vpcs };

struct Route {
  RouteId id;
  std::string path_template;  // as counted: "/projects/{project_id}/services"
  std::vector<std::string> methods;
  std::string project_id;
  std::string service_id;
};

std::vector<std::string> split_path(const std::string& path) {
  std::vector<std::string> parts;
  size_t start = 1;
  if (path.empty() || path[0] != '/') return parts;
  while (start <= path.size()) {
    size_t slash = path.find('/', start);
    if (slash == std::string::npos) slash = path.size();
    parts.push_back(path.substr(start, slash - start));
    start = slash + 1;
  }
  return parts;
}

std::optional<Route> match_route(const std::string& path) {
  auto parts = split_path(path);
  for (const auto& part : parts) {
    if (part.empty()) return std::nullopt;
  }
  if (parts == std::vector<std::string>{"auth", "info"}) return Route{RouteId::AuthInfo, "/auth/info", {"GET"}, "", ""};
  if (parts.size() < 3 || parts[0] != "projects") return std::nullopt;
  const std::string& project = parts[1];
  if (parts.size() == 3 && parts[2] == "services") {
    return Route{RouteId::Services, "/projects/{project_id}/services", {"GET", "POST"}, project, ""};
  }
  if (parts.size() == 4 && parts[2] == "services") {
    return Route{RouteId::Service, "/projects/{project_id}/services/{service_id}", {"GET"}, project, parts[3]};
  }
  if (parts.size() == 5 && parts[2] == "services" && parts[4] == "updatePassword") {
    return Route{RouteId::UpdatePassword, "/projects/{project_id}/services/{service_id}/updatePassword", {"POST"},
                 project, parts[3]};
  }
  if (parts.size() == 3 && parts[2] == "vpcs") {
    return Route{RouteId::Vpcs, "/projects/{project_id}/vpcs", {"GET", "POST"}, project, ""};
  }
  return std::nullopt;
}

SimResponse json_answer(int status, const json& body) {
  SimResponse response;
  response.status = status;
  response.body = body.dump();
  return response;
}

}  // namespace

struct Simulator::Impl {
  Impl(SimConfig c, Clock& clk)
      : config(std::move(c)), clock(clk), started_utc(format_utc(clk.wall_now())), faults(config.faults, config.seed),
        random(config.seed, 2) {}

  SimConfig config;
  Clock& clock;
  std::string started_utc;  // when the keys were "created"

  mutable std::mutex mu;  // guards everything below
  sim::FaultInjector faults;
  sim::RandomSource random;  // ids, ports and passwords
  std::vector<sim::SimService> services;  // in creation order, all projects
  std::vector<sim::SimVpc> vpcs;
  std::set<std::string> ids_in_use;
  std::map<std::string, long long> counts;

  SimResponse handle_locked(const SimRequest& request);
  const SimKey* find_key(const std::string& authorization) const;  // nullptr: missing or unknown
  SimResponse dispatch(const SimRequest& request, const Route& route, const SimKey& key);
  SimResponse create_service(const std::string& project_id, const std::string& body);
  SimResponse create_vpc(const std::string& project_id, const std::string& body);
  SimResponse after_create(SimResponse answer);
  SimResponse update_password(const std::string& project_id, const std::string& service_id, const std::string& body);
  bool listed(Clock::TimePoint created_at) const;
  json service_view(const sim::SimService& service, bool with_password) const;
  std::string new_id(bool numeric);
};

SimResponse Simulator::Impl::handle_locked(const SimRequest& request) {
  auto route = match_route(request.path);
  if (!route) {
    ++counts[request.method + " (unknown route)"];
    return json_error(404, "NOT_FOUND", "no route for " + request.method + " " + request.path);
  }
  ++counts[request.method + " " + route->path_template];
  bool allowed = std::find(route->methods.begin(), route->methods.end(), request.method) != route->methods.end();
  if (!allowed) {
    SimResponse response = json_error(405, "METHOD_NOT_ALLOWED",
                                      request.method + " is not allowed on " + route->path_template);
    response.headers["Allow"] = join(route->methods, ", ");
    return response;
  }
  if (auto fault = faults.intercept_call()) return *fault;
  const SimKey* key = find_key(request.authorization);
  if (!key) return json_error(401, "UNAUTHORIZED", "invalid or missing API key");
  if (!route->project_id.empty() && route->project_id != key->project_id) {
    return json_error(403, "FORBIDDEN", "API key is not valid for project " + route->project_id);
  }
  return dispatch(request, *route, *key);
}

const SimKey* Simulator::Impl::find_key(const std::string& authorization) const {
  auto presented = sim::key_from_authorization(authorization);
  if (!presented) return nullptr;
  for (const auto& candidate : config.keys) {
    if (candidate.key == *presented) return &candidate;
  }
  return nullptr;
}

SimResponse Simulator::Impl::dispatch(const SimRequest& request, const Route& route, const SimKey& key) {
  bool post = request.method == "POST";
  switch (route.id) {
    case RouteId::AuthInfo:
      return json_answer(200, sim::auth_info_json(key, started_utc));
    case RouteId::Services: {
      if (post) return create_service(route.project_id, request.body);
      json list = json::array();
      for (const auto& service : services) {
        if (service.project_id == route.project_id && listed(service.created_at))
          list.push_back(service_view(service, false));
      }
      return json_answer(200, list);
    }
    case RouteId::Service:
      for (const auto& service : services) {
        if (service.project_id == route.project_id && service.service_id == route.service_id) {
          return json_answer(200, service_view(service, false));
        }
      }
      return json_error(404, "NOT_FOUND",
                        "service " + route.service_id + " not found in project " + route.project_id);
    case RouteId::UpdatePassword:
      return update_password(route.project_id, route.service_id, request.body);
    case RouteId::Vpcs: {
      if (post) return create_vpc(route.project_id, request.body);
      json list = json::array();
      for (const auto& vpc : vpcs) {
        if (vpc.project_id == route.project_id && listed(vpc.created_at)) list.push_back(vpc.fields);
      }
      return json_answer(200, list);
    }
  }
  return json_error(500, "INTERNAL", "unhandled route");
}

SimResponse Simulator::Impl::create_service(const std::string& project_id, const std::string& body) {
  json request = json::parse(body, nullptr, false);
  if (request.is_discarded()) return json_error(400, "BAD_REQUEST", "request body is not valid JSON");
  if (auto problem = sim::check_service_create(request)) return json_error(400, "BAD_REQUEST", *problem);
  std::string name = request["name"].get<std::string>();
  services.push_back(sim::make_service(request, project_id, new_id(false), random, clock.now(),
                                       format_utc(clock.wall_now()), sim::fate_for(config.faults, name)));
  return after_create(json_answer(202, service_view(services.back(), true)));
}

SimResponse Simulator::Impl::create_vpc(const std::string& project_id, const std::string& body) {
  json request = json::parse(body, nullptr, false);
  if (request.is_discarded()) return json_error(400, "BAD_REQUEST", "request body is not valid JSON");
  if (auto problem = sim::check_vpc_create(request)) return json_error(400, "BAD_REQUEST", *problem);
  vpcs.push_back(sim::make_vpc(request, project_id, new_id(true), clock.now()));
  return after_create(json_answer(201, vpcs.back().fields));
}

// UpdatePasswordInput: {"password": "..."}, required and a non-empty string; 204 with no body.
SimResponse Simulator::Impl::update_password(const std::string& project_id, const std::string& service_id,
                                             const std::string& body) {
  json request = json::parse(body, nullptr, false);
  if (!request.is_object() || !request.contains("password") || !request["password"].is_string() ||
      request["password"].get<std::string>().empty())
    return json_error(400, "BAD_REQUEST", "the body must be {\"password\": \"...\"} with a non-empty password");
  for (auto& service : services) {
    if (service.project_id == project_id && service.service_id == service_id) {
      service.initial_password = request["password"].get<std::string>();
      SimResponse response;
      response.status = 204;
      return response;
    }
  }
  return json_error(404, "NOT_FOUND", "service " + service_id + " not found in project " + project_id);
}

// The answer to a create that was performed, as the faults let it leave.
SimResponse Simulator::Impl::after_create(SimResponse answer) {
  using Fault = sim::FaultInjector::CreateFault;
  answer.delay = config.faults.create_answer_delay;
  switch (faults.after_create()) {
    case Fault::None: break;
    case Fault::DropAfterHeaders: answer.drop_connection = true; break;
    case Fault::LoseAnswer: answer.lose_answer = true; break;
    case Fault::GatewayTimeout:
      return json_error(504, "GATEWAY_TIMEOUT", "the upstream service did not answer in time");
  }
  return answer;
}

// Lists lag behind writes by list_lag, as real list endpoints (eventually consistent) do.
bool Simulator::Impl::listed(Clock::TimePoint created_at) const {
  return clock.now() - created_at >= config.faults.list_lag;
}

json Simulator::Impl::service_view(const sim::SimService& service, bool with_password) const {
  auto age = std::chrono::duration_cast<Duration>(clock.now() - service.created_at);
  return sim::service_json(service, sim::status_at(service.fate, age, config), with_password);
}

// Service ids look like the vendor's ("kd9w2xp4mz"); VPC ids are numeric strings ("1234567890").
std::string Simulator::Impl::new_id(bool numeric) {
  while (true) {
    std::string id = numeric ? std::to_string(random.between(1'000'000'000LL, 9'999'999'999LL)) : random.lower_alnum(10);
    if (ids_in_use.insert(id).second) return id;
  }
}

Simulator::Simulator(SimConfig config, Clock& clock) : impl_(std::make_unique<Impl>(std::move(config), clock)) {}

Simulator::~Simulator() = default;

SimResponse Simulator::handle(const SimRequest& request) {
  // Latency is spent outside the lock so that slow answers overlap, as they do on a real server.
  if (impl_->config.faults.latency.count() > 0) impl_->clock.sleep_for(impl_->config.faults.latency);
  SimResponse response;
  {
    std::lock_guard<std::mutex> lock(impl_->mu);
    response = impl_->faults.shape(impl_->handle_locked(request));
  }
  response.headers["Content-Type"] = "application/json";
  // A slow answer to work already done: visible to other calls while this one still waits.
  if (response.delay.count() > 0) impl_->clock.sleep_for(response.delay);
  return response;
}

json Simulator::request_counts() const {
  std::lock_guard<std::mutex> lock(impl_->mu);
  return json(impl_->counts);
}

std::string Simulator::current_password(const std::string& service_id) const {
  std::lock_guard<std::mutex> lock(impl_->mu);
  for (const auto& service : impl_->services)
    if (service.service_id == service_id) return service.initial_password;
  return "";
}

json Simulator::all_services() const {
  std::lock_guard<std::mutex> lock(impl_->mu);
  json list = json::array();
  for (const auto& service : impl_->services) list.push_back(impl_->service_view(service, false));
  return list;
}

json Simulator::fault_counts() const {
  std::lock_guard<std::mutex> lock(impl_->mu);
  return json(impl_->faults.injected());
}

json Simulator::all_vpcs() const {
  std::lock_guard<std::mutex> lock(impl_->mu);
  json list = json::array();
  for (const auto& vpc : impl_->vpcs) {
    json view = vpc.fields;
    view["project_id"] = vpc.project_id;  // not in the API's Vpc, but a debug view spans projects
    list.push_back(view);
  }
  return list;
}

}  // namespace dbform
