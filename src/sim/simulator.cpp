// The simulator core: routing, authentication, the in-memory projects and the faults, behind one
// mutex. No sockets here (see server.cpp), so tests drive it directly with a FakeClock.
#include "sim/simulator.h"

#include <algorithm>
#include <set>

#include "sim/auth.h"
#include "sim/faults.h"
#include "sim/impl.h"
#include "sim/resources.h"
#include "sim/validation.h"
#include "util/text.h"
#include "util/json_limits.h"

namespace dbform {

namespace {

using sim::json_error;
using sim::Route;
using sim::RouteId;

// The calls on one service after .../services/{service_id}/, all POST.
const std::set<std::string> kServiceActions = {"resize",       "setEnvironment", "setHA",          "attachToVPC",
                                               "detachFromVPC", "enablePooler",  "disablePooler",  "updatePassword",
                                               "stop",          "start",         "rename",         "forkService"};


// Every call match_route() serves, as counted (the method and the route's template).
std::vector<std::string> make_served_calls() {
  const std::string services = "/projects/{project_id}/services", vpcs = "/projects/{project_id}/vpcs";
  const std::string service = services + "/{service_id}", sets = service + "/replicaSets";
  std::vector<std::string> calls = {"GET /auth/info", "GET " + services, "POST " + services, "GET " + service,
                                    "DELETE " + service};
  for (const auto& action : kServiceActions) calls.push_back("POST " + service + "/" + action);
  calls.insert(calls.end(), {"GET " + sets, "POST " + sets, "DELETE " + sets + "/{replica_set_id}"});
  for (const char* action : {"resize", "enablePooler", "disablePooler", "setEnvironment"})
    calls.push_back("POST " + sets + "/{replica_set_id}/" + action);
  calls.insert(calls.end(), {"GET " + vpcs, "POST " + vpcs, "GET " + vpcs + "/{vpc_id}", "DELETE " + vpcs + "/{vpc_id}",
                             "POST " + vpcs + "/{vpc_id}/rename", "GET " + vpcs + "/{vpc_id}/peerings",
                             "POST " + vpcs + "/{vpc_id}/peerings", "GET " + vpcs + "/{vpc_id}/peerings/{peering_id}",
                             "DELETE " + vpcs + "/{vpc_id}/peerings/{peering_id}"});
  return calls;
}

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
  if (parts == std::vector<std::string>{"auth", "info"})
    return Route{RouteId::AuthInfo, "/auth/info", {"GET"}, "", "", "", ""};
  if (parts.size() < 3 || parts[0] != "projects") return std::nullopt;
  const std::string& project = parts[1];
  const std::string services = "/projects/{project_id}/services", vpcs = "/projects/{project_id}/vpcs";
  if (parts[2] == "services") {
    if (parts.size() == 3) return Route{RouteId::Services, services, {"GET", "POST"}, project, "", "", ""};
    if (parts.size() == 4)
      return Route{RouteId::Service, services + "/{service_id}", {"GET", "DELETE"}, project, parts[3], "", ""};
    if (parts.size() == 5 && kServiceActions.count(parts[4]))
      return Route{RouteId::ServiceAction, services + "/{service_id}/" + parts[4], {"POST"}, project, parts[3], parts[4],
                   ""};
    const std::string sets = services + "/{service_id}/replicaSets";
    if (parts.size() >= 5 && parts[4] == "replicaSets") {
      if (parts.size() == 5) return Route{RouteId::ReplicaSets, sets, {"GET", "POST"}, project, parts[3], "", ""};
      if (parts.size() == 6)
        return Route{RouteId::ReplicaSets, sets + "/{replica_set_id}", {"DELETE"}, project, parts[3], "", parts[5]};
      if (parts.size() == 7 && (parts[6] == "resize" || parts[6] == "enablePooler" || parts[6] == "disablePooler" ||
                                parts[6] == "setEnvironment"))
        return Route{RouteId::ReplicaSets, sets + "/{replica_set_id}/" + parts[6], {"POST"}, project, parts[3],
                     parts[6], parts[5]};
    }
  } else if (parts[2] == "vpcs") {
    if (parts.size() == 3) return Route{RouteId::Vpcs, vpcs, {"GET", "POST"}, project, "", "", ""};
    if (parts.size() == 4) return Route{RouteId::Vpc, vpcs + "/{vpc_id}", {"GET", "DELETE"}, project, parts[3], "", ""};
    if (parts.size() == 5 && parts[4] == "rename")
      return Route{RouteId::VpcRename, vpcs + "/{vpc_id}/rename", {"POST"}, project, parts[3], "rename", ""};
    if (parts.size() == 5 && parts[4] == "peerings")
      return Route{RouteId::Peerings, vpcs + "/{vpc_id}/peerings", {"GET", "POST"}, project, parts[3], "", ""};
    if (parts.size() == 6 && parts[4] == "peerings")
      return Route{RouteId::Peerings, vpcs + "/{vpc_id}/peerings/{peering_id}", {"GET", "DELETE"}, project, parts[3],
                   "", parts[5]};
  }
  return std::nullopt;
}

}  // namespace

