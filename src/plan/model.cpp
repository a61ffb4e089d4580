#include "plan/model.h"

#include <algorithm>

namespace dbform {

const char* action_name(Action a) {
  switch (a) {
    case Action::Create: return "create";
    case Action::NoOp: return "no-op";
    case Action::Wait: return "wait";
    case Action::Adopt: return "adopt";
    case Action::Update: return "update";
    case Action::Delete: return "delete";
    case Action::Replace: return "replace";
    case Action::Conflict: return "conflict";
    case Action::Orphan: return "orphan";
    case Action::Forget: return "forget";
  }
  return "?";
}

PlannedAction action_on(const ResourceRecord& rec, Action action) {
  PlannedAction a;
  a.action = action;
  a.kind = rec.kind;
  a.address = rec.address;
  a.project_id = rec.project_id;
  a.parent = rec.parent;
  a.name = rec.name;
  a.resource_id = rec.id;
  a.status = rec.status;
  a.before = rec.settings;
  return a;
}

bool is_unrecorded_removal(const PlannedAction& a) {
  return a.action == Action::NoOp && a.before.is_null() && a.after.is_null() && a.resource_id.empty();
}

int PolicyCheck::mandatory() const {
  return static_cast<int>(std::count_if(violations.begin(), violations.end(), [](const auto& v) { return v.mandatory; }));
}

int PolicyCheck::advisory() const { return static_cast<int>(violations.size()) - mandatory(); }

PlanSummary summarize(const std::vector<PlannedAction>& actions) {
  PlanSummary s;
  for (const auto& a : actions) {
    if (!a.import_id.empty() && a.action != Action::Conflict) ++s.import;
    switch (a.action) {
      case Action::Create: ++s.create; break;
      case Action::Wait: ++s.wait; break;
      case Action::Adopt: ++s.adopt; break;
      case Action::Update: ++s.update; break;
      case Action::Delete: ++s.del; break;
      case Action::Replace: ++s.replace; break;
      case Action::NoOp: ++(is_unrecorded_removal(a) ? s.nothing_to_forget : s.noop); break;
      case Action::Conflict: ++s.conflict; break;
      case Action::Orphan:
        ++s.orphan;
        if (!a.deletion_protection && !a.resource_id.empty()) ++s.prunable;
        break;
      case Action::Forget: ++s.forget; break;
    }
  }
  return s;
}

}  // namespace dbform
