// What a run records and refuses before its first call (engine/apply_guards.h): renamed records,
// imports and forgets, declared protection, the name guard and the delete guard.
#include "engine/apply_guards.h"

#include <algorithm>
#include <map>

#include "engine/apply_run.h"
#include "read/namesakes.h"
#include "plan/differ.h"
#include "util/text.h"

namespace dbform::scheduling {

void Guards::move_renamed(const Plan& plan) {
  for (const auto& a : plan.actions)
    if (!a.renamed_from.empty() && run_.state_.find(a.renamed_from) && !run_.state_.find(a.address))
      for (const auto& address : move_record(run_.state_, a.renamed_from, a.address, a.name))
        run_.changed_.insert(address);
}

void Guards::record_imports_and_forgets(const Plan& plan) {
  for (const auto& a : plan.actions) {
    if (!a.import_id.empty() && a.action != Action::Conflict && run_.state_.find(a.address)) {
      run_.changed_.insert(a.address);
      ++run_.result_.imported;
      run_.emit({EventKind::Imported, a.address, a.import_id, run_.state_.find(a.address)->status, Duration(0), ""});
    } else if (a.action == Action::Forget && run_.state_.remove(a.address)) {
      run_.changed_.insert(a.address);
      ++run_.result_.forgotten;
      run_.emit({EventKind::Forgotten, a.address, a.resource_id, "", Duration(0), ""});
    }
  }
}

void Guards::guard_names(const Plan& plan) {
  auto is_create = [&](const Op& op) {
    const Action action = op.what.type == OpType::Create ? run_.items_[op.item].action->action : Action::NoOp;
    return action == Action::Create || action == Action::Replace;
  };
  auto is_rename = [&](const Op& op) {
    return op.what.type == OpType::Call && run_.items_[op.item].action->calls[op.what.call].call == "rename";
  };
  auto claims = [&](const Op& op) { return is_create(op) || is_rename(op); };
  if (run_.options_.names_checked || run_.stopping() || std::none_of(run_.ops_.begin(), run_.ops_.end(), claims))
    return;
  NamesakeScan scan = scan_namesakes(run_.api_, plan, run_.state_, run_.keys_, run_.options_.parallelism);
  // A project where a declared name exists unrecorded has another writer (another state, or an
  // apply of one still running) or a stale plan: none of its creates go, not only the namesakes'.
  std::map<std::string, std::vector<std::string>> taken;  // project -> its creates' addresses with a namesake
  for (const auto& op : run_.ops_)
    if (const PlannedAction& a = *run_.items_[op.item].action; is_create(op) && scan.found.count(a.address))
      taken[a.project_id].push_back(a.address);
  for (size_t o = 0; o < run_.ops_.size(); ++o) {
    if (is_rename(run_.ops_[o])) {
      const PlannedAction& a = *run_.items_[run_.ops_[o].item].action;
      auto error = scan.errors.find(a.project_id);
      auto found = scan.found.find(a.address);
      if (error != scan.errors.end())
        run_.fail_op(o, "not renamed: could not list project " + a.project_id + " to check that no `" + a.name +
                       "` exists already: " + error->second);
      else if (found != scan.found.end())
        run_.fail_op(o, "not renamed to `" + a.name + "`: " + kind_plural(a.kind) + " " + join(found->second, ", ") +
                       " of that name exist already without being recorded, and names are not unique in the "
                       "API (a rename would make two of one name). Rename or delete that one first, or declare "
                       "another name");
      continue;
    }
    if (!is_create(run_.ops_[o])) continue;
    const PlannedAction& a = *run_.items_[run_.ops_[o].item].action;
    auto error = scan.errors.find(a.project_id);
    auto found = scan.found.find(a.address);
    auto others = taken.find(a.project_id);
    if (error != scan.errors.end())
      run_.fail_op(o, "not created: could not list project " + a.project_id + " to check that no `" + a.name +
                     "` exists already: " + error->second);
    else if (found != scan.found.end())
      run_.fail_op(o, "not created: " + namesake_reason(a.kind, a.address, found->second, run_.state_));
    else if (others != taken.end())
      run_.fail_op(o, "not created: in project " + a.project_id + ", " + join(others->second, ", ") +
                     " exist(s) already without being recorded, so another state or a running apply may be "
                     "creating there. Run `dbform plan` again: it shows them as conflicts");
  }
  run_.flush_events();
}

void Guards::guard_deletes(const Plan& plan) {
  std::map<std::string, std::string> declared;  // kind/project/id -> address
  for (const auto& a : plan.actions) {
    const ResourceRecord* rec = run_.state_.find(a.address);
    const bool leaving = a.action == Action::Delete || a.action == Action::Orphan || a.action == Action::Replace;
    if (!leaving && rec && !rec->id.empty())
      declared.emplace(id_key(*rec), a.address);
  }
  for (size_t o = 0; o < run_.ops_.size(); ++o) {
    if (run_.ops_[o].what.type != OpType::Delete) continue;
    const std::string& address = run_.items_[run_.ops_[o].item].action->address;
    const ResourceRecord* rec = run_.state_.find(address);
    auto owner = rec ? declared.find(id_key(*rec)) : declared.end();
    // The plan refuses these; an engine given another plan (or a state edited since) does too.
    if (const std::string holds = protected_in(*run_.items_[run_.ops_[o].item].action); !holds.empty())
      run_.fail_op(o, "not deleted: " + holds + " is protected (deletion_protection: true, declared or recorded)");
    else if (owner != declared.end())
      run_.fail_op(o, "not deleted: its id " + rec->id + " is also the id of " + owner->second +
                     ", which is declared; the state was edited by hand. `dbform state rm " + address +
                     "` removes the wrong record");
  }
  run_.flush_events();
}

std::string Guards::protected_in(const PlannedAction& a) const {
  const ResourceRecord* rec = run_.state_.find(a.address);
  if ((rec && rec->deletion_protection) || (a.action == Action::Replace && a.deletion_protection)) return a.address;
  for (const auto& r : run_.state_.resources)
    if (r.deletion_protection && !r.deleted_outside && r.project_id == a.project_id && r.parent == a.name &&
        parent_kind(r.kind) == a.kind)
      return r.address;
  return "";
}

std::string Guards::id_key(const ResourceRecord& r) {
  return std::string(kind_name(r.kind)) + "/" + r.project_id + "/" + r.id;
}

void Guards::record_protection(const Plan& plan) {
  for (const auto& a : plan.actions) {
    if (a.action == Action::Orphan || a.action == Action::Delete || a.action == Action::Conflict) continue;
    ResourceRecord* rec = run_.state_.find(a.address);
    if (!rec || rec->deletion_protection == a.deletion_protection) continue;
    rec->deletion_protection = a.deletion_protection;
    run_.changed_.insert(a.address);
  }
}

}  // namespace dbform::scheduling
