// Progress while apply waits: a live view redrawn in place on a terminal, a line per status change
// otherwise; colour only on a terminal and never with NO_COLOR or --no-color.
#include <regex>

#include "common.h"

using namespace e2e;

namespace {

// Long enough in CONFIGURING that every service is seen there and the live view ticks at least once.
dbform::SimConfig slow_config(dbform::Duration configuring = dbform::Duration(2500)) {
  dbform::SimConfig c = default_sim_config();
  c.configuring_delay = configuring;
  return c;
}

const std::regex kColour("\033\\[[0-9;]*m");         // SGR: colours and styles
const std::regex kCursorUp("\r\033\\[[0-9]+A");       // back to the first live line
const std::string kEraseBelow = "\033[J";

// A live line of the terminal view: the address, its status and whole seconds since its create.
bool has_live_line(const std::string& out, const std::string& name, const std::string& status,
                   const std::string& seconds = "[0-9]+") {
  return std::regex_search(out, std::regex("\033\\[2K(\033\\[[0-9;]*m)?  ~ " + service_address(name) + " +" + status +
                                           " +" + seconds + "s"));
}


}  // namespace

TEST_CASE("e2e: on a terminal, apply redraws a live line per waiting service with status and elapsed time") {
  // 4.5 s in CONFIGURING: the view redraws for a status change at about 0 s and 4 s, and only its
  // once-a-second tick draws the lines between, even when a tick comes late on loaded cores.
  Sandbox sb(slow_config(dbform::Duration(4500)));
  sb.write("dbform.yaml", base_manifest());
  RunResult r = sb.run_tty({"apply", "--auto-approve", "--poll-interval", "100ms"}, "", {{"TERM", "xterm-256color"}});
  INFO(r.describe());
  REQUIRE(r.exit_code == 0);
  for (const auto& name : kServices) {
    CHECK(has_live_line(r.out, name, "CONFIGURING"));
    CHECK(has_live_line(r.out, name, "CONFIGURING", "[123]"));  // the clock ticks while nothing else happens
    CHECK(contains(r.out, service_address(name) + ": ready"));
  }
  CHECK(std::regex_search(r.out, kCursorUp));
  CHECK(contains(r.out, kEraseBelow));
  CHECK(std::regex_search(r.out, kColour));
  // The view is gone at the end: the last frame erases it before the summary.
  const std::string tail = r.out.substr(r.out.rfind(kEraseBelow));
  CHECK(!contains(tail, "  ~ "));
  CHECK(contains(tail, "Apply complete: 4 created"));
  // No per-status log lines: the live view says it.
  CHECK(!contains(r.out, service_address("orders") + ": CONFIGURING"));
}

TEST_CASE("e2e: on a terminal, NO_COLOR and --no-color keep the live view but drop every colour") {
  for (const auto& [args, env] : std::vector<std::pair<std::vector<std::string>, std::map<std::string, std::string>>>{
           {{"apply", "--auto-approve", "--poll-interval", "100ms"}, {{"NO_COLOR", "1"}}},
           {{"apply", "--auto-approve", "--poll-interval", "100ms", "--no-color"}, {}},
           {{"--no-color", "apply", "--auto-approve", "--poll-interval", "100ms"}, {}}}) {
    Sandbox sb(slow_config());
    sb.write("dbform.yaml", base_manifest());
    RunResult r = sb.run_tty(args, "", env);
    INFO(r.describe());
    REQUIRE(r.exit_code == 0);
    CHECK(!std::regex_search(r.out, kColour));
    CHECK(std::regex_search(r.out, kCursorUp));
    CHECK(has_live_line(r.out, "orders", "CONFIGURING"));
  }
}

TEST_CASE("e2e: without a terminal, apply prints one plain line per status change") {
  Sandbox sb(slow_config());
  sb.write("dbform.yaml", base_manifest());
  RunResult r = sb.apply();
  INFO(r.describe());
  REQUIRE(r.exit_code == 0);
  CHECK(!contains(r.all(), "\033"));
  for (const auto& name : kServices) {
    const std::string a = service_address(name);
    CHECK(std::regex_search(r.out, std::regex(a + ": CONFIGURING \\[[0-9]+(ms|s) since its first call\\]\n")));
    CHECK(std::regex_search(r.out, std::regex(a + ": ready \\[[0-9]+(ms|s) since its first call\\] [^\n]+:[0-9]+\n")));
    // Exactly one line per change: CONFIGURING is reported once however often it was polled.
    CHECK(occurrences(r.out, a + ": CONFIGURING") == 1);
  }
}

TEST_CASE("e2e: a dumb terminal gets plain lines, and plan output drops colour with --no-color") {
  Sandbox sb;
  sb.write("dbform.yaml", base_manifest());
  RunResult dumb = sb.run_tty({"apply", "--auto-approve", "--poll-interval", "100ms"}, "", {{"TERM", "dumb"}});
  INFO(dumb.describe());
  REQUIRE(dumb.exit_code == 0);
  CHECK(!std::regex_search(dumb.out, kCursorUp));
  CHECK(contains(dumb.out, service_address("orders") + ": ready"));

  sb.write("dbform.yaml", base_manifest({"search"}));
  for (const auto& args : std::vector<std::vector<std::string>>{{"plan", "--no-color"}, {"--no-color", "plan"}}) {
    RunResult r = sb.run_tty(args, "");
    INFO(r.describe());
    CHECK(r.exit_code == 0);
    CHECK(contains(r.out, "1 to create"));
    CHECK(!contains(r.out, "\033["));
  }
  RunResult colour = sb.run_tty({"plan"}, "");
  CHECK(contains(colour.out, "\033["));
}