SimResponse Simulator::Impl::handle_locked(const SimRequest& request) {
  auto route = match_route(request.path);
  if (!route) {
    ++counts[request.method + " (unknown route)"];
    return json_error(404, "NOT_FOUND", "no route for " + request.method + " " + request.path);
  }
  const std::string route_name = request.method + " " + route->path_template;
  const long long nth = ++counts[route_name];
  last_bodies[route_name] = request.body;
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
  const auto fault = faults.route_fault(route_name, nth);
  if (fault == RouteFault::Kind::Refuse) return json_error(422, "UNPROCESSABLE", "simulated refusal of " + route_name);
  if (fault == RouteFault::Kind::EmptyList && request.method == "GET") return json_answer(200, json::array());
  SimResponse answer = dispatch(request, *route, *key);
  if (fault == RouteFault::Kind::LoseAnswer) answer.lose_answer = true;
  if (fault == RouteFault::Kind::GatewayTimeout)
    return json_error(504, "GATEWAY_TIMEOUT", "the upstream service did not answer in time");
  return answer;
}

void Simulator::set_route_faults(std::vector<RouteFault> faults) {
  std::lock_guard<std::mutex> lock(impl_->mu);
  impl_->faults.set_route_faults(std::move(faults));
}

const SimKey* Simulator::Impl::find_key(const std::string& authorization) const {
  auto presented = sim::key_from_authorization(authorization);
  if (!presented) return nullptr;
  for (const auto& candidate : config.keys) {
    if (candidate.key == *presented) return &candidate;
  }
  return nullptr;
}

SimResponse Simulator::Impl::dispatch(const SimRequest& request, const sim::Route& route, const SimKey& key) {
  const std::string& method = request.method;
  const std::string not_found = " " + route.resource_id + " not found in project " + route.project_id;
  switch (route.id) {
    case RouteId::AuthInfo:
      return json_answer(200, sim::auth_info_json(key, started_utc));
    case RouteId::Services: {
      if (method == "POST") return create_service(route.project_id, request.body);
      json list = json::array();
      for (const auto& service : services) {
        if (service.project_id == route.project_id && live(service) && listed(service.created_at))
          list.push_back(service_view(service, false));
      }
      return json_answer(200, list);
    }
    case RouteId::Service:
    case RouteId::ServiceAction:
    case RouteId::ReplicaSets: {
      sim::SimService* service = find_service(route.project_id, route.resource_id);
      if (!service) return json_error(404, "NOT_FOUND", "service" + not_found);
      if (route.id == RouteId::ReplicaSets)
        return replica_set_route(method, *service, route.child_id, route.action, request.body);
      if (route.action == "forkService") return fork_service(*service, request.body);
      if (route.id == RouteId::ServiceAction) return service_action(*service, route.action, request.body, false);
      if (method == "DELETE") return delete_service(*service);
      return json_answer(200, service_view(*service, false));
    }
    case RouteId::Vpcs: {
      if (method == "POST") return create_vpc(route.project_id, request.body);
      json list = json::array();
      for (const auto& vpc : vpcs) {
        if (vpc.project_id == route.project_id && listed(vpc.created_at)) list.push_back(vpc.fields);
      }
      return json_answer(200, list);
    }
    case RouteId::Vpc:
    case RouteId::VpcRename:
    case RouteId::Peerings: {
      if (method == "DELETE" && route.id == RouteId::Vpc) return delete_vpc(route.project_id, route.resource_id);
      sim::SimVpc* vpc = find_vpc(route.project_id, route.resource_id);
      if (!vpc) return json_error(404, "NOT_FOUND", "vpc" + not_found);
      if (route.id == RouteId::Peerings) return peering_route(method, *vpc, route.child_id, request.body);
      if (route.id == RouteId::Vpc) return json_answer(200, vpc->fields);
      const json body = parse_json(request.body);
      if (auto problem = sim::check_rename(body)) return json_error(400, "BAD_REQUEST", *problem);
      vpc->fields["name"] = body["name"];
      return json_answer(200, json{{"message", "vpc renamed"}});
    }
  }
  return json_error(500, "INTERNAL", "unhandled route");
}

