#pragma once
// The kinds of resource and the calls that change them, as data: how
// each kind is created, read, changed, watched and deleted, what it needs first, which changes it
// takes in place and which need a new one. One table below the differ and the engine: the differ,
// the plan file, the scheduler, the refresh, the import and the name guard read it; none of them
// asks which kind a resource is.
#include <limits>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "api/client.h"
#include "plan/model.h"
#include "state/model.h"

namespace dbform {

enum class StatusVerdict { Ready, Paused, KeepWaiting, Failed };

// A service's status as a watcher takes it: READY is done; PAUSED is done where a pause is expected
// (the watcher decides); DELETING and DELETED fail; everything else (QUEUED, CONFIGURING, UNSTABLE,
// PAUSING, RESUMING, UPGRADING, OPTIMIZING, unknown or missing) keeps waiting.
StatusVerdict classify_status(const std::string& status);

// One call that changes a resource in place (PlannedCall::call): adding one is a row of
// call_types() and its ApiClient method.
// What a call's answer does to the VPC a resource is attached to.
enum class VpcEffect { None, Attach, Detach };

struct CallType {
  const char* name;
  // The resource is UPGRADING (PAUSING, RESUMING) until the change is made: watched until it shows.
  bool async = false;
  bool renames = false;  // it gives the resource its declared name: the name guard checks it first
  bool starts = false;   // it starts a paused service: PAUSED is what the plan may find before it
  // PAUSED is what its watch may find (the stop itself; a start or rename of a paused service).
  bool may_find_paused = false;
  VpcEffect vpc = VpcEffect::None;
  // After it, --wait-connectable waits until the service accepts connections again (a start, a rename).
  bool reconnects = false;
};

// Every call, in the order the plan makes them.
const std::vector<CallType>& call_types();
// The row of `call`; a row that does nothing of the above for one not in the table.
const CallType& call_type(const std::string& call);
// Whether `call` is asynchronous (CallType::async); false for one not in the table.
bool is_async_call(const std::string& call);

// One resource of any kind as the API showed it.
struct Shown {
  std::string id;
  std::string name;
  std::string status;  // "" for a kind without one (a VPC)
  Endpoint endpoint;
  Endpoint pooler_endpoint;
  std::string initial_password;  // in a create's answer only
  nlohmann::json raw;            // the answer, its password removed
};

constexpr size_t kBeforeCreate = std::numeric_limits<size_t>::max();

// Another resource that must be there before this one's create (or one of its calls) is sent.
struct Dependency {
  std::string address;
  std::string role;             // how messages name it: "VPC", "fork source"
  bool settled = false;         // READY, with every operation of this run on it done; else: created
  bool source = false;          // its id goes into the create (the service a fork is made from)
  size_t call = kBeforeCreate;  // the call (PlannedAction::calls) that needs it; else the create
};

// Where a resource lives, as its API calls name it: its project, and for a kind that lives in
// another (a read replica set in a service, a peering in a VPC) that one's id.
struct Scope {
  std::string project_id;
  std::string parent_id;  // "" for a project's own resources
};

// The project's recorded VPCs, id -> name: a service shows the id of the VPC it is attached to.
using VpcNames = std::map<std::string, std::string>;

struct ResourceType {
  ResourceKind kind;
  // A create's answer carries the password, and a lost answer's is replaced by a pending one
  // (docs/safety.md), set by a Password operation after the create.
  bool has_password = false;
  // Its create, calls and delete are watched until its status shows them; else each is done
  // when its call is answered.
  bool watched = false;
  // The API has no read of one: `get` reads its parent's list, which lags behind writes, so one
  // just made may be missing from it for a while (the settle window) without being gone.
  bool listed_only = false;
  // The kinds whose deletes in the same project go before this kind's (what may still use it).
  std::vector<ResourceKind> deleted_after;
  // The call after which it is not READY (a service's stop): made after everything of the run
  // that needs it READY (a fork of it).
  const char* unready_call = "";
  const char* busy_delete_hint = "";  // said of a 409 answer to its delete
  // Statuses: being deleted and deleted (a namesake in either is not live; a deleted one is gone).
  const char* deleting_status = "";
  const char* deleted_status = "";
  StatusVerdict (*verdict)(const std::string& status) = nullptr;
  // A change it cannot take in place: it needs a new resource, which only a `replaceable` kind gets
  // (dbform never replaces a database: docs/using.md).
  bool (*needs_replacement)(const FieldChange& change) = nullptr;
  // It holds no data of its own, so `--prune` replaces it (deleted, then created) where a change
  // needs a new one; a kind that holds data is never replaced.
  bool replaceable = false;
  // What a refused replacement says would be replaced: "database" (its data and endpoint lost), "VPC".
  const char* replaced_noun = "database";
  // Its create and calls need its parent running (a read replica set's service READY).
  bool runs_in_parent = false;
  // Made once created, but carrying nothing until another account accepts it (a peering): the plan
  // says so until its status is `accepted_status`, and counts those in `awaiting_status` (still
  // asked, no error) in its summary instead.
  const char* accepted_status = "";
  const char* awaiting_status = "";
  // The settings its calls read besides the declared ones (a resize sends both sizes, setHA both
  // counts); empty for a kind whose changes are no calls.
  std::vector<const char*> call_inputs;
  // The declared settings its create brings about (see created_with).
  nlohmann::json (*created_with)(const nlohmann::json& declared) = nullptr;

