// A newcomer's first hour, through the real binary: command-line conventions, help and
// version, what a traced run shows, and the messages of the usual mistakes.
#include <regex>
#include <set>
#include <sstream>

#include "common.h"
#include "util/text.h"

using namespace e2e;

TEST_CASE("e2e: cli: -f takes one path per occurrence, so a plan file after it is never read as a manifest") {
  Sandbox sb;
  fs::create_directories(sb.dir() / "a");
  fs::create_directories(sb.dir() / "b");
  sb.write("a/one.yaml", manifest({}, {service_yaml("orders")}));
  sb.write("b/two.yaml", "version: 1\nprojects:\n  - id: " + kProject + "\n    services:\n      - name: billing\n");
  RunResult both = sb.run({"plan", "--no-refresh", "-f", "a", "-f", "b"});
  INFO(both.describe());
  CHECK(both.exit_code == 0);
  CHECK(contains(both.out, "orders"));
  CHECK(contains(both.out, "billing"));
  REQUIRE(sb.run({"plan", "--no-refresh", "-f", "a", "--out", "my.plan"}).exit_code == 0);
  RunResult eaten = sb.run({"apply", "-f", "a", "my.plan"});
  CHECK(eaten.exit_code == 1);
  CHECK(contains(eaten.err, "apply my.plan without -f"));
  CHECK_FALSE(contains(eaten.err, "error(s) in the manifests"));
  CHECK(sb.total_requests() == 0);
}

TEST_CASE("e2e: cli: help, version, an unknown command and an unknown flag say what there is") {
  Sandbox sb;
  RunResult help = sb.run({"help"});
  CHECK(help.exit_code == 0);
  CHECK(contains(help.out, "apply"));
  CHECK(contains(help.out, "rotate-password"));
  RunResult help_push = sb.run({"help", "state", "push"});
  CHECK(help_push.exit_code == 0);
  CHECK(contains(help_push.out, "--force"));
  RunResult version = sb.run({"version"});
  CHECK(version.exit_code == 0);
  CHECK(std::regex_search(version.out, std::regex("^dbform v[0-9]+\\.[0-9]+\\.[0-9]+\non linux_")));
  CHECK(sb.run({"--version"}).out == version.out);

  RunResult foo = sb.run({"pln"});
  CHECK(foo.exit_code == 1);
  CHECK(contains(foo.err, "unknown command `pln`; did you mean `plan`?"));
  CHECK(contains(foo.err, "validate, plan, show, apply"));
  RunResult nested = sb.run({"state", "pul"});
  CHECK(nested.exit_code == 1);
  CHECK(contains(nested.err, "unknown command `state pul`; did you mean `state pull`?"));
  RunResult bare = sb.run({"state"});
  CHECK(bare.exit_code == 1);
  CHECK(contains(bare.err, "`dbform state` needs a command: list, show"));
  RunResult flag = sb.run({"plan", "--fromat", "json"});
  CHECK(flag.exit_code == 1);
  CHECK(contains(flag.err, "unknown flag `--fromat` for `dbform plan`; did you mean `--format`?"));
  CHECK(sb.total_requests() == 0);
}

TEST_CASE("e2e: cli: a duration written with a space or a word says how to write it") {
  Sandbox sb;
  sb.write("dbform.yaml", manifest({}, {service_yaml("orders")}));
  RunResult split = sb.run({"apply", "--auto-approve", "--wait-timeout", "10", "minutes"});
  INFO(split.describe());
  CHECK(split.exit_code == 1);
  CHECK(contains(split.err, "`minutes` is not a plan file: a duration is one word, without a space"));
  RunResult quoted = sb.run({"apply", "--auto-approve", "--wait-timeout", "10 minutes"});
  CHECK(quoted.exit_code == 1);
  CHECK(contains(quoted.err, "--wait-timeout: `10 minutes` is not a duration; write 10m"));
  RunResult word = sb.run({"apply", "--auto-approve", "--poll-interval", "2secs"});
  CHECK(contains(word.err, "write 2s"));
  CHECK(sb.count(kPostService) == 0);
}

