#pragma once
// The simulated services and VPCs, and their JSON as the vendor's document shapes it. Internal to
// the simulator.
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "sim/faults.h"
#include "sim/random_source.h"
#include "util/clock.h"

namespace dbform::sim {

struct SimService {
  std::string project_id;
  std::string service_id;
  std::string name;
  std::string initial_password;
  Clock::TimePoint created_at;
  ServiceFate fate = ServiceFate::Normal;
  nlohmann::json fields;  // the Service object without `status` and `initial_password`
  // An asynchronous update in progress (resize, setHA, attach, detach): until `upgrade_done` the
  // service shows UPGRADING with its old fields, then READY with these.
  std::optional<nlohmann::json> upgraded;
  Clock::TimePoint upgrade_done{};
  // Stopped (stop) or running (start): PAUSING or RESUMING until `pause_done`, then PAUSED or as
  // before.
  bool paused = false;
  Clock::TimePoint pause_done{};
  // A delete in progress: DELETING until `gone_at`, then 404 and absent from lists.
  std::optional<Clock::TimePoint> gone_at;
};

struct SimVpc {
  std::string project_id;
  Clock::TimePoint created_at;
  nlohmann::json fields;  // the Vpc object
};

// A read replica set of a service. Its status follows the service timeline of its fate: creating
// while a service would be QUEUED, CONFIGURING or UNSTABLE, then active (error where a service
// would end DELETED); resizing for a while after a resize; deleting until it is gone.
struct SimReplicaSet {
  std::string project_id;
  std::string service_id;  // its primary
  Clock::TimePoint created_at;
  ServiceFate fate = ServiceFate::Normal;
  nlohmann::json fields;  // the ReadReplicaSet object without `status`
  std::optional<nlohmann::json> resized;  // a resize in progress: these fields from `resize_done` on
  Clock::TimePoint resize_done{};
  std::optional<Clock::TimePoint> gone_at;  // a delete: deleting until then, then gone
};

// A VPC peering: `pending` until the console accepts it (active) or fails it (with its message).
struct SimPeering {
  std::string project_id;
  std::string vpc_id;
  Clock::TimePoint created_at;
  nlohmann::json fields;  // the Peering object
  std::optional<Clock::TimePoint> gone_at;  // a delete of a lingering peering: deleting until then, then gone
};

// A new service from a ServiceCreate body that check_service_create() accepted. `service_id` is
// chosen by the caller, who knows which ids are taken.
SimService make_service(const nlohmann::json& request, const std::string& project_id, const std::string& service_id,
                        RandomSource& random, Clock::TimePoint created_at, const std::string& created_utc,
                        ServiceFate fate);

SimVpc make_vpc(const nlohmann::json& request, const std::string& project_id, const std::string& vpc_id,
               Clock::TimePoint created_at);

// From a ReadReplicaSetCreate body that check_replica_set_create() accepted, of `service`.
SimReplicaSet make_replica_set(const nlohmann::json& request, const SimService& service, const std::string& set_id,
                               RandomSource& random, Clock::TimePoint created_at, ServiceFate fate);

// From a PeeringCreate body that check_peering_create() accepted.
SimPeering make_peering(const nlohmann::json& request, const std::string& project_id, const std::string& vpc_id,
                        const std::string& peering_id, RandomSource& random, Clock::TimePoint created_at);

}  // namespace dbform::sim
