#include <catch2/catch.hpp>

#include "manifest/loader.h"
#include "plan/differ.h"
#include "policy/evaluate.h"
#include "policy/loader.h"
#include "state/test_support.h"
#include "util/clock.h"

using namespace dbform;

namespace {

const EnvLookup kNoEnv = [](const std::string&) -> std::optional<std::string> { return std::nullopt; };

PolicySet rules_of(const std::string& text) {
  Diagnostics diags;
  PolicySet set = load_policy_text("p.yaml", text, diags);
  INFO(diags.str());
  REQUIRE(!diags.has_errors());
  return set;
}

std::string errors_of(const std::string& text) {
  Diagnostics diags;
  load_policy_text("p.yaml", text, diags);
  return diags.str();
}

Manifest manifest_of(const std::string& text) {
  Diagnostics diags;
  Manifest m = load_manifest_text("m.yaml", text, kNoEnv, diags);
  INFO(diags.str());
  REQUIRE(!diags.has_errors());
  return m;
}

UtcTime at(const std::string& text) { return *parse_expiry(text); }

const char* kBaseline = R"(version: 1
rules:
  - id: prod-needs-ha
    level: mandatory
    kind: service
    where: {environment_tag: PROD}
    require: {replica_count: {">=": 1}, deletion_protection: true}
    message: PROD services need an HA replica and deletion protection
    waivable: true
  - id: no-prod-deletes
    level: mandatory
    kind: service
    where: {environment_tag: PROD}
    forbid_actions: [delete, replace]
  - id: no-shared-prod
    level: advisory
    kind: service
    where: {environment_tag: PROD}
    require: {cpu_millis: {"!=": shared}}
)";

// The plan of `manifest` against an empty state, checked at `now`.
Plan checked(const std::string& manifest, const std::string& now = "2026-06-01T00:00:00Z") {
  const Manifest m = manifest_of(manifest);
  const State state = new_state();
  Plan plan = make_plan(m, state, nullptr, false, nullptr);
  check_plan_policies(plan, state, m, rules_of(kBaseline), at(now));
  return plan;
}

std::string service(const std::string& extra) {
  return "version: 1\nprojects:\n  - id: acme\n    services:\n      - name: orders\n        environment_tag: PROD\n" + extra;
}

}  // namespace

TEST_CASE("an expiry is a date (through its last second, UTC) or a UTC time, in years 1970 to 9999") {
  CHECK(parse_expiry("2027-01-31") == at("2027-02-01T00:00:00Z"));
  CHECK(parse_expiry("9999-12-31T23:59:59Z").has_value());
  CHECK(parse_expiry("9999-12-31").has_value());
  CHECK(parse_expiry("1970-01-01T00:00:00Z") == UtcTime{});
  CHECK_FALSE(parse_expiry("1969-12-31"));
  CHECK_FALSE(parse_expiry("2027-02-29"));
  CHECK(parse_expiry("2028-02-29"));
  CHECK_FALSE(parse_expiry("2027-01-31T24:00:00Z"));
  CHECK_FALSE(parse_expiry("2027-1-31"));
  CHECK_FALSE(parse_expiry("2027-01-31 00:00:00"));
}

