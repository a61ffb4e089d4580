#pragma once
// What a run (engine/apply_run.h) records and refuses before its first call, over its parts
// (RunContext) and without a way into its loop: renamed records,
// imports and forgets, declared protection, the name guard and the delete guard. Each is saved
// with the run's first write, and what is refused fails by the run's one failure rule.
#include <string>

#include "engine/run_context.h"
#include "plan/model.h"
#include "state/model.h"

namespace dbform::scheduling {

class Guards {
 public:
  // Over the run's graph (built by then for the guards that refuse operations) and its ledger.
  explicit Guards(RunContext& run) : run_(run) {}

  // The records of renames move to their new addresses, as the plan was made.
  void move_renamed(const Plan& plan);
  // Imports (their records put in the state by the caller from what its refresh read) and records
  // forgotten (`removed:`); neither calls the API.
  void record_imports_and_forgets(const Plan& plan);
  // Declared deletion protection, recorded at every apply: whatever else the run did, every
  // declared resource the state records carries the protection its declaration says.
  void record_protection(const Plan& plan);
  // The name guard: a planned create or rename whose name exists unrecorded in the API is not sent.
  // Nothing is listed when the run is stopping already.
  void guard_names(const Plan& plan, bool stopping);
  // A delete of an id that a declared resource's record holds too (a hand-edited state) is refused
  // before anything is sent: the state's reader refuses such a state, and this holds whatever
  // state the engine is given.
  void guard_deletes(const Plan& plan);

 private:
  // The address of what a delete of `a` would take with it that is protected: the resource itself
  // (its record, or its declaration in a replacement) or a resource living in it; "" for none.
  std::string protected_in(const PlannedAction& a) const;
  static std::string id_key(const ResourceRecord& r);

  RunContext& run_;
};

}  // namespace dbform::scheduling
