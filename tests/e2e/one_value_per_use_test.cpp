// Every repeatable option takes one value per use, as -f does. `--policy a.yaml
// release.plan` used to read release.plan as a second rule file (CLI11 lets a vector option go on
// eating words), so a pipeline written that way never applied. Fails on the main it was written
// on: the plan file is taken for a rule file, the preview's name for one too.
#include "previews_common.h"

using namespace e2e;

namespace {

const std::string kSmallServices = "version: 1\nrules:\n  - id: small\n    level: advisory\n    kind: service\n"
                           "    require: {cpu_millis: {\"<=\": 500}}\n";

}  // namespace

TEST_CASE("e2e: one value per use: apply --policy FILE PLANFILE applies the plan file, checked against the one rule file") {
  Sandbox sb;
  sb.write("rules/base.yaml", kSmallServices);
  sb.write("dbform.yaml", manifest({}, {service_yaml("orders")}));
  RunResult plan = sb.run({"plan", "--policy", "rules/base.yaml", "--out", "release.plan"});
  INFO(plan.describe());
  REQUIRE(plan.exit_code == 0);

  RunResult applied = sb.run({"apply", "--auto-approve", "--poll-interval", "100ms", "--policy", "rules/base.yaml", "release.plan"});
  INFO(applied.describe());
  CHECK(applied.exit_code == 0);
  CHECK_FALSE(contains(applied.err, "release.plan:"));  // never read as a rule file
  CHECK(sb.count(kPostService) == 1);
  CHECK(find_resource(sb.state(), service_address("orders")).is_object());

  // --target is one value too: the word after it is the plan file, which a saved plan's apply
  // refuses beside --target (it is applied as saved), and nothing is sent.
  sb.write("dbform.yaml", manifest({}, {service_yaml("orders"), service_yaml("billing")}));
  REQUIRE(sb.run({"plan", "--out", "next.plan"}).exit_code == 0);
  const long long posts = sb.count(kPostService);
  RunResult targeted = sb.run({"apply", "--auto-approve", "--target", "billing", "next.plan"});
  INFO(targeted.describe());
  CHECK(targeted.exit_code == 1);
  CHECK(contains(targeted.err, "a saved plan was made with its own manifests, targets"));
  CHECK(contains(targeted.err, "apply next.plan without --target"));
  CHECK(sb.count(kPostService) == posts);

  // Two values after one flag: the second is an argument no command takes, said so.
  RunResult two = sb.run({"plan", "--policy", "rules/base.yaml", "rules/other.yaml"});
  INFO(two.describe());
  CHECK(two.exit_code != 0);
  CHECK(contains(two.err, "`rules/other.yaml` was not expected"));
  CHECK(contains(two.err, "`--policy a.yaml --policy b.yaml`"));
}

TEST_CASE("e2e: one value per use: preview up --policy FILE NAME takes NAME as the preview") {
  Sandbox sb;
  sb.write("rules/preview.yaml", "version: 1\nrules:\n  - id: dev-only\n    level: mandatory\n    kind: preview\n"
                         "    require: {environment_tag: DEV}\n");
  applied(sb, preview_manifest("[billing]"));
  RunResult up = preview(sb, {"up", "--policy", "rules/preview.yaml", "pr-1", "--format", "json"});
  INFO(up.describe());
  CHECK(up.exit_code == 0);
  CHECK(find_resource(sb.state(), preview_address("pr-1", "billing")).is_object());
  // sweep's --keep as well: `--keep pr-1 --keep pr-2` keeps both, and `--keep pr-1 pr-2` is refused.
  RunResult keep = preview(sb, {"sweep", "--keep", "pr-1", "pr-2"});
  INFO(keep.describe());
  CHECK(keep.exit_code != 0);
  CHECK(contains(keep.err, "pr-2"));
  CHECK(find_resource(sb.state(), preview_address("pr-1", "billing")).is_object());
}