TEST_CASE("e2e: cli: every bounded flag says its bound in words - never a 300-digit number or `Could not convert`") {
  Sandbox sb;
  sb.write("dbform.yaml", manifest({}, {service_yaml("orders")}));
  const std::string zero_or_more = "expected a whole number, 0 or more, not `";
  const std::vector<std::pair<std::vector<std::string>, std::string>> cases = {
      {{"plan", "--max-deletes", "-1"}, "--max-deletes: " + zero_or_more + "-1`"},
      {{"apply", "--max-deletes", "abc"}, "--max-deletes: " + zero_or_more + "abc`"},
      {{"plan", "--max-deletes", "99999999999999999999"}, zero_or_more + "99999999999999999999`"},
      {{"preview", "sweep", "--max-deletes", "-1"}, "--max-deletes: " + zero_or_more + "-1`"},
      {{"apply", "--parallelism", "99999999999"}, "--parallelism: expected a whole number from 1 to 64, not `99999999999`"},
      {{"preview", "up", "pr-1", "--parallelism", "many"}, "expected a whole number from 1 to 64, not `many`"},
      {{"sim", "--error-rate", "2"}, "--error-rate: expected a number from 0 to 1, not `2`"},
      {{"sim", "--rate-limit-every", "-1"}, "--rate-limit-every: " + zero_or_more + "-1`"},
      {{"sim", "--drop-create-every", "-1"}, "--drop-create-every: " + zero_or_more + "-1`"},
      {{"sim", "--lose-answer-every", "x"}, "--lose-answer-every: " + zero_or_more + "x`"},
      {{"sim", "--gateway-timeout-every", "-5"}, "--gateway-timeout-every: " + zero_or_more + "-5`"},
      {{"sim", "--seed", "-1"}, "--seed: expected a whole number from 0 to 4294967295, not `-1`"},
  };
  for (const auto& [args, said] : cases) {
    RunResult r = sb.run(args);
    INFO(r.describe());
    CHECK(r.exit_code != 0);
    CHECK(contains(r.err, said));
    CHECK(!contains(r.all(), "17976931348623157"));
    CHECK(!contains(r.all(), "Could not convert"));
  }
  // In range, 0 included, is taken.
  CHECK(sb.run({"plan", "--no-refresh", "--max-deletes", "0"}).exit_code == 0);
  CHECK(sb.total_requests() == 0);
}

TEST_CASE("e2e: cli: output --show-secrets shows passwords in text too, and an unknown field is named") {
  Sandbox sb;
  sb.write("dbform.yaml", manifest({}, {service_yaml("orders")}));
  RunResult applied = sb.apply();
  REQUIRE(applied.exit_code == 0);
  const std::string password = find_resource(sb.state(), service_address("orders"))["initial_password"];
  CHECK(contains(sb.run({"output", "--show-secrets"}).out, "password " + password));
  CHECK_FALSE(contains(sb.run({"output"}).out, password));
  RunResult field = sb.run({"output", "orders.cpu_millis"});
  CHECK(field.exit_code == 1);
  CHECK(contains(field.err, "`cpu_millis` is not an output field"));
  CHECK(contains(field.err, "the fields are id, name"));
  // The endpoint table after an apply is aligned: every host starts in the same column.
  std::smatch m;
  REQUIRE(std::regex_search(applied.out, m, std::regex("Endpoints[^\n]*\n((  .*\n)+)")));
  std::set<size_t> columns;
  std::istringstream rows(m[1].str());
  for (std::string row; std::getline(rows, row);) columns.insert(row.find_first_not_of(' ', row.find(' ', 2)));
  CHECK(columns.size() == 1);
}

TEST_CASE("e2e: cli: a wrong DBFORM_API_URL is named in the error") {
  Sandbox sb;
  sb.write("dbform.yaml", manifest({}, {service_yaml("orders")}));
  RunResult r = sb.run({"apply", "--auto-approve"}, {{"DBFORM_API_URL", sb.api_url() + "/v9"}});
  INFO(r.describe());
  CHECK(r.exit_code == 1);
  CHECK(contains(r.err, sb.api_url() + "/v9/auth/info is not the API's key check"));
  CHECK(contains(r.err, "is DBFORM_API_URL the API's base URL"));
}

