// Policies checked in every plan: rule files (--policy, DBFORM_POLICY) validated like
// manifests, violations in text, JSON and markdown, a mandatory one refusing plan and apply with no
// API call, waivers honoured / expired / not waivable / unknown, a saved plan stale under other
// rules, `policy check` auditing the state without a key, and `preview up` refusing a fork that
// breaks a preview rule before any call. None can pass on the main they were written on: there was
// no --policy, no `policy_waivers`, no `policy` command.
#include "previews_common.h"

using namespace e2e;

namespace {

const std::string kRules = R"(version: 1
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
  - id: billing-small
    level: advisory
    kind: service
    where: {name: billing}
    require: {cpu_millis: {"<=": 500}}
)";

// orders is PROD; `orders_extra` is added to its declaration.
std::string prod_manifest(const std::string& orders_extra = "") {
  return manifest({}, {service_yaml("orders") + "        environment_tag: PROD\n" + orders_extra, service_yaml("billing")});
}

const std::string kHealthy = "        replica_count: 1\n        deletion_protection: true\n";

std::string waiver(const std::string& rule, const std::string& expires) {
  return "        policy_waivers:\n          - rule: " + rule + "\n            reason: single node until the January "
         "migration\n            expires: " + expires + "\n";
}

RunResult plan(Sandbox& sb, std::vector<std::string> more) {
  std::vector<std::string> args = {"plan", "--no-refresh"};
  args.insert(args.end(), more.begin(), more.end());
  return sb.run(args);
}

}  // namespace

TEST_CASE("e2e: policies: a mandatory violation refuses plan and apply (text, json, markdown) with no call and no plan file") {
  Sandbox sb;
  sb.write("base/policy.yaml", kRules);
  sb.write("dbform.yaml", prod_manifest());

  RunResult text = plan(sb, {"--policy", "base/policy.yaml", "--out", "p.plan"});
  INFO(text.describe());
  CHECK(text.exit_code == 1);
  CHECK(!sb.exists("p.plan"));
  CHECK(contains(text.err, "The plan was not saved to p.plan: it has conflicts (mandatory policy violations)"));
  CHECK(contains(text.out, "Policies: 3 rules from base/policy.yaml: 2 mandatory violations, 1 advisory violation."));
  CHECK(contains(text.out, "[mandatory] prod-needs-ha  acme-prod/services/orders\n      replica_count is not set, requires >= 1\n"
                           "      PROD services need an HA replica and deletion protection"));
  CHECK(contains(text.out, "deletion_protection is false, requires true"));
  CHECK(contains(text.out, "[advisory] billing-small  acme-prod/services/billing\n      cpu_millis is 1000, requires <= 500"));
  CHECK(contains(text.out, "Error: 2 mandatory policy violation(s): nothing can be applied"));

  RunResult js = plan(sb, {"--policy", "base/policy.yaml", "--format", "json"});
  CHECK(js.exit_code == 1);
  const json doc = json::parse(js.out);
  CHECK(doc["summary"]["policy_violations"] == 2);
  CHECK(doc["summary"]["has_conflicts"] == true);
  CHECK(doc["summary"]["conflict"] == 0);
  const json& p = doc["policies"];
  CHECK(p["files"] == json{"base/policy.yaml"});
  CHECK(p["rules"].size() == 3);
  CHECK(p["mandatory"] == 2);
  CHECK(p["advisory"] == 1);
  CHECK(p["violations"][0] == json{{"rule", "prod-needs-ha"}, {"level", "mandatory"}, {"address", "acme-prod/services/orders"},
                                   {"field", "replica_count"}, {"found", nullptr}, {"required", ">= 1"},
                                   {"message", "PROD services need an HA replica and deletion protection"}});

  RunResult md = plan(sb, {"--format", "markdown"});  // DBFORM_POLICY instead of the flag
  md = sb.run({"plan", "--no-refresh", "--format", "markdown"}, {{"DBFORM_POLICY", "missing.yaml:base/policy.yaml"}});
  CHECK(md.exit_code == 1);
  CHECK(contains(md.err, "missing.yaml: error: cannot read this policy file"));
  md = sb.run({"plan", "--no-refresh", "--format", "markdown"}, {{"DBFORM_POLICY", "base/policy.yaml"}});
  CHECK(md.exit_code == 1);
  CHECK(contains(md.out, "### dbform plan: 2 mandatory policy violations, nothing can be applied"));
  CHECK(contains(md.out, "#### Policies"));
  CHECK(contains(md.out, "- **mandatory** `prod-needs-ha` on `acme-prod/services/orders`: `replica_count is not set, requires >= 1`. "));
  CHECK(contains(md.out, "- advisory `billing-small` on `acme-prod/services/billing`"));

  CHECK(sb.total_requests() == 0);  // a plan's policies call nothing

  RunResult apply = sb.apply({"--policy", "base/policy.yaml"});
  CHECK(apply.exit_code == 1);
  CHECK(contains(apply.out, "[mandatory] prod-needs-ha"));
  CHECK(writes_of(sb.counts()).empty());  // nothing created
  CHECK(!sb.exists("dbform.state.json"));

  // Fixed: the advisory violation alone warns, changes no exit code, and the plan is saved.
  sb.write("dbform.yaml", prod_manifest(kHealthy));
  RunResult ok = plan(sb, {"--policy", "base/policy.yaml", "--out", "p.plan", "--detailed-exitcode"});
  INFO(ok.describe());
  CHECK(ok.exit_code == 2);
  CHECK(sb.exists("p.plan"));
  CHECK(contains(ok.out, "1 advisory violation"));
}

