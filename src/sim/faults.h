#pragma once
// Fault injection and the status timeline of a simulated service. Internal to the simulator.
#include <map>
#include <optional>
#include <string>

#include "sim/random_source.h"
#include "sim/simulator.h"

namespace dbform::sim {

SimResponse json_error(int status, const std::string& code, const std::string& message);

// What the faults decided for a service at its creation, from its name.
enum class ServiceFate { Normal, Stuck, Deleted, Unstable };

// Shell-style glob (*, ?, [..]) as in the `stuck`/`deleted`/`unstable` lists.
bool glob_match(const std::string& pattern, const std::string& name);

// The first list that matches decides, in the order stuck, deleted, unstable.
ServiceFate fate_for(const SimFaults& faults, const std::string& service_name);

// Status `age` after the create:
//   Normal:   QUEUED (queued_delay) -> CONFIGURING (configuring_delay) -> READY
//   Stuck:    QUEUED -> CONFIGURING forever
//   Deleted:  QUEUED -> CONFIGURING -> DELETED
//   Unstable: QUEUED -> CONFIGURING -> UNSTABLE (another configuring_delay) -> READY
std::string status_at(ServiceFate fate, Duration age, const SimConfig& config);

// The per-call faults. Not thread-safe: the Simulator calls it under its lock, in arrival order,
// which is what makes a seeded run repeat.
class FaultInjector {
 public:
  FaultInjector(SimFaults faults, unsigned seed);

  // Called once for every API call (a known route and method) before anything else is done.
  // Returns the answer that replaces the call (429 or 500), or nullopt to let it through.
  std::optional<SimResponse> intercept_call();

  // The route fault for the `nth` call of `route`, if one applies.
  std::optional<RouteFault::Kind> route_fault(const std::string& route, long long nth);
  void set_route_faults(std::vector<RouteFault> faults) { faults_.routes = std::move(faults); }

  // Called after each create that was performed: what happens to its answer.
  enum class CreateFault { None, DropAfterHeaders, LoseAnswer, GatewayTimeout };
  CreateFault after_create();

  // A copy of `answer` to `request` as the faults would have it leave (garbled error bodies,
  // hostile answers).
  SimResponse shape(SimResponse answer, const SimRequest& request);

  // How often each fault was injected, by name.
  const std::map<std::string, long long>& injected() const { return injected_; }

 private:
  SimFaults faults_;
  std::map<std::string, long long> injected_;
  RandomSource random_;
  long long calls_ = 0;
  long long creates_ = 0;
  long long reads_ = 0;
};

}  // namespace dbform::sim