TEST_CASE("e2e: cli: DBFORM_LOG=debug logs every HTTP exchange, trace its bodies, and neither shows a secret") {
  auto config = default_sim_config();
  config.faults.rate_limit_every = 4;
  Sandbox sb(config);
  sb.write("dbform.yaml", manifest({}, {service_yaml("orders"), service_yaml("billing")}));
  RunResult debug = sb.apply({}, {{"DBFORM_LOG", "debug"}});
  INFO(debug.describe());
  REQUIRE(debug.exit_code == 0);
  std::regex exchange("debug: http: (GET|POST) http://127\\.0\\.0\\.1:[0-9]+/[^ ]+ -> [0-9]{3} in [0-9]+m?s");
  const auto lines = std::distance(std::sregex_iterator(debug.err.begin(), debug.err.end(), exchange), std::sregex_iterator());
  CHECK(lines == sb.total_requests());
  CHECK(contains(debug.err, "429 Too Many Requests, trying again in"));
  CHECK_FALSE(contains(debug.err, "response body"));

  sb.write("dbform.yaml", manifest({}, {service_yaml("orders"), service_yaml("billing"), service_yaml("traced")}));
  RunResult trace = sb.apply({}, {{"DBFORM_LOG", "trace"}});
  REQUIRE(trace.exit_code == 0);
  CHECK(std::regex_search(trace.err, std::regex("request body: \\{[^\n]*\"name\":\"traced\"")));
  CHECK(contains(trace.err, "\"initial_password\":\"***\""));
  const json state = sb.state();  // kept: a loop over a temporary's member would read freed memory
  for (const auto& r : state["resources"]) {
    const std::string password = r.value("initial_password", "");
    if (password.empty()) continue;
    CHECK_FALSE(contains(trace.err + trace.out + debug.err + debug.out, password));
  }
  CHECK_FALSE(contains(trace.err + debug.err, kKey));
}

TEST_CASE("e2e: cli: whoami resolves each declared project's key as apply does, and exits 1 for another project's key") {
  Sandbox sb;
  sb.write("dbform.yaml", "version: 1\nprojects:\n  - id: " + kProject + "\n    api_key_env: DBFORM_TEAM_KEY\n"
                          "  - id: other-project\n");
  RunResult r = sb.run({"whoami"}, {{"DBFORM_TEAM_KEY", kKey}, {"DBFORM_API_KEY", kKey}});
  INFO(r.describe());
  CHECK(r.exit_code == 1);
  CHECK(contains(r.out, "Project " + kProject + ": ok, key `"));
  CHECK(contains(r.out, "from DBFORM_TEAM_KEY"));
  CHECK(contains(r.out, "Project other-project: WRONG PROJECT"));
  CHECK(contains(r.out, "belongs to project " + kProject));
  CHECK_FALSE(contains(r.out + r.err, kKey));
  RunResult one = sb.run({"whoami", "--project", kProject}, {{"DBFORM_TEAM_KEY", kKey}});
  CHECK(one.exit_code == 0);
  CHECK_FALSE(contains(one.out, "other-project"));
}

namespace {

// The lines of one section (COMMANDS, OPTIONS) of `dbform help PATH...`: the real command set, as a
// user sees it.
std::vector<std::string> help_section(Sandbox& sb, const std::vector<std::string>& path, const std::string& title) {
  std::vector<std::string> args = {"help"};
  args.insert(args.end(), path.begin(), path.end());
  std::istringstream lines(sb.run(args).out);
  std::vector<std::string> out;
  bool inside = false;
  for (std::string line; std::getline(lines, line);) {
    if (!line.empty() && line[0] != ' ') inside = line == title;
    else if (inside && line.find("- `") != std::string::npos) out.push_back(line);
  }
  return out;
}

std::vector<std::string> listed_commands(Sandbox& sb, const std::vector<std::string>& path) {
  std::vector<std::string> names;
  for (const auto& line : help_section(sb, path, "COMMANDS")) {
    const size_t open = line.find('`');
    names.push_back(line.substr(open + 1, line.find('`', open + 1) - open - 1));
  }
  return names;
}

std::vector<std::string> listed_flags(Sandbox& sb, const std::vector<std::string>& path) {
  std::vector<std::string> flags;
  std::regex flag("`(--[a-z][a-z-]*)");
  for (const auto& line : help_section(sb, path, "OPTIONS")) {
    const std::string names = line.substr(0, line.find(": "));
    for (auto it = std::sregex_iterator(names.begin(), names.end(), flag); it != std::sregex_iterator(); ++it)
      flags.push_back((*it)[1]);
  }
  return flags;
}

}  // namespace

