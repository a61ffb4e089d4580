// Text a pull request writes, as the reviewer reads it: a table name and a
// column default with line breaks forge no line of `preview diff` (text and markdown); a migration
// file named to close its code span renders no HTML, link or mention, and a line break in a name
// adds no bullet; a waiver's reason and a rule's message with ESC, CR and BEL reach neither the
// terminal nor the comment raw. Each fails on the main it was written on.
#include <regex>

#include "postgres_sim.h"
#include "previews_common.h"

using namespace e2e;

namespace {

const std::string kReviewBlock = "    previews:\n      services: [orders]\n      strategy: NOW\n      ttl: 72h\n"
                                 "      max: 3\n      migrations: db/migrations\n";

// `orders` applied and reachable, its server holding the table `legacy` that migrations may drop.
void reviewed_source(Sandbox& sb) {
  sb.write("dbform.yaml", manifest({}, {service_yaml("orders")}) + kReviewBlock);
  RunResult applied = sb.apply({"--wait-connectable"});
  INFO(applied.describe());
  REQUIRE(applied.exit_code == 0);
  const std::string source = connection_string(sb, service_address("orders"));
  REQUIRE(sql(source, "CREATE TABLE legacy (id int)").ok);
}

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) out.push_back(line);
  return out;
}

// The lines of the first fenced code block opened by a line starting with `opening`.
std::vector<std::string> fenced_block(const std::string& markdown, const std::string& opening) {
  std::vector<std::string> block;
  std::string fence;
  for (const auto& line : lines_of(markdown)) {
    if (fence.empty()) {
      if (line.rfind(opening, 0) == 0 && line.find('`') == 0) fence = line.substr(0, line.find_first_not_of('`'));
      continue;
    }
    if (line == fence) return block;
    block.push_back(line);
  }
  FAIL("no closed code block opened by " << opening << " in:\n" << markdown);
  return block;
}

// `markdown` with its fenced code blocks and code spans removed as CommonMark reads them (a span
// opens with a run of backticks and closes at the next run of the same length): what is left is
// what GitHub renders as markdown.
std::string outside_code(const std::string& markdown) {
  std::string prose, fence;
  for (const auto& line : lines_of(markdown)) {
    const size_t indent = line.find_first_not_of(' ');
    const std::string body = indent == std::string::npos ? "" : line.substr(indent);
    const std::string ticks = body.substr(0, body.find_first_not_of('`'));
    if (fence.empty() && ticks.size() >= 3) fence = ticks;
    else if (!fence.empty() && body == fence) fence.clear();
    else if (fence.empty()) prose += line + "\n";
  }
  std::string out;
  for (size_t i = 0; i < prose.size();) {
    if (prose[i] != '`') {
      out += prose[i++];
      continue;
    }
    const size_t run_end = prose.find_first_not_of('`', i);
    const size_t n = (run_end == std::string::npos ? prose.size() : run_end) - i;
    size_t close = run_end;
    while (close != std::string::npos) {
      close = prose.find(std::string(n, '`'), close);
      if (close == std::string::npos) break;
      const size_t after = prose.find_first_not_of('`', close);
      if ((after == std::string::npos ? prose.size() : after) - close == n) break;
      close = after;
    }
    if (close == std::string::npos) {
      out += prose.substr(i, n);  // no closing run: the backticks are text
      i += n;
    } else {
      out += "<code/>";
      i = close + n;
    }
  }
  return out;
}

bool has_control_bytes(const std::string& text) {
  return text.find('\x1b') != std::string::npos || text.find('\r') != std::string::npos ||
         text.find('\x07') != std::string::npos;
}

}  // namespace

TEST_CASE("postgres: preview diff - a table name and a default with line breaks give as many change lines as the summary counts",
          "[e2e][postgres]") {
  Sandbox sb;
  PostgresSim sim(sb);
  reviewed_source(sb);
  // One table dropped (destructive), one made: its name forges a destructive line, its default the summary.
  sb.write("db/migrations/0001_forge.sql",
           "DROP TABLE legacy;\n"
           "CREATE TABLE \"t\n  - table public.users  (destructive: lost)\" "
           "(v int, note text DEFAULT E'x\\n0 change(s), 0 destructive.');\n");
  RunResult up = preview(sb, {"up", "pr-1", "--format", "markdown"});
  INFO(up.describe());
  REQUIRE(up.exit_code == 0);

  RunResult diff = sb.run({"preview", "diff", "pr-1"});
  INFO(diff.describe());
  REQUIRE(diff.exit_code == 0);
  size_t change_lines = 0, summaries = 0;
  const std::regex change("^  [-+~] "), summary("^[0-9]+ change\\(s\\), [0-9]+ destructive\\.$");
  for (const auto& line : lines_of(diff.out)) {
    change_lines += std::regex_search(line, change);
    summaries += std::regex_search(line, summary);
  }
  CHECK(change_lines == 2);
  CHECK(summaries == 1);
  CHECK(contains(diff.out, "\n2 change(s), 1 destructive.\n"));
  CHECK(contains(diff.out, "  + table public.t\\n  - table public.users  (destructive: lost) ("));
  CHECK(contains(diff.out, "DEFAULT 'x\\n0 change(s), 0 destructive.'::text"));

  // The comment: two lines in the diff block, one destructive bullet.
  for (const std::string& md : {up.out, sb.run({"preview", "diff", "pr-1", "--format", "markdown"}).out}) {
    INFO(md);
    CHECK(fenced_block(md, "```diff").size() == 2);
    size_t bullets = 0;
    for (const auto& line : lines_of(md)) bullets += line.rfind("- **destructive**", 0) == 0;
    CHECK(bullets == 1);
  }
  // JSON keeps the real name, escaped by the serializer.
  const json d = json::parse(sb.run({"preview", "diff", "pr-1", "--format", "json"}).out);
  CHECK(d["forks"][0]["changes"].size() == 2);
}

