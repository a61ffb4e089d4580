// What a run records and refuses before its first call (engine/apply_guards.h): renamed records,
// imports and forgets, declared protection, the name guard and the delete guard.
#include "engine/apply_guards.h"

#include <algorithm>
#include <map>

#include "engine/progress.h"
#include "engine/steps.h"
#include "read/namesakes.h"
#include "plan/differ.h"
#include "util/text.h"

namespace dbform::scheduling {

void Guards::move_renamed(const Plan& plan) {
  for (const auto& a : plan.actions)
    if (!a.renamed_from.empty() && run_.ledger.state().find(a.renamed_from) && !run_.ledger.state().find(a.address))
      for (const auto& address : move_record(run_.ledger.state(), a.renamed_from, a.address, a.name))
        run_.ledger.changed(address);
}

void Guards::record_imports_and_forgets(const Plan& plan) {
  for (const auto& a : plan.actions) {
    if (!a.import_id.empty() && a.action != Action::Conflict && run_.ledger.state().find(a.address)) {
      run_.ledger.changed(a.address);
      ++run_.ledger.result().imported;
      run_.ledger.emit({EventKind::Imported, a.address, a.import_id, run_.ledger.state().find(a.address)->status, Duration(0), ""});
    } else if (a.action == Action::Forget && run_.ledger.state().remove(a.address)) {
      run_.ledger.changed(a.address);
      ++run_.ledger.result().forgotten;
      run_.ledger.emit({EventKind::Forgotten, a.address, a.resource_id, "", Duration(0), ""});
    }
  }
}

void Guards::guard_names(const Plan& plan, bool stopping) {
  const size_t count = run_.graph.ops.size();
  auto claim = [&](size_t o) { return run_.steps.of(o).claims_name(o); };
  auto is_create = [&](size_t o) { return claim(o) == NameClaim::Create; };
  auto is_rename = [&](size_t o) { return claim(o) == NameClaim::Rename; };
  bool any = false;
  for (size_t o = 0; o < count && !any; ++o) any = claim(o) != NameClaim::None;
  if (run_.options.names_checked || stopping || !any) return;
  NamesakeScan scan = scan_namesakes(run_.api, plan, run_.ledger.state(), run_.keys, run_.options.parallelism);
  // A project where a declared name exists unrecorded has another writer (another state, or an
  // apply of one still running) or a stale plan: none of its creates go, not only the namesakes'.
  std::map<std::string, std::vector<std::string>> taken;  // project -> its creates' addresses with a namesake
  for (size_t o = 0; o < count; ++o)
    if (is_create(o) && scan.found.count(run_.graph.action_of(o).address))
      taken[run_.graph.action_of(o).project_id].push_back(run_.graph.action_of(o).address);
  for (size_t o = 0; o < count; ++o) {
    if (is_rename(o)) {
      const PlannedAction& a = run_.graph.action_of(o);
      auto error = scan.errors.find(a.project_id);
      auto found = scan.found.find(a.address);
      if (error != scan.errors.end())
        run_.progress.fail(o, "not renamed: could not list project " + a.project_id + " to check that no `" + a.name +
                       "` exists already: " + error->second);
      else if (found != scan.found.end())
        run_.progress.fail(o, "not renamed to `" + a.name + "`: " + kind_plural(a.kind) + " " + join(found->second, ", ") +
                       " of that name exist already without being recorded, and names are not unique in the "
                       "API (a rename would make two of one name). Rename or delete that one first, or declare "
                       "another name");
      continue;
    }
    if (!is_create(o)) continue;
    const PlannedAction& a = run_.graph.action_of(o);
    auto error = scan.errors.find(a.project_id);
    auto found = scan.found.find(a.address);
    auto others = taken.find(a.project_id);
    if (error != scan.errors.end())
      run_.progress.fail(o, "not created: could not list project " + a.project_id + " to check that no `" + a.name +
                     "` exists already: " + error->second);
    else if (found != scan.found.end())
      run_.progress.fail(o, "not created: " + namesake_reason(a.kind, a.address, found->second, run_.ledger.state()));
    else if (others != taken.end())
      run_.progress.fail(o, "not created: in project " + a.project_id + ", " + join(others->second, ", ") +
                     " exist(s) already without being recorded, so another state or a running apply may be "
                     "creating there. Run `dbform plan` again: it shows them as conflicts");
  }
  run_.ledger.flush_events();
}

void Guards::guard_deletes(const Plan& plan) {
  std::map<std::string, std::string> declared;  // kind/project/id -> address
  for (const auto& a : plan.actions) {
    const ResourceRecord* rec = run_.ledger.state().find(a.address);
    const bool leaving = a.action == Action::Delete || a.action == Action::Orphan || a.action == Action::Replace;
    if (!leaving && rec && !rec->id.empty())
      declared.emplace(id_key(*rec), a.address);
  }
  for (size_t o = 0; o < run_.graph.ops.size(); ++o) {
    if (!run_.steps.of(o).traits.deletes) continue;
    const std::string& address = run_.graph.action_of(o).address;
    const ResourceRecord* rec = run_.ledger.state().find(address);
    auto owner = rec ? declared.find(id_key(*rec)) : declared.end();
    // The plan refuses these; an engine given another plan (or a state edited since) does too.
    if (const std::string holds = protected_in(run_.graph.action_of(o)); !holds.empty())
      run_.progress.fail(o, "not deleted: " + holds + " is protected (deletion_protection: true, declared or recorded)");
    else if (owner != declared.end())
      run_.progress.fail(o, "not deleted: its id " + rec->id + " is also the id of " + owner->second +
                     ", which is declared; the state was edited by hand. `dbform state rm " + address +
                     "` removes the wrong record");
  }
  run_.ledger.flush_events();
}

std::string Guards::protected_in(const PlannedAction& a) const {
  const ResourceRecord* rec = run_.ledger.state().find(a.address);
  if ((rec && rec->deletion_protection) || (a.action == Action::Replace && a.deletion_protection)) return a.address;
  for (const auto& r : run_.ledger.state().resources)
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
    ResourceRecord* rec = run_.ledger.state().find(a.address);
    if (!rec || rec->deletion_protection == a.deletion_protection) continue;
    rec->deletion_protection = a.deletion_protection;
    run_.ledger.changed(a.address);
  }
}

}  // namespace dbform::scheduling