TEST_CASE("e2e: cli: the completion scripts and the man page cover every command and flag there is") {
  Sandbox sb;
  const std::string bash = sb.run({"completion", "bash"}).out;
  const std::string zsh = sb.run({"completion", "zsh"}).out;
  const std::string fish = sb.run({"completion", "fish"}).out;
  REQUIRE(sb.run({"__manpages", "man"}).exit_code == 0);
  CHECK(contains(zsh, "#compdef dbform"));
  std::vector<std::vector<std::string>> paths;
  for (const auto& c : listed_commands(sb, {})) {
    paths.push_back({c});
    for (const auto& sub : listed_commands(sb, {c})) paths.push_back({c, sub});
  }
  REQUIRE(paths.size() > 15);
  for (const auto& path : paths) {
    const std::string name = dbform::join(path, " ");
    INFO(name);
    CHECK(contains(bash, "\"" + name + "\")"));
    CHECK(contains(zsh, "\"" + name + "\")"));
    CHECK(contains(fish, "-a " + path.back() + " "));
    const std::string man = sb.read("man/man1/dbform-" + std::regex_replace(name, std::regex(" "), "-") + ".1");
    CHECK(contains(man, ".SH EXAMPLES"));
    for (const auto& flag : listed_flags(sb, path)) {
      INFO(flag);
      CHECK(std::regex_search(bash, std::regex("[\" ]" + flag + "[\" ]")));
      CHECK(contains(fish, "-l " + flag.substr(2)));
      CHECK(contains(man, "\\-\\-" + std::regex_replace(flag.substr(2), std::regex("-"), "\\-")));
    }
  }
}

TEST_CASE("e2e: cli: bash completes commands, flags, --format values and the addresses each command takes") {
  Sandbox sb;
  sb.write("dbform.yaml", manifest({vpc_yaml("main")}, {service_yaml("orders"), service_yaml("billing")}));
  REQUIRE(sb.apply().exit_code == 0);
  sb.write("dbform.yaml", manifest({vpc_yaml("main")}, {service_yaml("orders"), service_yaml("billing"),
                                                        service_yaml("search")}));
  const std::vector<std::string> got = bash_completions(
      sb, "t dbform pl; t dbform state pu; t dbform plan --fo; t dbform plan --format ''; t dbform output " + kProject +
              "/services/o; t dbform rotate-password " + kProject + "/services/b\n"
              "t dbform rotate-password ''; t dbform import ''; t dbform output orders.pa; t dbform state show bil\n");
  REQUIRE(got.size() == 10);
  CHECK(got[0] == "plan");
  CHECK(got[1] == "pull push");
  CHECK(got[2] == "--format");
  CHECK(got[3] == "text json markdown");
  CHECK(got[4] == service_address("orders"));
  CHECK(got[5] == service_address("billing"));
  // Services only (a VPC has no password), in every form; what import can still bring in; fields.
  CHECK(got[6] == service_address("orders") + " services/orders orders " + service_address("billing") +
                      " services/billing billing");
  CHECK(got[7] == service_address("search") + " services/search search");
  CHECK(got[8] == "orders.password");
  CHECK(got[9] == "billing");
}

TEST_CASE("e2e: cli: `help COMMAND`, `COMMAND --help` and the man page are one page, with examples") {
  Sandbox sb;
  RunResult help = sb.run({"help", "state", "push"});
  REQUIRE(help.exit_code == 0);
  CHECK(sb.run({"state", "push", "--help"}).out == help.out);
  for (const char* section : {"NAME\n", "SYNOPSIS\n", "DESCRIPTION\n", "ARGUMENTS\n", "OPTIONS\n", "ENVIRONMENT\n",
                              "EXAMPLES\n"})
    CHECK(contains(help.out, section));
  CHECK(contains(help.out, "`DBFORM_STATE_PASSPHRASE`"));  // it takes --state
  CHECK_FALSE(contains(help.out, "DBFORM_API_KEY"));       // it calls no API
  CHECK(contains(help.out, "dbform state push dbform.state.json --state postgres://"));

  REQUIRE(sb.run({"__manpages", "man"}).exit_code == 0);
  const std::string man = sb.read("man/man1/dbform-state-push.1");
  CHECK(contains(man, ".TH DBFORM-STATE-PUSH 1"));
  CHECK(contains(man, ".SH EXAMPLES"));
  CHECK(contains(man, "dbform state push dbform.state.json \\-\\-state postgres://"));
  // The manifest's page is docs/manifest.md, as text and as roff, day three included.
  RunResult manifest = sb.run({"help", "manifest"});
  CHECK(manifest.exit_code == 0);
  CHECK(contains(manifest.out, "FIELDS\n"));
  CHECK(contains(manifest.out, "read_replicas"));
  CHECK(contains(manifest.out, "peer_vpc_id"));
  const std::string man5 = sb.read("man/man5/dbform-manifest.5");
  CHECK(contains(man5, ".SH ADDRESSES"));
  CHECK(contains(man5, "the \\fIname\\fR of an environment variable"));
  RunResult unknown = sb.run({"help", "plna"});
  CHECK(unknown.exit_code == 1);
  CHECK(contains(unknown.err, "did you mean `plan`?"));
}
