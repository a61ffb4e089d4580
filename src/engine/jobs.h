#pragma once
// What the apply engine's workers do (talk to the API, never touch the state), and how the main
// thread records what they learned.
#include <optional>
#include <string>

#include "api/client.h"
#include "plan/model.h"
#include "state/model.h"

namespace dbform {

enum class JobType { Create, Poll };

// What a worker learned from the API; applied to the state by the main thread.
struct Outcome {
  size_t item = 0;
  JobType type = JobType::Create;
  std::optional<Service> service;
  std::optional<Vpc> vpc;
  bool adopted = false;          // found by name instead of created
  bool gone = false;             // poll: 404
  std::string error;             // non-empty on failure
  bool nothing_created = false;  // create failed in a way that proves nothing was created
  bool transient = false;        // poll failed in a way worth trying again
};

// Creates the resource, or adopts the one resource of that name when an earlier attempt's outcome
// is unknown (`look_first`: an intent without an id was found in the state). Never sends a create
// while a resource of that name may already exist. Throws when a lookup fails: the outcome then
// stays unknown.
Outcome create_or_adopt(ApiClient& api, const PlannedAction& a, const std::string& key, bool look_first);

// GET of one service; failures are reported in the outcome, never thrown.
Outcome poll_service(ApiClient& api, const PlannedAction& a, const std::string& service_id, const std::string& key);

// Copies what the API said into the record. A password, once recorded, is never replaced by "".
void record_service(ResourceRecord& rec, const Service& s, const std::string& now);
void record_vpc(ResourceRecord& rec, const Vpc& v, const std::string& now);

}  // namespace dbform
