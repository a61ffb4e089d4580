// apply at a terminal (a pseudo-terminal): it asks, and only "yes" applies.
#include "common.h"

using namespace e2e;

TEST_CASE("e2e: at a terminal, apply asks and anything but yes cancels without changing anything") {
  Sandbox sb;
  sb.write("dbform.yaml", base_manifest());
  for (const std::string answer : {"no\n", "y\n", "YES please\n"}) {
    RunResult r = sb.run_tty({"apply", "--poll-interval", "100ms"}, answer);
    INFO("typed: " << answer << r.describe());
    CHECK(r.exit_code == 1);
    CHECK(contains(r.out, "Do you want to apply this plan?"));
    CHECK(contains(r.out, "cancelled"));
    // The refresh before the plan only reads (the keys' preflight, the name guard's lists).
    CHECK(sb.count(kPostService) + sb.count(kPostVpc) == 0);
    CHECK(sb.total_requests() == sb.count(kAuthInfo) + sb.count(kListServices) + sb.count("GET /projects/{project_id}/vpcs"));
    if (sb.exists("dbform.state.json")) CHECK(sb.state()["resources"].empty());
  }
}

TEST_CASE("e2e: at a terminal, answering yes applies the plan") {
  Sandbox sb;
  sb.write("dbform.yaml", base_manifest());
  RunResult r = sb.run_tty({"apply", "--poll-interval", "100ms"}, "yes\n");
  INFO(r.describe() << "\ncounts: " << sb.counts().dump());
  CHECK(r.exit_code == 0);
  CHECK(sb.count(kPostService) == 3);
  CHECK(sb.count(kPostVpc) == 1);
  json state = sb.state();
  for (const auto& name : kServices) CHECK(find_resource(state, service_address(name))["status"] == "READY");
  for (const auto& name : kServices) {
    const std::string password = find_resource(state, service_address(name))["initial_password"];
    CHECK(!contains(r.all(), password));
  }
}

TEST_CASE("e2e: colour on a terminal, none with NO_COLOR") {
  Sandbox sb;
  sb.write("dbform.yaml", base_manifest());
  RunResult colour = sb.run_tty({"plan"}, "\n");
  INFO(colour.describe());
  CHECK(colour.exit_code == 0);
  CHECK(contains(colour.out, "\033["));
  RunResult plain = sb.run_tty({"plan"}, "\n", {{"NO_COLOR", "1"}});
  INFO(plain.describe());
  CHECK(plain.exit_code == 0);
  CHECK(!contains(plain.out, "\033["));
  CHECK(contains(plain.out, "4 to create"));
}
