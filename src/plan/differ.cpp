#include "plan/differ.h"

#include <algorithm>
#include <map>
#include <optional>
#include <iterator>
#include <unordered_map>
#include <unordered_set>

#include "plan/calls.h"
#include "plan/database_objects.h"
#include "plan/kinds.h"
#include "util/json_limits.h"
#include "util/text.h"
#include "state/previews.h"

namespace dbform {

using nlohmann::json;

namespace {

std::string replacement_reason(const std::vector<FieldChange>& changes, ResourceKind kind) {
  std::vector<std::string> fields;
  for (const auto& c : changes)
    if (type_of(kind).needs_replacement(c)) fields.push_back(c.field);
  return "changing " + join(fields, " and ") + " requires replacing the " + type_of(kind).replaced_noun +
         ", and dbform never replaces one (a replacement loses its data and its endpoint). To keep it, restore "
         "the recorded value in the manifest. To move to a new one, declare it under another name, move the data "
         "over, then remove this declaration (it becomes an orphan, which `--prune` deletes)";
}

// What is declared of one resource, and where (`parent`: the name of the service or VPC it is in).
struct Declared {
  ResourceKind kind;
  std::string parent;
  const std::string& name;
  json settings;
  bool protection;
  const Location& location;
};

// A change that needs a new resource: a read replica set or a peering holds no data of its own,
// so `--prune` replaces it (deleted, then created); a service or VPC is never replaced.
void plan_replacement(PlannedAction& a, const ResourceRecord& rec, bool prune) {
  const ResourceKind kind = a.kind;
  if (!type_of(kind).replaceable) {
    a.action = Action::Conflict;
    a.reason = replacement_reason(a.changes, kind);
    return;
  }
  std::vector<std::string> fields;
  for (const auto& c : a.changes)
    if (type_of(kind).needs_replacement(c)) fields.push_back(c.field);
  const std::string what = "changing " + join(fields, " and ") + " requires replacing the " + kind_noun(kind) +
                           " (it holds no data of its own)";
  a.action = Action::Conflict;
  if (!prune)
    a.reason = what + ", and replacements are made only with `--prune`: plan and apply with `--prune` to delete it "
               "and create it again, or restore the recorded value in the manifest";
  else if (rec.deletion_protection || a.deletion_protection)  // recorded, or declared in this very edit
    a.reason = what + ", but it is protected (deletion_protection: true, " +
               (rec.deletion_protection ? "recorded" : "declared") +
               "). Declare deletion_protection: false for one apply to replace it, or restore the recorded value";
  else if (rec.id.empty() || !rec.pending_call.is_null())
    a.reason = what + ", but an earlier run left it unfinished: apply once without this change first";
  else {
    a.action = Action::Replace;
    a.reason = what + ": with --prune it is deleted, then created";
  }
}

// A service a refresh found paused (or pausing) that dbform neither paused nor was told to: paused
// outside dbform (in the console). Said as such, with what the plan does about it, rather than as a
// service not READY yet; "" otherwise.
std::string paused_outside(const ResourceRecord& rec, const PlannedAction& a) {
  if (!*type_of(a.kind).unready_call || !is_paused_status(rec.status) || !rec.observed.is_object() ||
      rec.observed.value("paused", json()) != true || rec.settings.value("paused", json()) == true ||
      a.after.value("paused", json()) == true)
    return "";
  const bool starts = std::any_of(a.calls.begin(), a.calls.end(), [](const PlannedCall& c) { return c.call == "start"; });
  const bool stops = !a.calls.empty() && a.calls.back().call == "stop";
  const bool waits = a.action == Action::Wait;
  std::string does;
  if (starts && stops)
    does = std::string(waits ? "waited for until PAUSED, then " : "") +
           "started for its changes and paused again, as `paused` is not declared (declare `paused: false` to keep "
           "it running)";
  else if (starts)
    does = std::string(waits ? "waited for until PAUSED, then " : "") + "started, as `paused: false` declares";
  else
    does = std::string(waits ? "waited for until PAUSED and " : "") +
           "left paused, as `paused` is not declared (declare `paused: false` to have dbform start it)";
  return "paused outside dbform (status " + rec.status + "): " + does;
}

// The live namesakes the refresh found of what `address` is to be called, or null.
const std::vector<std::string>* namesakes_of(const Namesakes* namesakes, const std::string& address) {
  if (!namesakes) return nullptr;
  auto found = namesakes->find(address);
  return found != namesakes->end() && !found->second.empty() ? &found->second : nullptr;
}

PlannedAction plan_declared(const std::string& project_id, Declared d, const State& state, const Namesakes* namesakes,
                            bool prune) {
  const ResourceKind kind = d.kind;
  PlannedAction a;
  a.deletion_protection = d.protection;
  a.kind = kind;
  a.project_id = project_id;
  a.parent = std::move(d.parent);
  a.name = d.name;
  a.address = resource_address(project_id, kind, a.name, a.parent);
  a.after = std::move(d.settings);
  a.location = d.location;
  const bool protection = d.protection;
  const ResourceRecord* rec = state.find(a.address);
  // What a create leaves to calls (a VPC attachment, the pooler), as made right after it.
  auto calls_after_create = [&] {
    const json created = created_with(kind, a.after);
    return created != a.after ? calls_between(created, a.after, json(), state, project_id).calls
                              : std::vector<PlannedCall>{};
  };
  if (!rec || rec->deleted_outside) {
    a.action = Action::Create;
    a.calls = calls_after_create();
    if (rec) {
      a.resource_id = rec->id;  // the one that is gone: not a namesake of the new one
      a.reason = "deleted outside dbform: " + std::string(kind_noun(kind)) + " " + rec->id +
                 " no longer exists, so it is created again" +
                 (parent_kind(kind) ? " once lookups by name over the settle window find nothing (a list may lag)"
                                    : "");
    }
    if (const std::vector<std::string>* ids = namesakes_of(namesakes, a.address)) {
      a.action = Action::Conflict;
      a.calls.clear();
      a.resource_id = join(*ids, ", ");
      a.reason = namesake_reason(kind, a.address, *ids, state);
    }
    return a;
  }
  a.before = rec->settings;
  a.resource_id = rec->id;
  a.status = rec->status;
  if (rec->create_pending && rec->id.empty()) {
    // Only the create's own fields matter: the calls that follow it are planned from the declaration.
    a.changes = changes_of(*rec, created_with(kind, a.after));
    if (!a.changes.empty()) {
      a.action = Action::Conflict;
      a.reason = "an earlier create of this " + std::string(kind_noun(kind)) +
                 " with the recorded settings may have succeeded. Restore the recorded values and apply to finish "
                 "it, or run `dbform state rm --force " + a.address + "` to forget it";
      return a;
    }
    a.action = Action::Adopt;
    a.calls = calls_after_create();
    a.reason = "an earlier run stopped before the create's outcome was known: it is looked up by name and adopted "
               "if found, created otherwise";
    return a;
  }
  a.changes = changes_of(*rec, a.after);
  if (std::any_of(a.changes.begin(), a.changes.end(), [&](const FieldChange& c) { return type_of(kind).needs_replacement(c); })) {
    plan_replacement(a, *rec, prune);
    if (a.action == Action::Replace) a.calls = calls_after_create();
    return a;
  }
  if (const ResourceType& type = type_of(kind); !type.call_inputs.empty()) {
    // resize sends both sizes and setHA both counts, declared or not; a paused service is started first.
    std::vector<std::string> fields(type.call_inputs.begin(), type.call_inputs.end());
    for (auto it = a.after.begin(); it != a.after.end(); ++it) fields.push_back(it.key());
    json current = json::object();
    for (const auto& f : fields)
      if (json v = current_value(*rec, f); !v.is_null()) current[f] = std::move(v);
    CallPlan plan = calls_between(current, a.after, rec->observed, state, project_id);
    if (!plan.problem.empty()) {
      a.action = Action::Conflict;
      a.reason = plan.problem;
      return a;
    }
    a.calls = std::move(plan.calls);
    if (a.calls.size() > 2 && a.calls.front().call == "start" && a.calls.back().call == "stop")
      a.reason = "paused: it is started for these changes and stopped again";
  }
  // The name the API shows (its last answer) differs: renamed (back) to the declared one, first. (A
  // read replica set cannot be renamed, and a peering has no name.)
  if (const json shown = rec->last_response.is_object() ? rec->last_response.value("name", json()) : json();
      !parent_kind(kind) && shown.is_string() && shown != a.name) {
    a.changes.insert(a.changes.begin(), {"name", shown, a.name, rec->observed.is_object()});
    a.calls.insert(a.calls.begin(), {"rename", {{"name", a.name}}, "", json::object()});
    if (const std::vector<std::string>* ids = namesakes_of(namesakes, a.address)) {
      // Names are not unique in the API: a rename must not make them ambiguous any more than a create.
      a.action = Action::Conflict;
      a.calls.clear();
      a.reason = "renaming it to `" + a.name + "` would give two " + kind_plural(kind) + " one name: " +
                 join(*ids, ", ") + " is named so already. Rename or delete that one first, or declare "
                 "another name";
      return a;
    }
  }
  // Said when the declaration of a fork dbform made changes; a service recorded without `fork` (an
  // import, an adoption) was not made by it, and there is nothing to say every plan.
  const json recorded_fork = rec->settings.value("fork", json()), declared_fork = a.after.value("fork", json());
  if (!recorded_fork.is_null() && recorded_fork != declared_fork)
    a.reason = "`fork` is create-time only: its change (" + dump_json(recorded_fork) + " -> " + dump_json(declared_fork) +
               ") is ignored";
  // Recorded at every apply, whatever else changes: an apply that only does this calls no API.
  if (rec->deletion_protection != protection)
    a.changes.push_back({"deletion_protection", rec->deletion_protection, protection, false});
  if (!rec->is_settled() || !rec->pending_password.empty()) {
    a.action = Action::Wait;
    if (!rec->pending_password.empty() && rec->is_settled())
      a.reason = "a new password was recorded but the API has not confirmed it: it is set again";
    if (is_failed_status(rec->status))
      a.reason = "recorded status " + rec->status + ": it will not become READY by itself. Run `dbform state rm " +
                 a.address + "` to create it again";
  } else if (!a.calls.empty() || !a.changes.empty()) {
    a.action = Action::Update;
  } else {
    a.action = Action::NoOp;
  }
  if (const std::string why = paused_outside(*rec, a); !why.empty() && (a.reason.empty() || a.reason.rfind("paused:", 0) == 0))
    a.reason = why;
  // A peering waiting for its peer account is counted in the plan's summary line (render_plan.cpp)
  // rather than repeated as a line of its own every plan; one that failed says why.
  const ResourceType& type = type_of(kind);
  const bool awaiting_peer = rec->status == type.awaiting_status &&
                             !(rec->last_response.is_object() && rec->last_response.value("error_message", json()).is_string() &&
                               !rec->last_response["error_message"].get<std::string>().empty());
  if (*type.accepted_status && a.reason.empty() && rec->status != type.accepted_status &&
      !(awaiting_peer && a.action == Action::NoOp)) {
    // Its acceptance is the peer account's: not waited for, shown until it is active.
    const json message = rec->last_response.is_object() ? rec->last_response.value("error_message", json()) : json();
    a.reason = "peering " + rec->status + (message.is_string() && !message.get<std::string>().empty()
                                              ? ": " + scrub(message.get<std::string>())
                                              : std::string(": the peer account has not accepted it yet")) +
               " (carries no traffic until it is active)";
  }
  const std::string pending = rec->pending_call.is_null() ? "" : rec->pending_call.value("call", std::string("a call"));
  if (pending == "delete") {
    if (a.action == Action::NoOp) a.action = Action::Wait;  // watched: READY, or gone
    a.reason = "an earlier apply --prune sent its delete and stopped before the outcome was known: it is checked "
               "first (a refreshing plan shows whether it still exists; if it is gone, the next apply creates it "
               "again)";
  } else if (!pending.empty() && a.action != Action::NoOp) {
    a.reason = "an earlier run sent " + pending + " and stopped before its answer: the service is checked first, "
               "and a call is sent again only if its change is not there";
  }
  return a;
}

// A recorded resource no longer declared: kept (an orphan), or with --prune deleted unless it is
// protected or its create's outcome is unknown (there is no id to delete).
PlannedAction plan_undeclared(const ResourceRecord& rec, bool prune) {
  PlannedAction a = action_on(rec, Action::Orphan);
  a.deletion_protection = rec.deletion_protection;
  const std::string noun = kind_noun(rec.kind);
  if (prune && rec.deletion_protection) {
    a.action = Action::Conflict;
    a.reason = rec.deleted_outside
                   ? "protected, and already deleted outside dbform: run `dbform state rm " + rec.address +
                         "` to forget it"
                   : "protected: it was declared with deletion_protection: true, so --prune does not delete it. To "
                     "delete it, declare it again with deletion_protection: false and apply, then remove it";
  } else if (prune && rec.id.empty()) {
    a.action = Action::Conflict;
    a.reason = "an earlier create of this " + noun + " stopped before its outcome was known, so there is no id to "
               "delete. Declare it again and apply to finish it, or run `dbform state rm --force " + rec.address +
               "` to forget it";
  } else if (prune) {
    a.action = Action::Delete;
    a.reason = rec.deleted_outside ? "no longer declared; already deleted outside dbform, so it is only forgotten"
                                   : "no longer declared, and --prune: deleted, then forgotten by the state";
  } else if (rec.id.empty()) {
    a.reason = "no longer declared, and an earlier create of it stopped before its outcome was known: kept. "
               "Declare it again and apply to finish it (it is looked up by name first), or run `dbform state rm "
               "--force " + rec.address + "` to forget it";
  } else {
    a.reason = rec.deleted_outside
                   ? "recorded but no longer declared, and deleted outside dbform. Run `dbform state rm " +
                         rec.address + "` to forget it"
                   : std::string("no longer declared: kept") +
                         (rec.deletion_protection ? " (protected: `--prune` does not delete it)"
                                                  : "; `--prune` deletes it") +
                         ". Declare it again, or run `dbform state rm " + rec.address + "` to forget it";
  }
  return a;
}

// What needs its service running (a read replica set's create and calls, a fork's create): the
// service it needs, "" when it needs none.
std::string needs_running(const PlannedAction& a, std::string& what) {
  if (kind_form(a.kind).in_database) {
    if (a.action != Action::Create && a.action != Action::Update && a.action != Action::Delete) return "";
    what = "its roles, schemas, extensions and grants";
    return resource_address(a.project_id, *parent_kind(a.kind), a.parent);
  }
  if (type_of(a.kind).runs_in_parent &&
      (a.action == Action::Create || a.action == Action::Adopt || a.action == Action::Replace ||
       (a.action == Action::Update && !a.calls.empty()))) {
    what = std::string(a.action == Action::Update ? "the calls of" : "the create of") + " " + kind_noun(a.kind) +
           " `" + a.name + "`";
    return resource_address(a.project_id, *parent_kind(a.kind), a.parent);
  }
  const std::string source = a.action == Action::Create ? fork_source(a) : "";
  if (!source.empty()) what = "the fork `" + a.name + "`";
  return source;
}

// A service that is paused is started for what needs it running and stopped again, as it is for
// its own changes (docs/using.md): one rule for every change that needs a running service. The
// stop is made after everything of the run that needs the service (engine/operations.cpp).
void start_paused_services(Plan& plan, const State& state) {
  std::unordered_map<std::string, size_t> by_address;
  for (size_t i = 0; i < plan.actions.size(); ++i) by_address[plan.actions[i].address] = i;
  std::map<size_t, std::vector<std::string>> started_for;  // service action -> what it is started for
  for (const auto& a : plan.actions) {
    std::string what;
    const std::string service = needs_running(a, what);
    auto found = service.empty() ? by_address.end() : by_address.find(service);
    if (found == by_address.end()) continue;
    const PlannedAction& s = plan.actions[found->second];
    const ResourceRecord* rec = state.find(service);
    // A service created, or waited for, by this apply runs by then; one started already stays so.
    if (!rec || (s.action != Action::NoOp && s.action != Action::Update)) continue;
    if (!(current_value(*rec, "paused") == true || is_paused_status(rec->status))) continue;
    if (std::any_of(s.calls.begin(), s.calls.end(), [](const PlannedCall& c) { return c.call == "start"; })) continue;
    auto& whats = started_for[found->second];
    if (std::find(whats.begin(), whats.end(), what) == whats.end()) whats.push_back(what);
  }
  for (auto& [i, whats] : started_for) {
    PlannedAction& s = plan.actions[i];
    auto at = s.calls.begin();
    if (at != s.calls.end() && at->call == "rename") ++at;  // rename first, then start (docs/using.md)
    s.calls.insert(at, {"start", json(), "", {{"paused", false}}});
    if (s.calls.back().call != "stop") s.calls.push_back({"stop", json(), "", {{"paused", true}}});
    s.action = Action::Update;
    const std::string why = "paused: it is started for " + join(whats, " and ") + ", and stopped again";
    s.reason = s.reason.empty() || s.reason.rfind("paused:", 0) == 0 ? why : s.reason + "; " + why;
  }
}

// A service or VPC deleted takes what lives in it along (the API deletes a service's read replica
// sets with it): a delete of one that holds a protected resource is refused like the protected
// one's, whatever path leads to it (--prune, --target).
void refuse_deletes_of_holders(Plan& plan, const State& state) {
  for (auto& a : plan.actions) {
    if (a.action != Action::Delete) continue;
    std::vector<std::string> held;
    for (const auto& rec : state.resources)
      if (rec.deletion_protection && !rec.deleted_outside && rec.project_id == a.project_id && rec.parent == a.name &&
          parent_kind(rec.kind) == a.kind)
        held.push_back(rec.address);
    if (held.empty()) continue;
    a.action = Action::Conflict;
    a.reason = "it holds " + join(held, ", ") + ", which " + (held.size() == 1 ? "is" : "are") +
               " protected (deletion_protection: true), and deleting it would delete " +
               (held.size() == 1 ? "that" : "those") + " too. Declare deletion_protection: false for one apply "
               "first, or declare it again to keep it";
  }
}

}  // namespace

std::string recorded_vpc_id(const State& state, const std::string& project_id, const std::string& name) {
  const ResourceRecord* rec = state.find(resource_address(project_id, ResourceKind::Vpc, name));
  return rec && !rec->deleted_outside && !rec->create_pending ? rec->id : "";
}

namespace {

// Why a `renamed_from` naming nothing recorded is refused, with the recorded names of that kind.
std::string unrecorded_origin(const State& state, const std::string& project_id, ResourceKind kind,
                              const std::string& from) {
  std::vector<std::string> names;
  for (const auto& rec : state.resources)
    if (rec.project_id == project_id && rec.kind == kind) names.push_back(rec.name);
  std::string why = "`renamed_from: " + from + "` is not recorded, so there is nothing to rename (a leftover of an "
                    "earlier rename?). Remove the line to create this " + std::string(kind_noun(kind)) +
                    ", or name the one to rename";
  if (names.empty()) return why + ": project " + project_id + " records no " + kind_plural(kind);
  const std::string close = closest_match(from, names);
  if (!close.empty()) why += "; did you mean `" + close + "`?";
  if (names.size() > 8) names.resize(8), names.push_back("...");
  return why + " (recorded " + kind_plural(kind) + ": " + join(names, ", ") + ")";
}

}  // namespace

std::string namesake_reason(ResourceKind kind, const std::string& address, const std::vector<std::string>& ids,
                            const State& state) {
  const std::string noun = kind_noun(kind);
  const std::string project = address.substr(0, address.find('/'));
  const std::string name = address.substr(address.rfind('/') + 1);
  for (const auto& r : state.resources)
    if (r.kind == kind && r.project_id == project && !r.id.empty() &&
        std::find(ids.begin(), ids.end(), r.id) != ids.end())
      // `state mv` moved its record away (or a rename is half made): importing it again fails.
      return "a " + noun + " of this name exists (id " + r.id + ") and is recorded as " + r.address +
             " (moved there by `dbform state mv`?). Declare `" + r.name + "` instead of `" + name +
             "` and the next plan renames it to `" + r.name + "`, or move the record back: `dbform state mv " +
             r.address + " " + name + "`";
  return "a " + noun + " of this name already exists (" + (ids.size() == 1 ? "id " : "ids ") + join(ids, ", ") +
         ") but the state does not record it, so dbform does not create another one beside it. Check that --state "
         "names the right state; to manage the existing " + noun + ", bring it into the state (`dbform import " +
         address + " " + ids.front() + "`), or declare the new " + noun + " under another name";
}

namespace {

// `import_id` (docs/using.md): an unrecorded resource is planned from what the refresh read of
// that id, as if recorded (apply records it before its calls); once recorded, the line is history.
void plan_import(PlannedAction& a, const std::string& id, const State& recorded, const Imports* imports) {
  if (const ResourceRecord* rec = recorded.find(a.address)) {
    if (rec->id != id && a.reason.empty())
      a.reason = "`import_id: " + id + "` is ignored: it is recorded already, as id " + rec->id;
    return;
  }
  const ImportFinding* found = nullptr;
  if (imports)
    if (auto it = imports->find(a.address); it != imports->end()) found = &it->second;
  a.resource_id = id;
  if (found && found->record) {
    a.import_id = id;
    if (a.action != Action::Conflict && a.reason.empty())
      a.reason = "imported: apply records " + std::string(kind_noun(a.kind)) + " " + id + " as it is now" +
                 (a.calls.empty() ? "" : ", then makes the calls above");
    return;
  }
  a.action = Action::Conflict;
  a.calls.clear();
  a.changes.clear();
  a.reason = found ? found->problem
                   : "`import_id: " + id + "` is read from the API by a plan's refresh, and this plan has no "
                     "reading of it (made with --no-refresh): plan and apply without --no-refresh to import it";
}

// A recorded resource listed under `removed:`: forgotten, never called.
PlannedAction plan_forget(const ResourceRecord& rec, const Location& location) {
  PlannedAction a = action_on(rec, Action::Forget);
  a.location = location;
  a.reason = "listed under `removed:`: its record is dropped and the " + std::string(kind_noun(rec.kind)) +
             " stays in the API, untouched (no call)";
  if (rec.create_pending && rec.id.empty()) {
    a.action = Action::Conflict;
    a.reason = "listed under `removed:`, but its create's outcome is unknown (it may exist without being listed "
               "yet): apply once with it declared, so that dbform settles it, then remove it";
  }
  return a;
}

}  // namespace

Plan make_plan(const Manifest& manifest, const State& recorded, const Namesakes* namesakes, bool prune,
               const Imports* imports) {
  // Renames first: the record of each `renamed_from` moves to its new address (in a copy of the
  // state; apply moves it the same way), and is planned there: a rename call, never create + delete.
  std::optional<State> renamed;
  std::map<std::string, std::string> moved_from;  // new address -> old
  std::map<std::string, std::pair<std::string, std::string>> unmovable;  // new address -> old, why not
  auto rename = [&](const std::string& project_id, ResourceKind kind, const std::string& name,
                    const std::optional<std::string>& from) {
    if (!from) return;
    const std::string old = resource_address(project_id, kind, *from), now = resource_address(project_id, kind, name);
    const ResourceRecord* rec = recorded.find(old);
    if (recorded.find(now)) return;  // renamed already: the line is history
    if (!rec) {
      // Naming nothing recorded (a leftover of an earlier rename, a typo): never a create beside
      // the record it was meant to move, which would then be an orphan.
      unmovable[now] = {old, unrecorded_origin(recorded, project_id, kind, *from)};
      return;
    }
    if (auto why = unmovable_reason(*rec); !why.empty()) {
      unmovable[now] = {old, why};
      return;
    }
    if (!renamed) renamed = recorded;
    move_record(*renamed, old, now, name);
    moved_from[now] = old;
  };
  for (const auto& project : manifest.projects)
    for_each_declaration(project, [&](const Declaration& d) { rename(project.id, d.kind, d.name, d.renamed_from); });
  if (imports)  // planned as if recorded, in the copy: apply records them the same way
    for (const auto& [address, found] : *imports)
      if (found.record && !recorded.find(address)) {
        if (!renamed) renamed = recorded;
        renamed->upsert(*found.record);
      }
  const State& state = renamed ? *renamed : recorded;
  Plan plan;
  plan.state_lineage = state.lineage;
  plan.state_serial = state.serial;
  plan.manifest_digest = manifest.digest;
  plan.prune = prune;
  size_t at_most = state.resources.size();
  for (const auto& project : manifest.projects)
    for_each_declaration(project, [&](const Declaration&) { ++at_most; });
  plan.actions.reserve(at_most);
  std::unordered_set<std::string> declared;
  std::map<std::string, std::string> import_ids;  // address -> its declared import_id
  for (const auto& project : manifest.projects)
    for_each_declaration(project, [&](const Declaration& d) {
      if (kind_form(d.kind).in_database) return plan.actions.push_back(plan_database_object(project.id, d, state));
      plan.actions.push_back(plan_declared(
          project.id, {d.kind, d.parent, d.name, d.settings(), d.deletion_protection, d.location}, state, namesakes,
          prune));
      if (d.import_id) import_ids[plan.actions.back().address] = *d.import_id;
    });
  for (auto& a : plan.actions) {
    if (auto stuck = unmovable.find(a.address); stuck != unmovable.end()) {
      a.action = Action::Conflict;
      a.reason = stuck->second.second.rfind("`renamed_from", 0) == 0
                     ? stuck->second.second
                     : "renamed from `" + stuck->second.first + "`, but " + stuck->second.second;
      a.calls.clear();
      continue;
    }
    auto from = moved_from.find(a.address);
    if (from == moved_from.end()) continue;
    a.renamed_from = from->second;
    for (auto& c : a.changes) c.drift = c.drift && c.field != "name";  // a rename of our own
    if (a.action == Action::Update || a.action == Action::NoOp || a.action == Action::Wait)
      a.reason = "renamed from `" + from->second + "`: its record moves here" +
                 (a.calls.empty() || a.calls.front().call != "rename" ? "" : ", and one rename call is made");
  }
  for (auto& a : plan.actions)
    if (auto id = import_ids.find(a.address); id != import_ids.end()) plan_import(a, id->second, recorded, imports);
  start_paused_services(plan, state);
  declared.reserve(plan.actions.size());
  for (const auto& a : plan.actions) declared.insert(a.address);
  for (const auto& [now, stuck] : unmovable) declared.insert(stuck.first);  // kept where it is, not an orphan
  for (const auto& project : manifest.projects)
    for (const auto& removed : project.removed) {
      bool recorded_there = false;  // the record, and what lives in it (a service's sets, a VPC's peerings)
      for (const auto& rec : state.resources)
        if (rec.address == removed.address || rec.address.rfind(removed.address + "/", 0) == 0) {
          recorded_there = true;
          if (declared.insert(rec.address).second) plan.actions.push_back(plan_forget(rec, removed.location));
        }
      if (recorded_there || !declared.insert(removed.address).second) continue;
      const auto parts = parse_address(removed.address);
      PlannedAction shown;
      shown.kind = parts->kind;
      shown.address = removed.address;
      shown.project_id = parts->project_id;
      shown.parent = parts->parent;
      shown.name = parts->name;
      shown.location = removed.location;
      shown.reason = "listed under `removed:` and not recorded: nothing to forget";
      plan.actions.push_back(std::move(shown));
    }
  for (const auto& rec : state.resources)
    // A preview's forks belong to the `previews:` block: never orphans, never pruned (docs/previews.md).
    if (!declared.count(rec.address) && !is_preview_record(rec)) plan.actions.push_back(plan_undeclared(rec, prune));
  refuse_deletes_of_holders(plan, state);
  plan.summary = summarize(plan.actions);
  return plan;
}

void limit_deletes(Plan& plan) {
  const auto destroyed = std::count_if(plan.actions.begin(), plan.actions.end(), [](const PlannedAction& a) {
    return a.action == Action::Delete || a.action == Action::Replace;
  });
  if (destroyed <= plan.max_deletes) return;
  const std::string count = std::to_string(destroyed);
  const std::string why = "the plan's " + count + " deletes (replacements included) are more than --max-deletes " +
                          std::to_string(plan.max_deletes) +
                          " allows, so none is made. If a manifest file or a project's declarations went missing, "
                          "restore them; if all " + count + " deletes are meant, plan again with --max-deletes " + count;
  for (auto& a : plan.actions) {
    if (a.action != Action::Delete && a.action != Action::Replace) continue;
    a.reason = std::string(a.action == Action::Delete ? "would be deleted" : "would be replaced") + ", but " + why;
    a.action = Action::Conflict;
  }
  plan.summary = summarize(plan.actions);
}

}  // namespace dbform