TEST_CASE("a rule file is read strictly: unknown keys, kinds, fields and values are located errors with a guess") {
  CHECK(rules_of(kBaseline).rules.size() == 3);
  const std::string head = "version: 1\nrules:\n  - id: r\n    level: mandatory\n";
  CHECK_THAT(errors_of(head + "    kind: service\n    requires: {paused: false}\n"),
             Catch::Contains("p.yaml:6:5") && Catch::Contains("unknown key `requires` in a rule") &&
                 Catch::Contains("did you mean `require`?"));
  CHECK_THAT(errors_of(head + "    kind: servce\n    require: {paused: false}\n"),
             Catch::Contains("p.yaml:5:11") && Catch::Contains("unknown kind `servce`") &&
                 Catch::Contains("did you mean `service`?"));
  CHECK_THAT(errors_of(head + "    kind: service\n    require: {replica_cout: 1}\n"),
             Catch::Contains("p.yaml:6:15") && Catch::Contains("unknown field `replica_cout` of a service") &&
                 Catch::Contains("did you mean `replica_count`?"));
  CHECK_THAT(errors_of(head + "    kind: service\n    where: {environment_tag: prod}\n    require: {paused: false}\n"),
             Catch::Contains("expected DEV or PROD") && Catch::Contains("did you mean `PROD`?"));
  CHECK_THAT(errors_of(head + "    kind: service\n    require: {region_code: {\">=\": 1}}\n"),
             Catch::Contains("compares numbers"));
  CHECK_THAT(errors_of(head + "    kind: service\n"), Catch::Contains("needs `require` or `forbid_actions`"));
  CHECK_THAT(errors_of(head + "    kind: service\n    forbid_actions: [destroy]\n"),
             Catch::Contains("unknown plan action `destroy`"));
  CHECK_THAT(errors_of(head + "    kind: vpc\n    require: {paused: false}\n"), Catch::Contains("unknown field `paused` of a vpc"));
  CHECK_THAT(errors_of("version: 1\nrules:\n  - id: Prod_HA\n    level: mandatory\n    kind: vpc\n    forbid_actions: [delete]\n"),
             Catch::Contains("expected a rule id"));
  CHECK_THAT(errors_of(head + "    kind: service\n    forbid_actions: [delete]\n  - id: r\n    level: advisory\n    kind: vpc\n"
                              "    forbid_actions: [delete]\n"),
             Catch::Contains("rule `r` is defined twice") && Catch::Contains("the first is at p.yaml:3:5"));
}

TEST_CASE("a rule file's digest is of its contents, whatever its name") {
  Diagnostics diags;
  CHECK(load_policy_text("a.yaml", kBaseline, diags).digest == load_policy_text("b.yaml", kBaseline, diags).digest);
  CHECK(load_policy_text("a.yaml", kBaseline, diags).digest !=
        load_policy_text("a.yaml", std::string(kBaseline) + "\n# changed\n", diags).digest);
  CHECK(split_policy_path("a.yaml::b.yaml:") == std::vector<std::string>{"a.yaml", "b.yaml"});
}

TEST_CASE("a plan is checked against what each resource will be, and each violation names rule, field, found and required") {
  Plan plan = checked(service("        replica_count: 0\n        cpu_millis: shared\n"));
  REQUIRE(plan.policy.violations.size() == 3);
  const auto& v = plan.policy.violations[0];
  CHECK(v.rule == "prod-needs-ha");
  CHECK(v.mandatory);
  CHECK(v.address == "acme/services/orders");
  CHECK(v.field == "replica_count");
  CHECK(v.found == 0);
  CHECK(v.required == ">= 1");
  CHECK(v.message == "PROD services need an HA replica and deletion protection");
  CHECK(plan.policy.violations[1].field == "deletion_protection");
  CHECK(plan.policy.violations[1].found == false);
  CHECK(plan.policy.violations[2].rule == "no-shared-prod");
  CHECK_FALSE(plan.policy.violations[2].mandatory);
  CHECK(plan.policy.violations[2].required == "!= shared");
  CHECK(plan.summary.policy == 2);  // the advisory one refuses nothing
  CHECK(plan.summary.has_conflicts());
  CHECK(plan.policy.rules.size() == 3);

  // A field not set is no number: `>= 1` does not hold; the DEV service is not a subject.
  Plan unset = checked(service("        deletion_protection: true\n      - name: dev\n        environment_tag: DEV\n"));
  REQUIRE(unset.policy.violations.size() == 1);
  CHECK(unset.policy.violations[0].found.is_null());

  CHECK(checked(service("        replica_count: 1\n        deletion_protection: true\n")).policy.violations.empty());
}