SimResponse Simulator::Impl::create_service(const std::string& project_id, const std::string& body) {
  json request = parse_json(body);
  if (request.is_discarded()) return json_error(400, "BAD_REQUEST", "request body is not valid JSON");
  if (auto problem = sim::check_service_create(request)) return json_error(400, "BAD_REQUEST", *problem);
  std::string name = request["name"].get<std::string>();
  services.push_back(sim::make_service(request, project_id, new_id(false), random, clock.now(),
                                       format_utc(clock.wall_now()), sim::fate_for(config.faults, name)));
  new_database(services.back());
  return after_create(json_answer(202, service_view(services.back(), true)));
}

SimResponse Simulator::Impl::fork_service(const sim::SimService& source, const std::string& body) {
  json request = parse_json(body);
  if (request.is_discarded()) return json_error(400, "BAD_REQUEST", "request body is not valid JSON");
  if (auto problem = sim::check_fork(request)) return json_error(400, "BAD_REQUEST", *problem);
  if (const std::string status = status_of(source); status != "READY")
    return json_error(409, "CONFLICT", "service " + source.service_id + " is " + status + "; forkService needs it READY");
  const json& from = fields_of(source);
  json create = {{"name", request.value("name", source.name + "-fork")},
                 {"region_code", from["region_code"]},
                 {"environment_tag", request.value("environment_tag", std::string("DEV"))}};
  if (from["service_type"] == "TIMESCALEDB") create["addons"] = {"time-series"};
  const json& spec = from["resources"][0]["spec"];
  for (const char* field : {"cpu_millis", "memory_gbs"})
    create[field] = request.contains(field) ? request[field] : json(std::to_string(spec[field].get<long long>()));
  const std::string name = create["name"];
  // `source` lives in `services`: what is needed of it is copied before another is added.
  const json forked_from = {{"project_id", source.project_id}, {"service_id", source.service_id}};
  services.push_back(sim::make_service(create, source.project_id, new_id(false), random, clock.now(),
                                       format_utc(clock.wall_now()), sim::fate_for(config.faults, name)));
  services.back().fields["forked_from"] = forked_from;
  new_database(services.back(), forked_from["service_id"]);
  return after_create(json_answer(202, service_view(services.back(), true)));
}

SimResponse Simulator::Impl::create_vpc(const std::string& project_id, const std::string& body) {
  json request = parse_json(body);
  if (request.is_discarded()) return json_error(400, "BAD_REQUEST", "request body is not valid JSON");
  if (auto problem = sim::check_vpc_create(request)) return json_error(400, "BAD_REQUEST", *problem);
  vpcs.push_back(sim::make_vpc(request, project_id, new_id(true), clock.now()));
  return after_create(json_answer(201, vpcs.back().fields));
}

namespace {

// The console's resize takes numbers as well as the API's digit strings.
std::optional<std::string> console_resize_body(json& request) {
  for (const char* field : {"cpu_millis", "memory_gbs"})
    if (request.is_object() && request.contains(field) && request[field].is_number_integer())
      request[field] = std::to_string(request[field].get<long long>());
  return sim::check_resize(request);
}

}  // namespace