  // What a planned resource of this kind needs first.
  std::vector<Dependency> (*needs)(const PlannedAction& a) = nullptr;
  // The settings the answer shows, in the manifest's terms (ResourceRecord::observed). What the
  // API cannot show is taken from `recorded`.
  nlohmann::json (*observe)(const Shown& shown, const nlohmann::json& recorded, const VpcNames& vpcs) = nullptr;
  // Whether the resource as last shown (`shown`, an API object) has the change `call` with `body`
  // makes: for a call whose answer was lost, or one still being made.
  bool (*took_effect)(const std::string& call, const nlohmann::json& body, const nlohmann::json& shown) = nullptr;

  // For a kind whose API is the plain REST shape: where its calls go (its route), the fields of an
  // object's name and status ("" for a kind without statuses), and a create's body. Its row's calls
  // are then routed_calls<its kind> (below) but for those it makes its own (a peering's update).
  ApiRoute route = {};
  const char* name_field = "name";
  const char* status_field = "";
  nlohmann::json (*create_body)(const PlannedAction& a) = nullptr;

  // The API. `source_id` is the id of the dependency marked `source` ("" without one).
  Shown (*create)(ApiClient& api, const std::string& key, const Scope& scope, const PlannedAction& a,
                  const std::string& source_id) = nullptr;
  std::vector<Shown> (*list)(ApiClient& api, const std::string& key, const Scope& scope) = nullptr;
  std::optional<Shown> (*get)(ApiClient& api, const std::string& key, const Scope& scope,
                              const std::string& id) = nullptr;  // nullopt: 404
  // nullopt when the answer does not show the resource.
  std::optional<Shown> (*update)(ApiClient& api, const std::string& key, const Scope& scope, const std::string& id,
                                 const std::string& call, const nlohmann::json& body) = nullptr;
  bool (*remove)(ApiClient& api, const std::string& key, const Scope& scope,
                 const std::string& id) = nullptr;  // false: it was gone (404)