TEST_CASE("e2e: policies: forbid_actions refuses a pruned PROD service's delete, with no delete call") {
  Sandbox sb;
  sb.write("rules/policy.yaml", "version: 1\nrules:\n  - id: no-prod-deletes\n    level: mandatory\n    kind: service\n"
                          "    where: {environment_tag: PROD}\n    forbid_actions: [delete, replace]\n");
  sb.write("dbform.yaml", prod_manifest());
  REQUIRE(sb.apply({"--policy", "rules/policy.yaml"}).exit_code == 0);
  sb.write("dbform.yaml", manifest({}, {service_yaml("billing")}));
  RunResult r = sb.apply({"--prune", "--policy", "rules/policy.yaml"});
  INFO(r.describe());
  CHECK(r.exit_code == 1);
  CHECK(contains(r.out, "[mandatory] no-prod-deletes  acme-prod/services/orders\n      the plan would delete it"));
  CHECK(sb.count(kDeleteService) == 0);
  CHECK(find_resource(sb.state(), service_address("orders")).is_object());
}

TEST_CASE("e2e: policies: waivers are honoured and shown until they expire - expired, non-waivable and unknown ones are violations") {
  Sandbox sb;
  sb.write("rules/policy.yaml", kRules);

  sb.write("dbform.yaml", prod_manifest(waiver("prod-needs-ha", "9999-12-31")));
  RunResult waived = plan(sb, {"--policy", "rules/policy.yaml"});
  INFO(waived.describe());
  CHECK(waived.exit_code == 0);
  CHECK(contains(waived.out, "[waived] prod-needs-ha  acme-prod/services/orders until 9999-12-31: single node until the January migration"));
  CHECK(!contains(waived.out, "[mandatory]"));
  const json doc = json::parse(plan(sb, {"--policy", "rules/policy.yaml", "--format", "json"}).out);
  CHECK(doc["policies"]["waivers"] == json::array({{{"rule", "prod-needs-ha"}, {"address", "acme-prod/services/orders"},
                                                    {"reason", "single node until the January migration"},
                                                    {"expires", "9999-12-31"}}}));
  CHECK(contains(plan(sb, {"--policy", "rules/policy.yaml", "--format", "markdown"}).out,
                 "- `prod-needs-ha` waived for `acme-prod/services/orders` until 9999-12-31"));

  sb.write("dbform.yaml", prod_manifest(waiver("prod-needs-ha", "2020-01-31")));
  RunResult expired = plan(sb, {"--policy", "rules/policy.yaml"});
  CHECK(expired.exit_code == 1);
  CHECK(contains(expired.out, "policy_waivers[0].expires is 2020-01-31, requires an expiry after now (UTC)"));
  CHECK(contains(expired.out, "the waiver of `prod-needs-ha` expired (2020-01-31)"));
  CHECK(contains(expired.out, "replica_count is not set, requires >= 1"));  // the rule holds again

  sb.write("dbform.yaml", prod_manifest(kHealthy + waiver("no-prod-deletes", "9999-12-31")));
  RunResult not_waivable = plan(sb, {"--policy", "rules/policy.yaml"});
  CHECK(not_waivable.exit_code == 1);
  CHECK(contains(not_waivable.out, "rule `no-prod-deletes` may not be waived: remove the waiver at dbform.yaml:"));

  sb.write("dbform.yaml", prod_manifest(kHealthy + waiver("prod-need-ha", "9999-12-31")));
  RunResult unknown = plan(sb, {"--policy", "rules/policy.yaml"});
  CHECK(unknown.exit_code == 1);
  CHECK(contains(unknown.out, "the waiver names rule `prod-need-ha`, which no policy file defines (did you mean `prod-needs-ha`?)"));

  // Without rule files nothing is checked, waivers included: they are the rules' business.
  CHECK(plan(sb, {}).exit_code == 0);

  // A waiver's form is the manifest's: a located error, whatever the rules.
  sb.write("dbform.yaml", prod_manifest("        policy_waivers:\n          - rule: prod-needs-ha\n            reason: x\n"
                                        "            expires: 2027-02-30\n"));
  RunResult bad = plan(sb, {});
  CHECK(bad.exit_code == 1);
  CHECK(contains(bad.err, "dbform.yaml:13:22: error: projects[0].services[0].policy_waivers[0].expires: expected a date like 2027-01-31"));
  CHECK(sb.total_requests() == 0);
}