SimResponse Simulator::Impl::service_action(sim::SimService& service, const std::string& action,
                                            const std::string& body, bool console) {
  const bool no_body = action == "enablePooler" || action == "disablePooler" || action == "delete" ||
                       action == "stop" || action == "start";
  json request = no_body || body.empty() ? json::object() : parse_json(body);
  if (request.is_discarded()) return json_error(400, "BAD_REQUEST", "request body is not valid JSON");
  if (service.upgraded && clock.now() >= service.upgrade_done) {  // fold a finished upgrade in
    service.fields = std::move(*service.upgraded);
    service.upgraded.reset();
  }
  const std::string status = status_of(service);
  // Only a READY service takes calls; a PAUSED one only start (and a new password or name).
  const std::string needed = action == "start" ? "PAUSED" : "READY";
  const bool any_settled = action == "rename" && status == "PAUSED";
  if (!console && action != "updatePassword" && status != needed && !any_settled)
    return json_error(409, "CONFLICT", "service " + service.service_id + " is " + status + "; " + action +
                                           " needs it " + needed);
  if (action == "updatePassword") {  // UpdatePasswordInput: a non-empty password; 204, no body
    if (!request.is_object() || !request.contains("password") || !request["password"].is_string() ||
        request["password"].get<std::string>().empty())
      return json_error(400, "BAD_REQUEST", "the body must be {\"password\": \"...\"} with a non-empty password");
    service.initial_password = request["password"].get<std::string>();
    if (databases) databases->set_password(service.service_id, service.initial_password);
    SimResponse response;
    response.status = 204;
    return response;
  }
  if (action == "delete") {
    if (databases && !service.gone_at) databases->remove(service.service_id);
    service.gone_at = clock.now();
    return json_answer(200, message("deleted"));
  }
  if (action == "stop" || action == "start") {  // 202 with the Service: PAUSING or RESUMING for a while
    service.paused = action == "stop";
    if (databases) action == "stop" ? databases->stop(service.service_id) : databases->start(service.service_id);
    service.pause_done = console ? clock.now() : clock.now() + config.upgrading_delay;
    return json_answer(console ? 200 : 202, service_view(service, false));
  }
  if (action == "rename") {  // 200 with the Service
    if (auto problem = sim::check_rename(request)) return json_error(400, "BAD_REQUEST", *problem);
    service.name = request["name"].get<std::string>();
    service.fields["name"] = service.name;
    if (service.upgraded) (*service.upgraded)["name"] = service.name;
    return json_answer(200, service_view(service, false));
  }
  json next = service.fields;
  bool async = false;
  std::optional<std::string> problem;
  if (action == "resize") {
    problem = console ? console_resize_body(request) : sim::check_resize(request);
    if (!problem) {
      json& spec = next["resources"][0]["spec"];
      spec["cpu_millis"] = std::stoll(request["cpu_millis"].get<std::string>());
      spec["memory_gbs"] = std::stoll(request["memory_gbs"].get<std::string>());
    }
    async = true;
  } else if (action == "setEnvironment") {
    problem = sim::check_set_environment(request);
    if (!problem) next["metadata"]["environment"] = request["environment"];
  } else if (action == "setHA") {
    problem = sim::check_set_ha(request);
    if (!problem) {
      for (const char* field : {"replica_count", "sync_replica_count"})
        if (request.contains(field)) next["ha_replicas"][field] = request[field];
      const json& ha = next["ha_replicas"];
      if (ha.value("sync_replica_count", 0LL) > ha.value("replica_count", 0LL))
        problem = "sync_replica_count " + dump_json(ha["sync_replica_count"]) + " is more than replica_count " +
                  dump_json(ha.value("replica_count", json(0)));
    }
    async = true;
  } else if (action == "attachToVPC" || action == "detachFromVPC") {
    problem = sim::check_vpc_attachment(request);
    if (problem) return json_error(400, "BAD_REQUEST", *problem);
    const std::string vpc_id = request["vpc_id"].get<std::string>();
    const std::string attached = next.contains("vpc_endpoint") ? next["vpc_endpoint"].value("vpc_id", "") : "";
    if (!find_vpc(service.project_id, vpc_id))
      return json_error(404, "NOT_FOUND", "vpc " + vpc_id + " not found in project " + service.project_id);
    if (action == "attachToVPC") {
      if (!attached.empty() && attached != vpc_id)
        return json_error(409, "CONFLICT", "service " + service.service_id + " is attached to vpc " + attached +
                                               "; detach it first");
      next["vpc_endpoint"] = {{"host", service.service_id + ".vpc-" + vpc_id + ".tsdb.sim.local"},
                              {"port", 5432},
                              {"vpc_id", vpc_id}};
    } else {
      if (attached != vpc_id)
        return json_error(409, "CONFLICT", "service " + service.service_id + " is not attached to vpc " + vpc_id);
      next.erase("vpc_endpoint");
    }
    async = true;
  } else if (action == "enablePooler") {
    if (!next.contains("connection_pooler")) next["connection_pooler"] = pooler_of(service.service_id, next);
  } else if (action == "disablePooler") {
    if (databases && next.contains("connection_pooler")) databases->disable_pooler(service.service_id);
    next.erase("connection_pooler");
  } else {
    return json_error(404, "NOT_FOUND", "no such action: " + action);
  }
  if (problem) return json_error(400, "BAD_REQUEST", *problem);
  if (async && !console) {
    service.upgraded = std::move(next);
    service.upgrade_done = clock.now() + config.upgrading_delay;
  } else {
    service.fields = std::move(next);
  }
  if (console) return json_answer(200, service_view(service, false));
  // ResizeService and SetHAReplica answer the Service; attach and detach a SuccessMessage (202);
  // setEnvironment and the pooler a SuccessMessage (200).
  if (action == "resize" || action == "setHA") return json_answer(202, service_view(service, false));
  return json_answer(async ? 202 : 200, message(action + " accepted"));
}

