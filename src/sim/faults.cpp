#include "sim/faults.h"

#include <fnmatch.h>

#include <nlohmann/json.hpp>

namespace dbform::sim {

SimResponse json_error(int status, const std::string& code, const std::string& message) {
  SimResponse response;
  response.status = status;
  response.body = nlohmann::json{{"code", code}, {"message", message}}.dump();
  return response;
}

bool glob_match(const std::string& pattern, const std::string& name) {
  return fnmatch(pattern.c_str(), name.c_str(), 0) == 0;
}

namespace {

bool any_match(const std::vector<std::string>& patterns, const std::string& name) {
  for (const auto& pattern : patterns) {
    if (glob_match(pattern, name)) return true;
  }
  return false;
}

}  // namespace

ServiceFate fate_for(const SimFaults& faults, const std::string& service_name) {
  if (any_match(faults.stuck, service_name)) return ServiceFate::Stuck;
  if (any_match(faults.deleted, service_name)) return ServiceFate::Deleted;
  if (any_match(faults.unstable, service_name)) return ServiceFate::Unstable;
  return ServiceFate::Normal;
}

std::string status_at(ServiceFate fate, Duration age, const SimConfig& config) {
  if (age < config.queued_delay) return "QUEUED";
  Duration configured_at = config.queued_delay + config.configuring_delay;
  if (age < configured_at || fate == ServiceFate::Stuck) return "CONFIGURING";
  if (fate == ServiceFate::Deleted) return "DELETED";
  if (fate == ServiceFate::Unstable && age < configured_at + config.configuring_delay) return "UNSTABLE";
  return "READY";
}

// Stream 1 of the seed: the service ids and passwords use stream 2 (see simulator.cpp).
FaultInjector::FaultInjector(SimFaults faults, unsigned seed) : faults_(std::move(faults)), random_(seed, 1) {}

std::optional<SimResponse> FaultInjector::intercept_call() {
  ++calls_;
  if (faults_.rate_limit_every > 0 && calls_ % faults_.rate_limit_every == 0) {
    SimResponse response = json_error(429, "TOO_MANY_REQUESTS", "rate limit exceeded, retry later");
    response.headers["Retry-After"] = std::to_string(faults_.retry_after_seconds);
    return response;
  }
  if (faults_.error_rate > 0 && random_.unit() < faults_.error_rate) {
    return json_error(500, "INTERNAL", "simulated failure");
  }
  return std::nullopt;
}

bool FaultInjector::drop_this_create() {
  ++creates_;
  return faults_.drop_create_every > 0 && creates_ % faults_.drop_create_every == 0;
}

}  // namespace dbform::sim
