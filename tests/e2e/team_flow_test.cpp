// Every word true, round two: what a newcomer met in the team flow (a pull request's plan beside
// main's apply, previews, imports, pauses), said as it is, through the real binary.
#include "previews_common.h"

using namespace e2e;

namespace {

const std::string kResize = "POST /projects/{project_id}/services/{service_id}/resize";
const std::string kStart = "POST /projects/{project_id}/services/{service_id}/start";

std::string id_of(Sandbox& sb, const std::string& name) {
  return find_resource(sb.state(), service_address(name))["id"];
}

}  // namespace

// `--project` alone does nothing but fail: its help says what it does with --generate.
TEST_CASE("e2e: import's help says --project writes a manifest with --generate and records nothing") {
  Sandbox sb;
  RunResult help = sb.run({"help", "import"});
  INFO(help.describe());
  REQUIRE(help.exit_code == 0);
  // The option's entry (wrapped over lines), up to the next option's.
  const size_t at = help.out.find("`--project TEXT`:"), end = help.out.find("`--generate TEXT`:");
  REQUIRE(at != std::string::npos);
  REQUIRE(end > at);
  std::string entry;
  for (char c : help.out.substr(at, end - at))
    if (c != '\n' && (c != ' ' || entry.empty() || entry.back() != ' ')) entry += c;
    else if (entry.back() != ' ') entry += ' ';
  CHECK(contains(entry, "with --generate: list this project and declare every resource the state does not record"));
  CHECK(contains(entry, "records nothing"));
  CHECK(!contains(help.out, "import every resource of this project"));

  sb.write("dbform.yaml", base_manifest());
  RunResult alone = sb.run({"import", "--project", kProject});
  INFO(alone.describe());
  CHECK(alone.exit_code == 1);
  CHECK(contains(alone.err, "--project needs --generate FILE"));
  CHECK(sb.total_requests() == 0);
  CHECK(!sb.exists("dbform.state.json"));
}
