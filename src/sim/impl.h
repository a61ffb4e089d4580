#pragma once
// The simulator's state and handlers, shared by simulator.cpp (services, VPCs, routing) and
// nested.cpp (read replica sets and peerings). Internal to the simulator.
#include <map>
#include <mutex>
#include <set>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "sim/faults.h"
#include "sim/resources.h"
#include "sim/simulator.h"
#include "util/json_limits.h"

namespace dbform {

using nlohmann::json;

namespace sim {

enum class RouteId { AuthInfo, Services, Service, ServiceAction, ReplicaSets, Vpcs, Vpc, VpcRename, Peerings };

// One API route a request matched, with the ids in its path.
struct Route {
  RouteId id;
  std::string path_template;  // as counted: "/projects/{project_id}/services"
  std::vector<std::string> methods;
  std::string project_id;
  std::string resource_id;  // service_id or vpc_id
  std::string action;       // ServiceAction: "resize", ...; ReplicaSets: the replica set's call
  std::string child_id;     // ReplicaSets, Peerings: the replica set or peering, "" for the list
};

}  // namespace sim

// The body of a console answer that only says something: {"message": TEXT}.
inline json message(const std::string& text) { return json{{"message", text}}; }

inline SimResponse json_answer(int status, const json& body) {
  SimResponse response;
  response.status = status;
  response.body = dump_json(body);
  return response;
}

struct Simulator::Impl {
  Impl(SimConfig c, Clock& clk, SimDatabases* dbs)
      : config(std::move(c)), clock(clk), databases(dbs), started_utc(format_utc(clk.wall_now())),
        faults(config.faults, config.seed), random(config.seed, 2) {}

  SimConfig config;
  Clock& clock;
  SimDatabases* databases;  // null: no database behind the services
  std::string started_utc;  // when the keys were "created"

  mutable std::mutex mu;  // guards everything below
  sim::FaultInjector faults;
  sim::RandomSource random;  // ids, ports and passwords
  std::vector<sim::SimService> services;  // in creation order, all projects
  std::vector<sim::SimVpc> vpcs;
  std::vector<sim::SimReplicaSet> replica_sets;  // deleted ones stay, gone (see live())
  std::vector<sim::SimPeering> peerings;
  std::set<std::string> ids_in_use;
  std::map<std::string, long long> counts;
  std::map<std::string, std::string> last_bodies;  // route -> the body of its last request

  SimResponse handle_locked(const SimRequest& request);
  const SimKey* find_key(const std::string& authorization) const;  // nullptr: missing or unknown
  SimResponse dispatch(const SimRequest& request, const sim::Route& route, const SimKey& key);
  SimResponse create_service(const std::string& project_id, const std::string& body);
  SimResponse create_vpc(const std::string& project_id, const std::string& body);
  // A new service from a READY one: its type and region, the declared (else its) sizes, no HA.
  SimResponse fork_service(const sim::SimService& source, const std::string& body);
  SimResponse after_create(SimResponse answer);
  // A service action on a service, from the API (`console` false: only when READY, asynchronous
  // ones through UPGRADING) or from the console (at once, whatever the status).
  SimResponse service_action(sim::SimService& service, const std::string& action, const std::string& body,
                             bool console);
  SimResponse delete_service(sim::SimService& service);
  SimResponse delete_vpc(const std::string& project_id, const std::string& vpc_id);
  // .../services/{service_id}/replicaSets[/{replica_set_id}[/{action}]] (nested.cpp).
  SimResponse replica_set_route(const std::string& method, sim::SimService& service, const std::string& set_id,
                                const std::string& action, const std::string& body);
  // A replica set's call, from the API (`console` false: only when active, a resize through
  // resizing) or from the console (at once); `delete` too.
  SimResponse replica_set_action(sim::SimReplicaSet& set, const std::string& action, const std::string& body,
                                 bool console);
  // .../vpcs/{vpc_id}/peerings[/{peering_id}] (nested.cpp).
  SimResponse peering_route(const std::string& method, const sim::SimVpc& vpc, const std::string& peering_id,
                            const std::string& body);
  bool live(const sim::SimReplicaSet& set) const { return !set.gone_at || clock.now() < *set.gone_at; }
  std::string status_of(const sim::SimReplicaSet& set) const;
  json replica_set_view(const sim::SimReplicaSet& set) const;
  bool has_live_replica_sets(const sim::SimService& service) const;
  sim::SimService* find_service(const std::string& project_id, const std::string& service_id);  // live ones only
  sim::SimVpc* find_vpc(const std::string& project_id, const std::string& vpc_id);
  bool live(const sim::SimService& service) const { return !service.gone_at || clock.now() < *service.gone_at; }
  // The fields as they are now: a finished upgrade's, else the current ones.
  const json& fields_of(const sim::SimService& service) const;
  // The status the API shows: the timeline's, held back while a database behind it has not settled.
  std::string status_of(const sim::SimService& service) const;
  std::string timeline_status(const sim::SimService& service) const;
  // With databases: a new one behind `service` (a copy of `fork_of`'s when given), its endpoint.
  void new_database(sim::SimService& service, const std::string& fork_of = "");
  // The `connection_pooler` an enablePooler gives the service or replica set `id` (its `fields`):
  // with databases, a port that reaches its server; without, a port nothing listens on.
  json pooler_of(const std::string& id, const json& fields);
  bool listed(Clock::TimePoint created_at) const;
  json service_view(const sim::SimService& service, bool with_password) const;
  // A lingering peering whose deletion is done (SimFaults::peerings_linger).
  bool peering_gone(const sim::SimPeering& peering) const;
  std::string new_id(bool numeric);
};


}  // namespace dbform