TEST_CASE("e2e: policies: a saved plan is stale under other rules, under none, or under some when it had none") {
  Sandbox sb;
  sb.write("rules/policy.yaml", kRules);
  sb.write("dbform.yaml", prod_manifest(kHealthy));
  REQUIRE(plan(sb, {"--policy", "rules/policy.yaml", "--out", "checked.plan"}).exit_code == 0);
  REQUIRE(plan(sb, {"--out", "unchecked.plan"}).exit_code == 0);

  RunResult none = sb.apply({"checked.plan"});
  INFO(none.describe());
  CHECK(none.exit_code == 1);
  CHECK(contains(none.err, "the saved plan checked.plan is stale"));
  CHECK(contains(none.err, "the plan was checked against the policies rules/policy.yaml (digest "));
  CHECK(contains(none.err, "and this apply is given none"));

  sb.write("rules/other.yaml", std::string(kRules) + "  - id: extra\n    level: advisory\n    kind: vpc\n    forbid_actions: [delete]\n");
  RunResult other = sb.apply({"checked.plan", "--policy", "rules/other.yaml"});
  CHECK(other.exit_code == 1);
  CHECK(contains(other.err, "hold other rules"));

  RunResult some = sb.apply({"unchecked.plan"}, {{"DBFORM_POLICY", "rules/policy.yaml"}});
  CHECK(some.exit_code == 1);
  CHECK(contains(some.err, "the plan was checked against no policy, and this apply is given rules/policy.yaml"));
  CHECK(writes_of(sb.counts()).empty());

  // The same rules under another name (the base branch checked out elsewhere) are the same rules.
  sb.write("elsewhere/baseline.yaml", kRules);
  RunResult same = sb.apply({"checked.plan", "--policy", "elsewhere/baseline.yaml"});
  INFO(same.describe());
  CHECK(same.exit_code == 0);
  CHECK(sb.count(kPostService) == 2);
}