SimResponse Simulator::Impl::delete_service(sim::SimService& service) {
  if (has_live_replica_sets(service))
    return json_error(409, "CONFLICT", "service " + service.service_id + " has read replica sets; delete them first");
  if (!service.gone_at) {
    service.gone_at = clock.now() + config.deleting_delay;
    if (databases) databases->remove(service.service_id);
  }
  return json_answer(202, message("delete accepted"));
}

SimResponse Simulator::Impl::delete_vpc(const std::string& project_id, const std::string& vpc_id) {
  if (!find_vpc(project_id, vpc_id))
    return json_error(404, "NOT_FOUND", "vpc " + vpc_id + " not found in project " + project_id);
  for (const auto& service : services) {
    const json& fields = fields_of(service);
    if (live(service) && fields.contains("vpc_endpoint") && fields["vpc_endpoint"].value("vpc_id", "") == vpc_id)
      return json_error(409, "CONFLICT", "vpc " + vpc_id + " has service " + service.service_id +
                                             " attached; detach it first");
  }
  for (const auto& peering : peerings)
    if (peering.project_id == project_id && peering.vpc_id == vpc_id && !peering_gone(peering))
      return json_error(409, "CONFLICT", "vpc " + vpc_id + " has peering " + peering.fields["id"].get<std::string>() +
                                             "; delete it first");
  vpcs.erase(std::remove_if(vpcs.begin(), vpcs.end(),
                            [&](const sim::SimVpc& v) { return v.project_id == project_id && v.fields["id"] == vpc_id; }),
             vpcs.end());
  SimResponse response;
  response.status = 204;
  return response;
}

sim::SimService* Simulator::Impl::find_service(const std::string& project_id, const std::string& service_id) {
  for (auto& service : services)
    if (service.project_id == project_id && service.service_id == service_id && live(service)) return &service;
  return nullptr;
}

sim::SimVpc* Simulator::Impl::find_vpc(const std::string& project_id, const std::string& vpc_id) {
  for (auto& vpc : vpcs)
    if (vpc.project_id == project_id && vpc.fields["id"] == vpc_id) return &vpc;
  return nullptr;
}

const json& Simulator::Impl::fields_of(const sim::SimService& service) const {
  return service.upgraded && clock.now() >= service.upgrade_done ? *service.upgraded : service.fields;
}

std::string Simulator::Impl::status_of(const sim::SimService& service) const {
  const std::string status = timeline_status(service);
  if (!databases || databases->settled(service.service_id)) return status;
  if (status == "READY") return service.pause_done == Clock::TimePoint{} ? "CONFIGURING" : "RESUMING";
  if (status == "PAUSED") return "PAUSING";
  return status;
}

json Simulator::Impl::pooler_of(const std::string& id, const json& fields) {
  if (!databases)
    return {{"endpoint", {{"host", fields["endpoint"].value("host", "")}, {"port", random.between(30000, 39999)}}}};
  // Under --postgres the endpoint is served: it reaches the database's server.
  const int port = databases->reserve_port();
  databases->enable_pooler(id, port);
  return {{"endpoint", {{"host", databases->host()}, {"port", port}}}};
}

void Simulator::Impl::new_database(sim::SimService& service, const std::string& fork_of) {
  if (!databases) return;
  const int port = databases->reserve_port();
  service.fields["endpoint"] = {{"host", databases->host()}, {"port", port}};
  if (fork_of.empty()) databases->create(service.service_id, port, service.initial_password);
  else databases->fork(service.service_id, port, fork_of, service.initial_password);
}

