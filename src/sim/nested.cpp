// The resources that live inside others: a service's read replica sets and a VPC's peerings,
// as the vendor's document shapes them.
#include <algorithm>

#include "sim/impl.h"
#include "sim/validation.h"
#include "util/json_limits.h"

namespace dbform {

namespace {

using sim::json_error;

// The calls on one replica set after .../replicaSets/{replica_set_id}/.
bool is_replica_set_action(const std::string& action) {
  return action == "resize" || action == "enablePooler" || action == "disablePooler" || action == "setEnvironment";
}

}  // namespace

std::string Simulator::Impl::status_of(const sim::SimReplicaSet& set) const {
  if (set.gone_at) return "deleting";
  if (set.resized && clock.now() < set.resize_done) return "resizing";
  const std::string service = sim::status_at(set.fate, std::chrono::duration_cast<Duration>(clock.now() - set.created_at),
                                             config);
  if (service == "READY") return databases && !databases->settled(set.fields["id"].get<std::string>()) ? "creating" : "active";
  if (service == "DELETED") return "error";
  return "creating";
}

json Simulator::Impl::replica_set_view(const sim::SimReplicaSet& set) const {
  json out = set.resized && clock.now() >= set.resize_done ? *set.resized : set.fields;
  out["status"] = status_of(set);
  if (config.faults.echo_password_in_details)
    for (const auto& service : services)
      if (service.service_id == set.service_id) {
        out["metadata"]["details"] = "replica of a service with password " + service.initial_password;
        if (out.contains("connection_pooler") && out["connection_pooler"].is_object())
          out["connection_pooler"]["details"] = "postgres://tsdbadmin:" + service.initial_password + "@pooler";
      }
  return out;
}

bool Simulator::Impl::peering_gone(const sim::SimPeering& peering) const {
  return peering.gone_at && clock.now() >= *peering.gone_at;
}

bool Simulator::Impl::has_live_replica_sets(const sim::SimService& service) const {
  return std::any_of(replica_sets.begin(), replica_sets.end(), [&](const sim::SimReplicaSet& set) {
    return set.service_id == service.service_id && live(set);
  });
}

SimResponse Simulator::Impl::replica_set_route(const std::string& method, sim::SimService& service,
                                               const std::string& set_id, const std::string& action,
                                               const std::string& body) {
  if (set_id.empty() && method == "GET") {  // getReplicaSets: 200, ReadReplicaSet[]
    json list = json::array();
    for (const auto& set : replica_sets)
      if (set.service_id == service.service_id && live(set) && listed(set.created_at)) list.push_back(replica_set_view(set));
    return json_answer(200, list);
  }
  if (set_id.empty()) {  // createReplicaSet: 202, ReadReplicaSet; the primary must be READY
    json request = parse_json(body);
    if (request.is_discarded()) return json_error(400, "BAD_REQUEST", "request body is not valid JSON");
    if (auto problem = sim::check_replica_set_create(request)) return json_error(400, "BAD_REQUEST", *problem);
    if (const std::string status = status_of(service); status != "READY")
      return json_error(409, "CONFLICT", "service " + service.service_id + " is " + status +
                                             "; a read replica set needs it READY");
    const std::string name = request["name"];
    replica_sets.push_back(sim::make_replica_set(request, service, new_id(false), random, clock.now(),
                                                 sim::fate_for(config.faults, name)));
    if (databases) {  // a streaming standby of the service behind the set's endpoint
      sim::SimReplicaSet& set = replica_sets.back();
      const int port = databases->reserve_port();
      set.fields["endpoint"] = {{"host", databases->host()}, {"port", port}};
      databases->replica(set.fields["id"].get<std::string>(), port, service.service_id);
    }
    return after_create(json_answer(202, replica_set_view(replica_sets.back())));
  }
  auto set = std::find_if(replica_sets.begin(), replica_sets.end(), [&](const sim::SimReplicaSet& s) {
    return s.service_id == service.service_id && s.fields["id"] == set_id && live(s);
  });
  if (set == replica_sets.end())
    return json_error(404, "NOT_FOUND", "replica set " + set_id + " not found for service " + service.service_id);
  return replica_set_action(*set, method == "DELETE" ? "delete" : action, body, false);
}

SimResponse Simulator::Impl::replica_set_action(sim::SimReplicaSet& set, const std::string& action,
                                                const std::string& body, bool console) {
  if (action == "delete") {  // 202; deleting for a while, then gone
    if (databases && !set.gone_at) databases->remove(set.fields["id"].get<std::string>());
    if (!set.gone_at) set.gone_at = clock.now() + (console ? Duration(0) : config.deleting_delay);
    return json_answer(console ? 200 : 202, message("delete accepted"));
  }
  if (!is_replica_set_action(action)) return json_error(404, "NOT_FOUND", "no such action: " + action);
  if (set.resized && clock.now() >= set.resize_done) {  // fold a finished resize in
    set.fields = std::move(*set.resized);
    set.resized.reset();
  }
  const std::string status = status_of(set);
  if (!console && status != "active")
    return json_error(409, "CONFLICT", "replica set " + set.fields["id"].get<std::string>() + " is " + status + "; " +
                                           action + " needs it active");
  const bool no_body = action == "enablePooler" || action == "disablePooler";
  json request = no_body || body.empty() ? json::object() : parse_json(body);
  if (request.is_discarded()) return json_error(400, "BAD_REQUEST", "request body is not valid JSON");
  json next = set.fields;
  if (action == "resize") {  // ResizeInput: digit strings (the create takes integers)
    if (console)
      for (const char* field : {"cpu_millis", "memory_gbs"})
        if (request.is_object() && request.contains(field) && request[field].is_number_integer())
          request[field] = std::to_string(request[field].get<long long>());
    if (auto problem = sim::check_resize(request)) return json_error(400, "BAD_REQUEST", *problem);
    next["cpu_millis"] = std::stoll(request["cpu_millis"].get<std::string>());
    next["memory_gbs"] = std::stoll(request["memory_gbs"].get<std::string>());
  } else if (action == "setEnvironment") {
    if (auto problem = sim::check_set_environment(request)) return json_error(400, "BAD_REQUEST", *problem);
    next["metadata"]["environment"] = request["environment"];
  } else if (action == "enablePooler") {
    if (!next.contains("connection_pooler")) next["connection_pooler"] = pooler_of(next["id"].get<std::string>(), next);
  } else {
    if (databases && next.contains("connection_pooler")) databases->disable_pooler(next["id"].get<std::string>());
    next.erase("connection_pooler");
  }
  if (action == "resize" && !console) {  // 202, SuccessMessage; resizing for a while
    set.resized = std::move(next);
    set.resize_done = clock.now() + config.upgrading_delay;
    return json_answer(202, message("resize accepted"));
  }
  set.fields = std::move(next);
  return json_answer(200, console ? replica_set_view(set) : message(action + " accepted"));
}

SimResponse Simulator::Impl::peering_route(const std::string& method, const sim::SimVpc& vpc,
                                           const std::string& peering_id, const std::string& body) {
  const std::string vpc_id = vpc.fields["id"];
  if (peering_id.empty() && method == "GET") {  // getVPCPeerings: 200, Peering[]
    json list = json::array();
    for (const auto& peering : peerings)
      if (peering.project_id == vpc.project_id && peering.vpc_id == vpc_id && listed(peering.created_at) &&
          !peering_gone(peering))
        list.push_back(peering.fields);
    return json_answer(200, list);
  }
  if (peering_id.empty()) {  // createVPCPeering: 201, Peering (pending until the peer accepts)
    json request = parse_json(body);
    if (request.is_discarded()) return json_error(400, "BAD_REQUEST", "request body is not valid JSON");
    if (auto problem = sim::check_peering_create(request)) return json_error(400, "BAD_REQUEST", *problem);
    peerings.push_back(sim::make_peering(request, vpc.project_id, vpc_id, new_id(true), random, clock.now()));
    return after_create(json_answer(201, peerings.back().fields));
  }
  auto peering = std::find_if(peerings.begin(), peerings.end(), [&](const sim::SimPeering& p) {
    return p.project_id == vpc.project_id && p.vpc_id == vpc_id && p.fields["id"] == peering_id && !peering_gone(p);
  });
  if (peering == peerings.end())
    return json_error(404, "NOT_FOUND", "peering " + peering_id + " not found for vpc " + vpc_id);
  if (method == "GET") return json_answer(200, peering->fields);
  // deleteVPCPeering: 204; gone at once, or (peerings_linger) deleting for a while first.
  if (!config.faults.peerings_linger) peerings.erase(peering);
  else if (!peering->gone_at) {
    peering->gone_at = clock.now() + config.deleting_delay;
    peering->fields["status"] = "deleting";
  }
  SimResponse response;
  response.status = 204;
  return response;
}

SimResponse Simulator::console_nested(const std::string& kind, const std::string& id, const std::string& action,
                                      const std::string& body) {
  std::lock_guard<std::mutex> lock(impl_->mu);
  if (kind == "replica_sets") {
    for (auto& set : impl_->replica_sets)
      if (set.fields["id"] == id && impl_->live(set)) return impl_->replica_set_action(set, action, body, true);
    return sim::json_error(404, "NOT_FOUND", "replica set " + id + " not found");
  }
  for (auto& peering : impl_->peerings) {
    if (peering.fields["id"] != id || impl_->peering_gone(peering)) continue;
    if (action == "accept") {
      peering.fields["status"] = "active";
      peering.fields.erase("error_message");
    } else if (action == "fail") {
      const json request = parse_json(body);
      peering.fields["status"] = "failed";
      peering.fields["error_message"] =
          request.is_object() && request.contains("error_message") ? request["error_message"] : json("peer VPC not found");
    } else {
      return sim::json_error(404, "NOT_FOUND", "no such console action on a peering: " + action);
    }
    return json_answer(200, peering.fields);
  }
  return sim::json_error(404, "NOT_FOUND", "peering " + id + " not found");
}

json Simulator::all_replica_sets() const {
  std::lock_guard<std::mutex> lock(impl_->mu);
  json list = json::array();
  for (const auto& set : impl_->replica_sets) {
    if (!impl_->live(set)) continue;
    json view = impl_->replica_set_view(set);
    view["service_id"] = set.service_id;  // not in the API's ReadReplicaSet: a debug view spans services
    list.push_back(view);
  }
  return list;
}

json Simulator::all_peerings() const {
  std::lock_guard<std::mutex> lock(impl_->mu);
  json list = json::array();
  for (const auto& peering : impl_->peerings) {
    if (impl_->peering_gone(peering)) continue;
    json view = peering.fields;
    view["vpc_id"] = peering.vpc_id;  // not in the API's Peering: a debug view spans VPCs
    list.push_back(view);
  }
  return list;
}

}  // namespace dbform
