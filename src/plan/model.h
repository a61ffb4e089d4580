#pragma once
// The plan is plain data: a pure function of (manifest, state). Renderers print it, the apply
// engine executes it, so plan and apply cannot disagree.
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "manifest/model.h"
#include "state/model.h"

namespace dbform {

enum class Action {
  Create,    // declared, not recorded
  NoOp,      // declared, recorded, same settings, ready
  Wait,      // declared, recorded, created but not yet READY
  Adopt,     // recorded intent whose create outcome is unknown: look up by name, else create
  Update,    // declared and recorded, READY, settings that change in place differ: its calls
  Delete,    // recorded, no longer declared, not protected, and --prune: deleted, then forgotten
  Replace,   // a read replica set or peering whose change cannot be made in place, and --prune: deleted,
             // then created (they hold no data of their own)
  Conflict,  // cannot be applied (a replacement, a namesake, ...): nothing is applied
  Orphan,    // recorded, no longer declared: reported, kept
  Forget,    // listed under `removed:`: its record is dropped, the resource stays in the API (no call)
};

const char* action_name(Action a);  // "create", "no-op", "wait", "adopt", "update", "delete", "conflict", "orphan", "forget"

struct FieldChange {
  std::string field;
  nlohmann::json before;  // recorded, or observed by a refresh; null when absent
  nlohmann::json after;   // declared; null when absent
  bool drift = false;     // `before` was changed outside dbform (a refresh saw it differ from the record)
};

// One update call on a service, made after its create (if any), in plan order, one at a time.
struct PlannedCall {
  std::string call;     // one of call_types() (plan/kinds.h)
  nlohmann::json body;  // as sent; null: no body. attachToVPC's vpc_id is null until its VPC exists
  std::string vpc;      // attachToVPC, detachFromVPC: the VPC's name ("" when not one dbform knows)
  nlohmann::json sets;  // the settings it brings about: field -> value (null: the field goes)
};

struct PlannedAction {
  Action action = Action::NoOp;
  ResourceKind kind = ResourceKind::Service;
  std::string address;
  std::string project_id;
  std::string parent;       // the name of the service or VPC it is in (read replica sets, peerings)
  std::string name;
  std::string resource_id;  // recorded id (wait, no-op, conflict, orphan)
  std::string renamed_from;  // the address its record moves from (renamed_from); "" otherwise
  std::string status;       // recorded status
  nlohmann::json before;    // recorded settings; null when not recorded
  nlohmann::json after;     // declared settings; null for orphans
  std::vector<FieldChange> changes;  // updates and conflicts: every differing field
  std::vector<PlannedCall> calls;    // create, adopt, wait, update: the update calls that follow
  bool deletion_protection = false;  // declared (recorded, for orphans and deletes)
  // Declared with `import_id`, not recorded: apply records the resource of this id (read by the
  // plan's refresh) before its calls, if any (the action is then a no-op, a wait or an update).
  std::string import_id;
  std::string reason;       // why: conflicts and orphans say how to resolve
  Location location;        // where it is declared (none for orphans)
};

// An action on a recorded resource, as the record shows it: its identity, id, status and settings
// (`before`); the rest (after, deletion_protection, reason) is the caller's.
PlannedAction action_on(const ResourceRecord& rec, Action action);

// What the plan's refresh read for each declared `import_id` that is not recorded: the record it
// makes (`problem` empty), or why it cannot be imported. Address -> finding.
struct ImportFinding {
  std::optional<ResourceRecord> record;  // what apply records, when it can be imported
  std::string problem;                   // otherwise why not
};
using Imports = std::map<std::string, ImportFinding>;

// Resources that exist in the API under a declared name although the state does not record them
// (a wrong --state path, a lost state, a `state rm`): address -> their ids. Found by a refresh; a
// declared resource with a namesake is never created beside it.
using Namesakes = std::map<std::string, std::vector<std::string>>;

// What the policies (src/policy) found in a plan or a state: the rules checked, each violation, the
// waivers in force. Plain data, so that the plan document carries it and every renderer shows it.
struct PolicyViolation {
  std::string rule;     // the rule's id
  bool mandatory = true;  // mandatory (the plan is refused) or advisory (a warning)
  std::string address;
  std::string field;     // the field the rule looks at; "action" for forbid_actions, the waiver's path for a waiver
  nlohmann::json found;  // its value after the plan (declared, else recorded); null: not set
  std::string required;  // what the rule requires: ">= 1", "true", "not delete"
  std::string message;
};
struct WaiverInForce {
  std::string rule, address, reason, expires;
};
struct PolicyRuleInfo {
  std::string id;
  bool mandatory = true;
  std::string kind;  // service, vpc, replica_set, peering, preview
  bool waivable = false;
};
struct PolicyCheck {
  std::vector<std::string> files;  // as given (--policy, DBFORM_POLICY)
  // sha256 of the rule files' contents (their order and names aside); "" when none was given. A
  // saved plan is applied only under the same rules.
  std::string digest;
  std::vector<PolicyRuleInfo> rules;
  std::vector<PolicyViolation> violations;
  std::vector<WaiverInForce> waivers;
  int mandatory() const;
  int advisory() const;
};

struct PlanSummary {
  int create = 0, wait = 0, adopt = 0, update = 0, del = 0, replace = 0, noop = 0, conflict = 0, orphan = 0;
  int prunable = 0;  // orphans that --prune would delete (not protected)
  int import = 0;    // actions that import (whatever their calls), and records forgotten
  int forget = 0;
  // `removed:` entries whose address is not recorded: nothing to forget, and not a resource (so not
  // among the unchanged either). Shown, since a mistyped address would otherwise pass unnoticed.
  int nothing_to_forget = 0;
  // Mandatory policy violations: each stops the plan as a conflict does (nothing applied, no plan
  // file saved, exit 1). Set by the policies' check, after summarize().
  int policy = 0;
  bool has_conflicts() const { return conflict + policy > 0; }
  bool has_changes() const { return create + wait + adopt + update + del + replace + import + forget > 0; }
};

// A `removed:` entry whose address is not recorded: shown as a no-op that neither a record nor a
// declaration stands behind.
bool is_unrecorded_removal(const PlannedAction& a);

// The counts of each action.
PlanSummary summarize(const std::vector<PlannedAction>& actions);

inline constexpr int kDefaultMaxDeletes = 3;

// How current the state was that a plan from the state alone (--no-refresh) was made from: what
// a pull request planning without an API key tells its reviewers.
struct StateFreshness {
  std::optional<RefreshStamp> refreshed;  // unset: never refreshed by a run that recorded it
  long long age_seconds = 0;              // how long before the plan was made
};

// A service whose objects inside its database (roles, schemas, extensions, grants) a refreshing
// plan could not read from its catalogs: they are planned from their records.
struct CatalogsUnread {
  std::string service;    // its address
  std::string why;        // "the state's passwords are sealed and this plan has no key"
  std::string last_read;  // when a run that recorded it last read them (UTC); "" never
};

struct Plan {
  // Per project in manifest order; within a project VPCs before services; orphans last. The
  // engine orders the calls: VPC creates, service creates, then updates and attachments.
  std::vector<PlannedAction> actions;
  PlanSummary summary;
  std::string state_lineage;
  long long state_serial = 0;
  std::string manifest_digest;
  bool prune = false;  // made with --prune: unprotected orphans are deletes
  // Made against what a refresh read (not written: plan is read-only). `apply FILE` refreshes
  // again and refuses the plan unless that refresh plans the same actions.
  bool refreshed = false;
  // The most deletes (replacements included) it may make: beyond it, each is a conflict.
  int max_deletes = kDefaultMaxDeletes;
  // Made with --target: only these addresses and what they need; empty: every declared resource.
  std::vector<std::string> targets;
  PolicyCheck policy;  // the rules it was checked against, and what they found
  // Made from the state alone (--no-refresh): how current that state was. Unset for a refreshed plan.
  std::optional<StateFreshness> freshness;
  // Made with a refresh: the services whose objects it planned from their records, and why.
  std::vector<CatalogsUnread> catalogs_unread;
};

}  // namespace dbform
