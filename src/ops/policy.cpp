#include "ops/policy.h"

#include "policy/evaluate.h"
#include "util/error.h"
#include "util/text.h"

namespace dbform {

namespace {

UtcTime seconds_of(std::chrono::system_clock::time_point t) {
  return std::chrono::time_point_cast<std::chrono::seconds>(t);
}

// A fork as the rules see it: what `preview up` creates it with, its size its source's when the
// block sets none (a fork carries its source's size).
PolicySubject fork_subject(const PreviewUpPlan& up, const PlannedAction& a, const State& state) {
  PolicySubject s;
  s.kind = "preview";
  s.address = a.address;
  s.actions = {"create"};
  const nlohmann::json& after = a.after.is_object() ? a.after : nlohmann::json::object();
  const std::string source = after.contains("fork") ? after["fork"].value("from", "") : "";
  if (const ResourceRecord* rec = state.find(resource_address(up.project_id, ResourceKind::Service, source))) {
    for (const char* field : {"cpu_millis", "memory_gbs"}) {
      if (rec->settings.contains(field)) s.fields[field] = rec->settings[field];
      if (rec->observed.is_object() && rec->observed.contains(field)) s.fields[field] = rec->observed[field];
    }
  }
  for (const char* field : {"cpu_millis", "memory_gbs", "environment_tag"})
    if (after.contains(field)) s.fields[field] = after[field];
  s.fields["project_id"] = up.project_id;
  s.fields["preview"] = up.name;
  s.fields["service"] = source;
  s.fields["name"] = a.name;
  if (after.contains("fork")) s.fields["strategy"] = after["fork"].value("strategy", "");
  return s;
}

std::string violation_line(const PolicyViolation& v) {
  return "[" + std::string(v.mandatory ? "mandatory" : "advisory") + "] " + v.rule + ": " + v.address + " " + v.field +
         " is " + (v.found.is_null() ? "not set" : v.found.is_string() ? v.found.get<std::string>() : v.found.dump()) +
         ", requires " + v.required + (v.message.empty() ? "" : " (" + v.message + ")");
}

}  // namespace

PolicyCheckOutcome policy_check_operation(const PolicyCheckRequest& r) {
  PolicyCheckOutcome out;
  auto stored = r.store.read();
  out.state_missing = !stored;
  const State state = stored ? std::move(*stored) : State{};
  const auto subjects = state_subjects(state, DeclaredWaivers(r.manifest));
  out.resources = subjects.size();
  out.check = evaluate_policies(r.policies, subjects, seconds_of(r.clock.wall_now()));
  return out;
}

PolicyCheck check_preview_policies(const std::vector<PreviewUpPlan>& plans, const State& state,
                                   const PolicySet& policies, UtcTime now) {
  std::vector<PolicySubject> subjects;
  for (const auto& up : plans)
    for (const auto& a : up.forks.actions) subjects.push_back(fork_subject(up, a, state));
  PolicyCheck check = evaluate_policies(policies, subjects, now);
  std::vector<std::string> refused;
  for (const auto& v : check.violations)
    if (v.mandatory) refused.push_back(violation_line(v));
  if (!refused.empty())
    throw UsageError("the preview breaks " + std::to_string(refused.size()) +
                     " mandatory policy rule(s), so nothing was forked:\n  " + join(refused, "\n  ") +
                     "\nChange the `previews:` block (its cpu_millis and memory_gbs size each fork) or the rules");
  return check;
}

}  // namespace dbform