TEST_CASE("e2e: policies: policy check audits what the state records, without a key or a call, and -f brings the waivers") {
  Sandbox sb;
  sb.write("dbform.yaml", prod_manifest());
  REQUIRE(sb.apply().exit_code == 0);
  sb.write("rules/policy.yaml", kRules);
  const json before = sb.counts();
  const std::map<std::string, std::string> no_key = {{"DBFORM_API_KEY", ""}, {"DBFORM_API_URL", "http://127.0.0.1:9"}};

  RunResult text = sb.run({"policy", "check", "--policy", "rules/policy.yaml"}, no_key);
  INFO(text.describe());
  CHECK(text.exit_code == 1);
  CHECK(contains(text.out, "Checked 2 recorded resource(s)."));
  CHECK(contains(text.out, "[mandatory] prod-needs-ha  acme-prod/services/orders\n      replica_count is"));
  CHECK(contains(text.out, "[advisory] billing-small"));

  RunResult js = sb.run({"policy", "check", "--policy", "rules/policy.yaml", "--format", "json"}, no_key);
  CHECK(js.exit_code == 1);
  const json doc = json::parse(js.out);
  CHECK(doc["resources"] == 2);
  CHECK(doc["policies"]["mandatory"] == 2);
  CHECK(contains(sb.run({"policy", "check", "--policy", "rules/policy.yaml", "--format", "markdown"}, no_key).out,
                 "### dbform policy check: 2 mandatory violation(s)"));

  sb.write("dbform.yaml", prod_manifest(waiver("prod-needs-ha", "9999-12-31")));
  RunResult waived = sb.run({"policy", "check", "--policy", "rules/policy.yaml", "-f", "dbform.yaml"}, no_key);
  CHECK(waived.exit_code == 0);
  CHECK(contains(waived.out, "[waived] prod-needs-ha"));
  CHECK(sb.counts() == before);

  RunResult none = sb.run({"policy", "check"}, no_key);
  CHECK(none.exit_code == 1);
  CHECK(contains(none.err, "give --policy FILE"));
}

TEST_CASE("e2e: policies: a rule file with an unknown field, kind or value is a located error with a guess, and nothing runs") {
  Sandbox sb;
  sb.write("dbform.yaml", prod_manifest(kHealthy));
  sb.write("rules/policy.yaml", "version: 1\nrules:\n  - id: prod-needs-ha\n    level: mandatory\n    kind: service\n"
                          "    where: {environment_tag: prod}\n    requires: {replica_count: {\">=\": 1}}\n"
                          "  - id: x\n    level: mandatory\n    kind: servce\n    forbid_actions: [delete]\n");
  RunResult r = sb.run({"plan", "--policy", "rules/policy.yaml", "--out", "p.plan"});
  INFO(r.describe());
  CHECK(r.exit_code == 1);
  CHECK(contains(r.err, "policy.yaml:6:30: error: rules[0].where.environment_tag: expected DEV or PROD, found the text `prod` (did you mean `PROD`?)"));
  CHECK(contains(r.err, "policy.yaml:7:5: error: rules[0].requires: unknown key `requires` in a rule (did you mean `require`?)"));
  CHECK(contains(r.err, "policy.yaml:10:11: error: rules[1].kind: unknown kind `servce` (did you mean `service`?)"));
  CHECK(contains(r.err, "error(s) in the policy files; nothing was done"));
  CHECK(!sb.exists("p.plan"));
  CHECK(sb.total_requests() == 0);  // refused before the refresh
}

TEST_CASE("e2e: policies: preview up refuses forks that break a mandatory preview rule, before any call") {
  Sandbox sb;
  applied(sb, preview_manifest("[orders, billing]", "72h", 3, "      cpu_millis: 2000\n      memory_gbs: 8\n"));
  sb.write("rules/policy.yaml", "version: 1\nrules:\n  - id: small-previews\n    level: mandatory\n    kind: preview\n"
                          "    require: {cpu_millis: {\"<=\": 1000}}\n    message: previews stay small\n");
  const json before = sb.counts();
  RunResult up = preview(sb, {"up", "pr-1", "--policy", "rules/policy.yaml"});
  INFO(up.describe());
  CHECK(up.exit_code == 1);
  CHECK(contains(up.err, "the preview breaks 2 mandatory policy rule(s), so nothing was forked"));
  CHECK(contains(up.err, "[mandatory] small-previews: acme-prod/previews/pr-1/services/orders cpu_millis is 2000, requires <= 1000 (previews stay small)"));
  CHECK(sb.counts() == before);  // not one call
  CHECK(find_resource(sb.state(), preview_address("pr-1", "orders")).is_null());
}
