#pragma once
// The refresh: one list call per project and kind reads every recorded resource
// there; what the API shows is recorded, so the plan compares the declarations with the API's view.
#include <map>
#include <string>
#include <vector>

#include "api/client.h"
#include "api/project_key.h"
#include "read/namesakes.h"
#include "plan/model.h"
#include "state/model.h"

namespace dbform {

struct RefreshResult {
  ProjectListings listings;           // what each project holds (for the name guard)
  std::vector<std::string> changed;   // addresses whose record the refresh changed
  std::vector<std::string> deleted;   // addresses it found deleted outside dbform
};

// Records, for every resource the state records in `projects` with an id, what `listings` (from
// list_projects, the children included) shows of it: status, endpoints and observed settings (a
// pending update call's outcome is settled by them). One the list does not show is asked for by id
// (lists lag behind writes); one that is gone (404, or DELETED) is marked deleted outside dbform.
// Throws Error naming every project that could not be read (listed or asked), and then changes
// nothing. `parallelism` projects are read at once. A kind with no read of one (a read replica set) missing from its list within
// `settle_window` of its create is left as recorded: lists lag behind writes, and taking it for
// deleted would create it again.
RefreshResult refresh_state(ApiClient& api, Clock& clock, State& state, const std::vector<std::string>& projects,
                            const std::map<std::string, ProjectKey>& keys, ProjectListings listings, int parallelism,
                            Duration settle_window = std::chrono::seconds(30));

// After a refresh: a declared value the API shows already (a change an earlier run made but was
// stopped before recording, or one made outside dbform to the declared value) is recorded as set,
// so that a later change away from it is seen as drift. Returns the addresses it changed.
std::vector<std::string> record_declared_values(State& state, const Plan& plan);

}  // namespace dbform