std::string Simulator::Impl::timeline_status(const sim::SimService& service) const {
  if (service.gone_at) return "DELETING";
  if (service.upgraded && clock.now() < service.upgrade_done) return "UPGRADING";
  if (service.paused) return clock.now() < service.pause_done ? "PAUSING" : "PAUSED";
  if (clock.now() < service.pause_done) return "RESUMING";
  auto age = std::chrono::duration_cast<Duration>(clock.now() - service.created_at);
  return sim::status_at(service.fate, age, config);
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
  json out = fields_of(service);
  out["status"] = status_of(service);
  if (with_password) out["initial_password"] = service.initial_password;
  // Hosts as a hostile or broken API might send them.
  if (!config.faults.endpoint_host.empty() && out.contains("endpoint") && out["endpoint"].is_object())
    out["endpoint"]["host"] = config.faults.endpoint_host;
  if (!config.faults.vpc_endpoint_host.empty() && out.contains("vpc_endpoint") && out["vpc_endpoint"].is_object())
    out["vpc_endpoint"]["host"] = config.faults.vpc_endpoint_host;
  if (config.faults.echo_password_in_details) {
    out["metadata"]["details"] = "created for tsdbadmin with password " + service.initial_password;
    if (out.contains("connection_pooler") && out["connection_pooler"].is_object())
      out["connection_pooler"]["details"] = "postgres://tsdbadmin:" + service.initial_password + "@pooler";
  }
  return out;
}

// Service ids look like the vendor's ("kd9w2xp4mz"); VPC ids are numeric strings ("1234567890").
std::string Simulator::Impl::new_id(bool numeric) {
  while (true) {
    std::string id = numeric ? std::to_string(random.between(1'000'000'000LL, 9'999'999'999LL)) : random.lower_alnum(10);
    if (ids_in_use.insert(id).second) return id;
  }
}

Simulator::Simulator(SimConfig config, Clock& clock, SimDatabases* databases)
    : impl_(std::make_unique<Impl>(std::move(config), clock, databases)) {}

Simulator::~Simulator() = default;

SimResponse Simulator::handle(const SimRequest& request) {
  // Latency is spent outside the lock so that slow answers overlap, as they do on a real server.
  if (impl_->config.faults.latency.count() > 0) impl_->clock.sleep_for(impl_->config.faults.latency);
  SimResponse response;
  {
    std::lock_guard<std::mutex> lock(impl_->mu);
    response = impl_->faults.shape(impl_->handle_locked(request), request);
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
  for (const auto& service : impl_->services)
    if (impl_->live(service)) list.push_back(impl_->service_view(service, false));
  return list;
}

std::string Simulator::last_body(const std::string& route) const {
  std::lock_guard<std::mutex> lock(impl_->mu);
  auto found = impl_->last_bodies.find(route);
  return found == impl_->last_bodies.end() ? "" : found->second;
}

const std::vector<std::string>& Simulator::served_calls() {
  static const std::vector<std::string> calls = make_served_calls();
  return calls;
}

SimResponse Simulator::console(const std::string& service_id, const std::string& action, const std::string& body) {
  std::lock_guard<std::mutex> lock(impl_->mu);
  for (auto& service : impl_->services)
    if (service.service_id == service_id && impl_->live(service))
      return impl_->service_action(service, action, body, true);
  return sim::json_error(404, "NOT_FOUND", "service " + service_id + " not found");
}

SimResponse Simulator::console_create(const std::string& project_id, const std::string& kind,
                                      const std::string& body) {
  std::lock_guard<std::mutex> lock(impl_->mu);
  json request = parse_json(body);
  if (request.is_discarded()) return sim::json_error(400, "BAD_REQUEST", "request body is not valid JSON");
  // Created long enough ago to be READY and listed now.
  const auto long_ago = impl_->clock.now() - impl_->config.queued_delay - impl_->config.configuring_delay -
                        impl_->config.faults.list_lag;
  if (kind == "vpcs") {
    if (auto problem = sim::check_vpc_create(request)) return sim::json_error(400, "BAD_REQUEST", *problem);
    impl_->vpcs.push_back(sim::make_vpc(request, project_id, impl_->new_id(true), long_ago));
    return json_answer(201, impl_->vpcs.back().fields);
  }
  if (auto problem = sim::check_service_create(request)) return sim::json_error(400, "BAD_REQUEST", *problem);
  impl_->services.push_back(sim::make_service(request, project_id, impl_->new_id(false), impl_->random, long_ago,
                                              format_utc(impl_->clock.wall_now()), sim::ServiceFate::Normal));
  impl_->new_database(impl_->services.back());
  return json_answer(201, impl_->service_view(impl_->services.back(), true));
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
