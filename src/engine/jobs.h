#pragma once
// What the apply engine's workers do (talk to the API, never touch the state), and how the main
// thread records what they learned.
#include <atomic>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "api/client.h"
#include "plan/kinds.h"
#include "plan/model.h"
#include "sql/objects.h"
#include "state/model.h"

namespace dbform {

// What an answer is to: the call of an operation step (its row in engine/steps.cpp handles it), or
// a status check (a GET, a list, a connection attempt: engine/connectable.h).
enum class AnswerTo { Step, Poll, PollList, Connect };

// What a worker learned from the API; applied to the state by the main thread.
struct Outcome {
  size_t item = 0;                // the engine's operation (a call) or resource (a status check)
  std::vector<size_t> items;      // PollList: the resources the list answers for
  AnswerTo to = AnswerTo::Step;
  std::optional<Shown> shown;    // the resource as the answer showed it
  std::vector<Shown> listed;     // PollList: every resource of its kind in the project
  bool adopted = false;          // found by name instead of created
  bool gone = false;             // poll: 404
  std::string error;             // non-empty on failure
  bool nothing_created = false;  // create failed in a way that proves nothing was created
  bool transient = false;        // poll or call failed in a way worth trying again
  int http_status = 0;           // the status of a failed call (409: the service was busy); 0 without one
  bool stopped = false;          // a stop ended it before a verdict: it stays unfinished
  bool not_sent = false;         // stopped before this run sent its create: nothing new exists
  std::optional<ObjectsRun> objects;  // the objects' step: what its transaction did, and the catalogs after it
};

// What a create job needs besides the API: time, the settle window and the stop flag.
struct CreateContext {
  ApiClient& api;
  Clock& clock;
  // After an unknown outcome, lookups by name spread over this window (lists lag behind writes);
  // only when all of them found nothing may the create be sent again.
  Duration settle_window{30'000};
  const std::atomic<bool>* stop = nullptr;
};

// Creates the resource, or adopts the one resource of that name when an earlier attempt's outcome
// is unknown (`look_first`: an intent without an id was found in the state). Never sends a create
// while a resource of that name may already exist, nor after a stop. Throws when a lookup fails:
// the outcome then stays unknown. `source_id`: the id of the dependency the create is made from.
Outcome create_or_adopt(const CreateContext& ctx, const PlannedAction& a, const Scope& scope, const std::string& key,
                        bool look_first, const std::string& source_id = "");

// What a create whose outcome is unknown made, looked up by name across the settle window as
// create_or_adopt does before sending a create again, but never creating anything (a delete of it:
// `preview down`). `adopted` with `shown` when exactly one live resource has the name; `error`
// naming them when several do; neither when every lookup of the window found nothing; `stopped`
// when a stop ended the wait. Throws when a lookup fails.
Outcome look_up_unknown_create(const CreateContext& ctx, const PlannedAction& a, const Scope& scope,
                               const std::string& key);

// One update call; failures are reported in the outcome, never thrown.
Outcome send_update(ApiClient& api, const PlannedAction& a, const Scope& scope, const std::string& id,
                    const std::string& key, const std::string& call, const nlohmann::json& body);
// The delete; `gone` when it was gone already. Failures are reported in the outcome, never thrown.
Outcome delete_resource(ApiClient& api, const PlannedAction& a, const Scope& scope, const std::string& id,
                        const std::string& key);

// GET of one resource; failures are reported in the outcome, never thrown.
Outcome poll_resource(ApiClient& api, const PlannedAction& a, const Scope& scope, const std::string& id,
                      const std::string& key);
// One list of the resources of a kind in a scope, answering for every item waited for there;
// failures are reported in the outcome, never thrown.
Outcome poll_list(ApiClient& api, const ResourceType& type, const Scope& scope, const std::string& key);

// Sets `password` on the service; failures are reported in the outcome, never thrown.
Outcome set_password(ApiClient& api, const PlannedAction& a, const std::string& service_id, const std::string& key,
                     const std::string& password);

}  // namespace dbform
