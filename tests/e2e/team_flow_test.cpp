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

// `max` reached: the message suggests what makes room now. With nothing expired a sweep deletes
// nothing; `down` of the oldest (or a sweep keeping the open pull requests') does.
TEST_CASE("e2e: preview up refused by max suggests what makes room: down or sweep --keep, or sweep once one expired") {
  Sandbox sb;
  applied(sb, preview_manifest("[billing]", "72h", 2));
  REQUIRE(preview(sb, {"up", "pr-1"}).exit_code == 0);
  REQUIRE(preview(sb, {"up", "pr-2"}).exit_code == 0);

  RunResult full = preview(sb, {"up", "pr-3"});
  INFO(full.describe());
  CHECK(full.exit_code == 1);
  CHECK(contains(full.err, "To make room, none has expired yet, so `dbform preview sweep` alone deletes nothing: "
                           "`dbform preview down pr-1` deletes the oldest, or `dbform preview sweep --keep NAME...`, "
                           "naming the previews of the pull requests still open, deletes the others; nothing was changed"));
  CHECK(!contains(full.err, "sweep` makes room"));
  RunResult swept = preview(sb, {"sweep"});  // as said: nothing to delete
  CHECK(swept.exit_code == 0);
  CHECK(sb.count(kDeleteService) == 0);
  REQUIRE(preview(sb, {"down", "pr-1"}).exit_code == 0);  // as suggested: room for one
  RunResult made = preview(sb, {"up", "pr-3"});
  INFO(made.describe());
  CHECK(made.exit_code == 0);

  // pr-2 expired (its expiry moved into the past): now a sweep is what makes room.
  json state = sb.state();
  for (auto& rec : state["resources"])
    if (rec["address"] == preview_address("pr-2", "billing")) rec["settings"]["preview"]["expires_at"] = "2020-01-01T00:00:00Z";
  sb.write("dbform.state.json", state.dump(2));
  RunResult expired = preview(sb, {"up", "pr-4"});
  INFO(expired.describe());
  CHECK(expired.exit_code == 1);
  CHECK(contains(expired.err, "To make room, `dbform preview sweep` deletes the expired one (pr-2); nothing was changed"));
  REQUIRE(preview(sb, {"sweep"}).exit_code == 0);
  CHECK(preview(sb, {"up", "pr-4"}).exit_code == 0);
}

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
