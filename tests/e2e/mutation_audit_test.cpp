// The changes a mutation audit made to the product that no test noticed, each
// with a test that fails under it. They pass on the main they were written on (the product was
// right; the tests did not look): each was checked by making the change once, by hand.
//   - a Replace counted as an update by `forbid_actions` (policy/evaluate.cpp, plan_subjects);
//   - `apply --wait-connectable` no longer asking the state's key first (ops/operation.cpp,
//     check_sealed_passwords);
//   - the saved plan's policy digest taken over the first rule file only (policy/loader.cpp).
#include "service_helpers.h"

using namespace e2e;

namespace {

std::string orders_with_reporting_of(int nodes) {
  return manifest({}, {service_with("orders", {sized_replica_set("reporting", nodes, 1000, 4)})});
}

}  // namespace

TEST_CASE("e2e: mutation audit: forbid_actions [replace] refuses a plan that replaces a read replica set, with no call") {
  Sandbox sb;
  sb.write("rules/policy.yaml", "version: 1\nrules:\n  - id: no-replacements\n    level: mandatory\n    kind: replica_set\n"
                                "    forbid_actions: [replace]\n");
  apply_ok(sb, orders_with_reporting_of(1), {"--policy", "rules/policy.yaml"});
  const std::string id = find_resource(sb.state(), kSetAddress)["id"];

  // A nodes change cannot be made in place: with --prune it is a replacement (services are never
  // replaced: a change that would need it is a conflict), which the rule forbids.
  sb.write("dbform.yaml", orders_with_reporting_of(3));
  RunResult plain = sb.run({"plan", "--prune"});
  INFO(plain.describe());
  REQUIRE(plain.exit_code == 0);
  REQUIRE(contains(plain.out, "1 to replace"));
  const json before = writes_of(sb.counts());
  RunResult plan = sb.run({"plan", "--prune", "--policy", "rules/policy.yaml"});
  INFO(plan.describe());
  CHECK(plan.exit_code == 1);
  CHECK(contains(plan.out, "[mandatory] no-replacements  " + kSetAddress + "\n      the plan would replace it"));
  RunResult apply = sb.apply({"--prune", "--policy", "rules/policy.yaml"});
  INFO(apply.describe());
  CHECK(apply.exit_code == 1);
  CHECK(writes_of(sb.counts()) == before);
  CHECK(find_resource(sb.state(), kSetAddress)["id"] == id);
}

TEST_CASE("e2e: mutation audit: apply --wait-connectable over a sealed state needs the key before any call that changes "
          "anything, even for a plan that records no password") {
  Sandbox sb;
  sb.write("dbform.yaml", manifest({}, {service_yaml("orders")}));
  RunResult made = sb.apply({}, kSealingKey);
  INFO(made.describe());
  REQUIRE(made.exit_code == 0);
  const std::string state_before = sb.read("dbform.state.json");

  // A resize records no password, so only --wait-connectable (which logs in with it) needs the key.
  sb.write("dbform.yaml", manifest({}, {service_yaml("orders", 2000, 8)}));
  const json writes = writes_of(sb.counts());
  const long long requests = sb.total_requests();
  RunResult offline = sb.apply({"--no-refresh", "--wait-connectable"});
  INFO(offline.describe());
  CHECK(offline.exit_code == 1);
  CHECK(contains(offline.err, "apply --wait-connectable needs the state's key"));
  CHECK(sb.total_requests() == requests);  // from the state alone: not one call
  RunResult refreshed = sb.apply({"--wait-connectable"});
  INFO(refreshed.describe());
  CHECK(refreshed.exit_code == 1);
  CHECK(contains(refreshed.err, "apply --wait-connectable needs the state's key"));
  CHECK(writes_of(sb.counts()) == writes);  // the refresh's reads only
  CHECK(sb.count(kResize) == 0);
  CHECK(sb.read("dbform.state.json") == state_before);

  // Without --wait-connectable the same resize needs no key.
  RunResult resized = sb.apply();
  INFO(resized.describe());
  CHECK(resized.exit_code == 0);
  CHECK(sb.count(kResize) == 1);
}

TEST_CASE("e2e: mutation audit: a saved plan's policy digest covers every rule file - a change to the second makes it stale") {
  Sandbox sb;
  const std::string first = "version: 1\nrules:\n  - id: small\n    level: advisory\n    kind: service\n"
                            "    require: {cpu_millis: {\"<=\": 4000}}\n";
  const std::string second = "version: 1\nrules:\n  - id: named\n    level: advisory\n    kind: service\n"
                             "    where: {name: orders}\n    require: {memory_gbs: {\"<=\": 16}}\n";
  sb.write("rules/a.yaml", first);
  sb.write("rules/b.yaml", second);
  sb.write("dbform.yaml", manifest({}, {service_yaml("orders")}));
  RunResult plan = sb.run({"plan", "--policy", "rules/a.yaml", "--policy", "rules/b.yaml", "--out", "p.plan"});
  INFO(plan.describe());
  REQUIRE(plan.exit_code == 0);

  // The second file's rule made stricter, still kept by the plan: the rules are not those it was
  // checked against.
  sb.write("rules/b.yaml", "version: 1\nrules:\n  - id: named\n    level: mandatory\n    kind: service\n"
                           "    where: {name: orders}\n    require: {memory_gbs: {\"<=\": 16}}\n");
  RunResult stale = sb.apply({"p.plan", "--policy", "rules/a.yaml", "--policy", "rules/b.yaml"});
  INFO(stale.describe());
  CHECK(stale.exit_code == 1);
  CHECK(contains(stale.err, "the saved plan p.plan is stale"));
  CHECK(contains(stale.err, "hold other rules"));
  CHECK(writes_of(sb.counts()).empty());

  // The files as they were: applied.
  sb.write("rules/b.yaml", second);
  RunResult same = sb.apply({"p.plan", "--policy", "rules/a.yaml", "--policy", "rules/b.yaml"});
  INFO(same.describe());
  CHECK(same.exit_code == 0);
  CHECK(sb.count(kPostService) == 1);
}