  // Whether a listed namesake stands in the way of a create (or, after an unknown outcome, is the
  // one created): one being deleted is not.
  bool is_live(const Shown& s) const { return !leaving(s.status); }
  bool is_gone(const Shown& s) const { return *deleted_status && s.status == deleted_status; }
  // The status of one on its way out: being deleted, or deleted.
  bool leaving(const std::string& status) const {
    return (*deleting_status && status == deleting_status) || (*deleted_status && status == deleted_status);
  }
};

const ResourceType& type_of(ResourceKind kind);

// The calls of a kind with a route (ResourceType::route), made through ApiClient's *_at calls with
// what its row says: a row sets .create = routed_create<KIND> and so on.
Shown shown_at(const ResourceType& type, ApiObject object);
template <ResourceKind K>
Shown routed_create(ApiClient& api, const std::string& key, const Scope& scope, const PlannedAction& a,
                    const std::string&) {
  const ResourceType& t = type_of(K);
  return shown_at(t, api.create_at(key, t.route, scope.project_id, scope.parent_id, t.create_body(a)));
}
template <ResourceKind K>
std::vector<Shown> routed_list(ApiClient& api, const std::string& key, const Scope& scope) {
  const ResourceType& t = type_of(K);
  std::vector<Shown> out;
  for (ApiObject& o : api.list_at(key, t.route, scope.project_id, scope.parent_id)) out.push_back(shown_at(t, std::move(o)));
  return out;
}
template <ResourceKind K>
std::optional<Shown> routed_get(ApiClient& api, const std::string& key, const Scope& scope, const std::string& id) {
  const ResourceType& t = type_of(K);
  auto found = api.get_at(key, t.route, scope.project_id, scope.parent_id, id);
  return found ? std::optional<Shown>(shown_at(t, std::move(*found))) : std::nullopt;
}
// The call's answer is not read: the resource is read back.
template <ResourceKind K>
std::optional<Shown> routed_update(ApiClient& api, const std::string& key, const Scope& scope, const std::string& id,
                                   const std::string& call, const nlohmann::json& body) {
  api.act_at(key, type_of(K).route, scope.project_id, scope.parent_id, id, call, body);
  return std::nullopt;
}
template <ResourceKind K>
bool routed_remove(ApiClient& api, const std::string& key, const Scope& scope, const std::string& id) {
  return api.delete_at(key, type_of(K).route, scope.project_id, scope.parent_id, id);
}
// Every kind the API makes, those that others refer to (VPCs) first, and those that live in another
// last; the objects inside a service's database (KindForm::in_database) are made by SQL, not here.
const std::vector<const ResourceType*>& resource_types();

Shown shown_of(Service s);
Shown shown_of(ReplicaSet r);

// The scope of a resource of `kind` in `parent` (its name): the parent's recorded id, "" while it
// has none.
Scope scope_of(const State& state, const std::string& project_id, ResourceKind kind, const std::string& parent);

// The project's recorded VPCs.
VpcNames recorded_vpc_names(const State& state, const std::string& project_id);

// Copies what the API showed into the record. A password, once recorded, is never replaced by "",
// and an id, once recorded, is never changed.
void record_answer(ResourceRecord& rec, const Shown& shown, const std::string& now);
// The same, taking the answer's raw JSON instead of copying it.
void record_answer(ResourceRecord& rec, Shown&& shown, const std::string& now);
// Whether record_answer() would leave what `rec` holds of the API's view (id, status, endpoints,
// the answer kept) as it is.
bool answer_recorded(const ResourceRecord& rec, const Shown& shown);

// Whether `call` with `body` shows in the resource's last answer (a rename in its name).
bool call_took_effect(const ResourceType& type, const std::string& call, const nlohmann::json& body,
                      const nlohmann::json& shown);

// The declared settings a create brings about: without those set by calls after it (vpc,
// connection_pooler, sync_replica_count, paused), unless a new one has them already (running, no
// synchronous replicas, no pooler). What a new record's settings are until those calls are made.
nlohmann::json created_with(ResourceKind kind, const nlohmann::json& declared);

// The address of the service a planned fork is made from; "" when the action is no fork.
std::string fork_source(const PlannedAction& a);

}  // namespace dbform
