#include "sim/faults.h"

#include <fnmatch.h>

#include <nlohmann/json.hpp>
#include <zlib.h>

#include "sim/gzip.h"
#include "util/json_limits.h"

namespace dbform::sim {

SimResponse json_error(int status, const std::string& code, const std::string& message) {
  SimResponse response;
  response.status = status;
  response.body = dump_json(nlohmann::json{{"code", code}, {"message", message}});
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
    ++injected_["429"];
    SimResponse response = json_error(429, "TOO_MANY_REQUESTS", "rate limit exceeded, retry later");
    response.headers["Retry-After"] = std::to_string(faults_.retry_after_seconds);
    return response;
  }
  if (faults_.error_rate > 0 && random_.unit() < faults_.error_rate) {
    ++injected_["500"];
    return json_error(500, "INTERNAL", "simulated failure");
  }
  return std::nullopt;
}

std::optional<RouteFault::Kind> FaultInjector::route_fault(const std::string& route, long long nth) {
  for (const auto& f : faults_.routes) {
    if (f.route != route || nth < f.from || (f.times > 0 && nth >= f.from + f.times)) continue;
    static const std::map<RouteFault::Kind, const char*> names = {
        {RouteFault::Kind::LoseAnswer, "answer lost before its first byte"},
        {RouteFault::Kind::GatewayTimeout, "504 after the call was performed"},
        {RouteFault::Kind::Refuse, "call refused (422)"},
        {RouteFault::Kind::EmptyList, "list answered empty"}};
    ++injected_[std::string(names.at(f.kind)) + ": " + route];
    return f.kind;
  }
  return std::nullopt;
}

FaultInjector::CreateFault FaultInjector::after_create() {
  ++creates_;
  auto every = [this](int n) { return n > 0 && creates_ % n == 0; };
  if (every(faults_.drop_create_every)) {
    ++injected_["answer dropped after its headers"];
    return CreateFault::DropAfterHeaders;
  }
  if (every(faults_.lose_answer_every)) {
    ++injected_["answer lost before its first byte"];
    return CreateFault::LoseAnswer;
  }
  if (every(faults_.gateway_timeout_every)) {
    ++injected_["504 after the create was committed"];
    return CreateFault::GatewayTimeout;
  }
  return CreateFault::None;
}

namespace {

// 1 GiB of spaces (valid JSON whitespace), gzip-compressed once: about 1 MiB on the wire.
const std::string& gzip_bomb() {
  static const std::string bomb = gzip(std::string(1 << 20, ' '), Z_BEST_COMPRESSION, 1024);
  return bomb;
}

}  // namespace

SimResponse FaultInjector::shape(SimResponse answer, const SimRequest& request) {
  if (request.method == "GET" && answer.status == 200) {
    ++reads_;
    auto every = [this](int n) { return n > 0 && reads_ % n == 0; };
    const size_t object = answer.body.find('{');
    if (every(faults_.deep_answer_every) && object != std::string::npos) {
      constexpr size_t kDepth = 200'000;
      answer.body.insert(object + 1, "\"x-trace\":" + std::string(kDepth, '[') + std::string(kDepth, ']') + ",");
      ++injected_["answer nested 200,000 deep"];
    } else if (every(faults_.huge_answer_every)) {
      answer.body = gzip_bomb();
      answer.headers["Content-Encoding"] = "gzip";
      ++injected_["answer of 1 GiB once decompressed"];
    }
    if (faults_.escape_statuses) {
      for (const char* status : {"QUEUED", "CONFIGURING", "UPGRADING"}) {
        const std::string quoted = std::string("\"") + status + "\"";
        for (size_t at = answer.body.find(quoted); at != std::string::npos; at = answer.body.find(quoted, at + 1))
          answer.body.insert(at + quoted.size() - 1, "\\u001b]0;owned\\u0007\\u001b[2J");
      }
    }
  }
  if (faults_.echo_secrets && answer.status >= 400) {
    answer = json_error(answer.status, "ECHO", "rejected " + request.authorization + " with body " + request.body);
    ++injected_["error echoing the request"];
  }
  if (faults_.garbled_errors && answer.status >= 400) {
    // Inside the message string of {"code":..,"message":".."}: a lone continuation byte, a byte
    // that never occurs in UTF-8 and a sequence cut short.
    const size_t end = answer.body.rfind('"');
    if (end != std::string::npos) {
      answer.body.insert(end, " \x80\xff\xe2\x82");
      ++injected_["error body not UTF-8"];
    }
  }
  return answer;
}

}  // namespace dbform::sim