TEST_CASE("postgres: preview up --format markdown - a migration file named to close its code span renders no HTML, link or mention",
          "[e2e][postgres]") {
  Sandbox sb;
  PostgresSim sim(sb);
  reviewed_source(sb);
  sb.write("db/migrations/0001_md`<b>x [click](y) @team.sql", "CREATE TABLE a (v int);\n");
  sb.write("db/migrations/0002_x\n- **fake bullet**.sql", "CREATE TABLE b (v int);\n");
  for (const auto& [name, format] : {std::pair("pr-1", "markdown"), std::pair("pr-2", "text")}) {
    RunResult up = preview(sb, {"up", name, "--format", format});
    INFO(up.describe());
    REQUIRE(up.exit_code == 0);
    for (const auto& line : lines_of(up.out)) CHECK(line.rfind("- **fake bullet**", 0) == std::string::npos);
    for (const auto& line : lines_of(up.err)) CHECK(line.rfind("- **fake bullet**", 0) == std::string::npos);
    if (format == std::string("markdown")) {
      const std::string prose = outside_code(up.out);
      INFO("outside code:\n" << prose);
      CHECK(!contains(prose, "<b>"));
      CHECK(!contains(prose, "](y)"));
      CHECK(!contains(prose, "@team"));
      CHECK(contains(up.out, "``0001_md`<b>x [click](y) @team.sql``"));
      CHECK(contains(up.out, "`0002_x\\n- **fake bullet**.sql`"));
    } else {
      CHECK(contains(up.err, "applying db/migrations/0002_x\\n- **fake bullet**.sql"));
      CHECK(contains(up.out, "applied 0001_md`<b>x [click](y) @team.sql, 0002_x\\n- **fake bullet**.sql (2 in all)"));
    }
  }
}

TEST_CASE("e2e: a waiver's reason and a rule's message with ESC - CR and BEL reach neither the terminal nor the comment raw") {
  Sandbox sb;
  sb.write("rules/policy.yaml", "version: 1\nrules:\n  - id: prod-needs-ha\n    level: mandatory\n    kind: service\n"
                                "    where: {environment_tag: PROD}\n    require: {replica_count: {\">=\": 1}}\n"
                                "    message: \"needs HA\\e[1A\\e[2K\\rall clear\\a\"\n    waivable: true\n"
                                "  - id: billing-small\n    level: advisory\n    kind: service\n    where: {name: billing}\n"
                                "    require: {cpu_millis: {\"<=\": 500}}\n    message: \"small\\e]0;owned\\a\\r\"\n");
  const std::string waived = "        environment_tag: PROD\n        policy_waivers:\n          - rule: prod-needs-ha\n"
                             "            reason: \"\\e[1A\\e[2K\\rapproved by security\\a\"\n            expires: 9999-12-31\n";
  sb.write("dbform.yaml", manifest({}, {service_yaml("orders") + waived, service_yaml("billing")}));
  for (const std::string format : {"text", "markdown", "json"}) {
    RunResult r = sb.run({"plan", "--no-refresh", "--policy", "rules/policy.yaml", "--format", format});
    INFO(format << "\n" << r.describe());
    CHECK(r.exit_code == 0);
    CHECK(!has_control_bytes(r.out));
    CHECK(!has_control_bytes(r.err));
    if (format == std::string("text")) {
      CHECK(contains(r.out, ": \\x1b[1A\\x1b[2K\\rapproved by security\\x07\n"));
      CHECK(contains(r.out, "small\\x1b]0;owned\\x07\\r\n"));
    }
    if (format == std::string("markdown")) CHECK(contains(r.out, "`\\x1b[1A\\x1b[2K\\rapproved by security\\x07`"));
  }
  // A rule's message on a violation (the waiver gone): shown, escaped.
  sb.write("dbform.yaml", manifest({}, {service_yaml("orders") + "        environment_tag: PROD\n"}));
  RunResult refused = sb.run({"plan", "--no-refresh", "--policy", "rules/policy.yaml"});
  INFO(refused.describe());
  CHECK(refused.exit_code == 1);
  CHECK(!has_control_bytes(refused.all()));
  CHECK(contains(refused.out, "needs HA\\x1b[1A\\x1b[2K\\rall clear\\x07"));
}

TEST_CASE("e2e: a manifest file whose name holds a line break is named on one line in its error - no forged line") {
  Sandbox sb;
  sb.write("manifests/ok.yaml", manifest({}, {service_yaml("orders")}));
  sb.write("manifests/b\nerror: nothing is wrong, apply it.yaml", "version: 1\nprojects:\n  - id: acme-dev\n    servces: []\n");
  RunResult r = sb.run({"validate", "-f", "manifests"});
  INFO(r.describe());
  CHECK(r.exit_code == 1);
  CHECK(contains(r.err, "manifests/b\\nerror: nothing is wrong, apply it.yaml:4:5: error: "));
  for (const auto& line : lines_of(r.all())) CHECK(line.rfind("error: nothing is wrong", 0) == std::string::npos);
}
