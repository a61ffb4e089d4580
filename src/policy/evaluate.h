#pragma once
// Checks the rules against what each resource will be: a pure function of the rules, the plan (or
// the state) and the time; no API call. Waivers (a declaration's `policy_waivers`) exempt a
// resource from a waivable rule until they expire; an expired waiver, or one naming a rule that is
// not waivable or not defined, is itself a violation.
#include <string>
#include <unordered_map>
#include <vector>

#include <nlohmann/json.hpp>

#include "manifest/model.h"
#include "plan/model.h"
#include "policy/rules.h"
#include "state/model.h"
#include "util/clock.h"

namespace dbform {

// One resource as the rules see it.
struct PolicySubject {
  std::string kind;  // a policy kind: service, vpc, replica_set, peering, preview
  std::string address;
  // Field -> value after the plan; absent: not set. `fields` first, then each of `layers` from the
  // last (the settings objects of the plan and the state, not copied: a plan of 10,000 services
  // is checked at the cost of its lookups).
  nlohmann::json fields = nlohmann::json::object();
  std::vector<const nlohmann::json*> layers;
  std::vector<std::string> actions;                   // what the plan does to it, as forbid_actions names them
  const std::vector<PolicyWaiver>* waivers = nullptr;  // its declaration's, if any
};

// The waivers of every declaration of the manifests, by address.
class DeclaredWaivers {
 public:
  explicit DeclaredWaivers(const Manifest* manifest);
  const std::vector<PolicyWaiver>* of(const std::string& address) const;

 private:
  std::unordered_map<std::string, const std::vector<PolicyWaiver>*> by_address_;
};

// Each action of the plan as a subject: the fields declared, else recorded (the settings dbform
// set, overlaid with what the API last showed); a delete's or a forgotten record's fields are its
// record's and only forbid_actions applies to it (it will not be dbform's after the plan).
std::vector<PolicySubject> plan_subjects(const Plan& plan, const State& state, const DeclaredWaivers& waivers);
// Each record of the state (a preview's fork as kind `preview`), with no action: an audit.
// Subjects point into `plan` and `state`: evaluate them while those live.
std::vector<PolicySubject> state_subjects(const State& state, const DeclaredWaivers& waivers);

// The rules checked, the violations and the waivers in force (`now`: what expires).
PolicyCheck evaluate_policies(const PolicySet& set, const std::vector<PolicySubject>& subjects, UtcTime now);

// Checks the plan: sets plan.policy and plan.summary.policy (its mandatory violations, each
// refusing the plan as a conflict does). Nothing is checked, not even waivers, without rule files.
void check_plan_policies(Plan& plan, const State& state, const Manifest& manifest, const PolicySet& set,
                         UtcTime now);

// "== PROD", ">= 1 and <= 4", "in [DEV, PROD]", "present": what a condition requires, for messages.
std::string describe_condition(const PolicyCondition& c);

}  // namespace dbform