TEST_CASE("a waiver exempts a resource from a waivable rule until it expires, and other waivers are violations themselves") {
  const std::string waiver = "        policy_waivers:\n          - rule: prod-needs-ha\n            reason: migration\n"
                             "            expires: 2027-01-31\n";
  Plan waived = checked(service(waiver), "2027-01-31T23:59:59Z");
  CHECK(waived.policy.violations.empty());
  REQUIRE(waived.policy.waivers.size() == 1);
  CHECK(waived.policy.waivers[0].address == "acme/services/orders");
  CHECK(waived.policy.waivers[0].reason == "migration");
  CHECK(waived.policy.waivers[0].expires == "2027-01-31");

  Plan expired = checked(service(waiver), "2027-02-01T00:00:00Z");
  CHECK(expired.policy.waivers.empty());
  REQUIRE(expired.policy.violations.size() == 3);  // the rule's two fields, and the waiver
  CHECK(expired.policy.violations[2].field == "policy_waivers[0].expires");
  CHECK(expired.policy.violations[2].found == "2027-01-31");
  CHECK_THAT(expired.policy.violations[2].message, Catch::Contains("expired (2027-01-31)"));

  Plan not_waivable = checked(service("        replica_count: 1\n        deletion_protection: true\n        policy_waivers:\n"
                                      "          - {rule: no-prod-deletes, reason: r, expires: 9999-12-31}\n"));
  REQUIRE(not_waivable.policy.violations.size() == 1);
  CHECK_THAT(not_waivable.policy.violations[0].message, Catch::Contains("may not be waived"));

  Plan unknown = checked(service("        replica_count: 1\n        deletion_protection: true\n        policy_waivers:\n"
                                 "          - {rule: prod-need-ha, reason: r, expires: 9999-12-31}\n"));
  REQUIRE(unknown.policy.violations.size() == 1);
  CHECK(unknown.policy.violations[0].mandatory);
  CHECK_THAT(unknown.policy.violations[0].message, Catch::Contains("did you mean `prod-needs-ha`?"));
}

TEST_CASE("forbid_actions names what the plan does to a resource, as the record shows it") {
  const Manifest declared = manifest_of(service("        replica_count: 1\n        deletion_protection: true\n"));
  State state = new_state();
  ResourceRecord rec = test::recorded_service("acme", "old", "s1", "READY");
  rec.settings = {{"environment_tag", "PROD"}};
  state.upsert(rec);
  Plan plan = make_plan(declared, state, nullptr, true, nullptr);  // --prune: the orphan is deleted
  check_plan_policies(plan, state, declared, rules_of(kBaseline), at("2026-06-01T00:00:00Z"));
  REQUIRE(plan.policy.violations.size() == 1);
  CHECK(plan.policy.violations[0].rule == "no-prod-deletes");
  CHECK(plan.policy.violations[0].address == "acme/services/old");
  CHECK(plan.policy.violations[0].found == "delete");
  CHECK(plan.policy.violations[0].required == "not delete");

  // Audited as recorded: the record is PROD without HA.
  const auto audit = evaluate_policies(rules_of(kBaseline), state_subjects(state, DeclaredWaivers(nullptr)),
                                       at("2026-06-01T00:00:00Z"));
  CHECK(audit.violations.size() == 2);
}

TEST_CASE("policy_waivers in a manifest are checked for their form") {
  Diagnostics diags;
  load_manifest_text("m.yaml", service("        policy_waivers:\n          - rule: prod-needs-ha\n            reasn: x\n"
                                       "            expires: 2027-02-30\n"),
                     kNoEnv, diags);
  CHECK_THAT(diags.str(), Catch::Contains("did you mean `reason`?") && Catch::Contains("needs `reason`") &&
                              Catch::Contains("expected a date like 2027-01-31"));
}
