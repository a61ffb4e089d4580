// More guards (issue 19), from an adversarial review of the first ones: URL-like state locations,
// keys that never reach base64, hard links where dbform keeps its files, a generated manifest that
// must not replace the state, text that other YAML readers would take otherwise, and manifest file
// names in any case.
#include <sys/stat.h>

#include "common.h"

using namespace e2e;

TEST_CASE("e2e: guards: a state location that looks like a URL dbform does not read is refused, never a file name") {
  Sandbox sb;
  sb.write("dbform.yaml", base_manifest());
  const std::string secret = "PWSECRET-url-form";
  for (const std::string& where : {"POSTGRES://ci:" + secret + "@127.0.0.1:1/db", "postgresql:ci:" + secret + "@127.0.0.1",
                                   "https://ci:" + secret + "@127.0.0.1/state"}) {
    for (const auto& args : std::vector<std::vector<std::string>>{{"plan"}, {"apply", "--auto-approve"}}) {
      RunResult r = sb.run(args, {{"DBFORM_STATE", where}});
      INFO(args[0] << ": " << r.describe());
      CHECK(r.exit_code == 1);
      CHECK(contains(r.err, "DBFORM_STATE looks like a URL"));
      CHECK_FALSE(contains(r.all(), secret));
    }
    RunResult push = sb.run({"state", "push", where});
    CHECK(push.exit_code == 1);
    CHECK_FALSE(contains(push.all(), secret));
  }
  for (const auto& entry : fs::recursive_directory_iterator(sb.dir()))
    CHECK_FALSE(contains(entry.path().string(), secret));
  CHECK(sb.total_requests() == 0);
}

TEST_CASE("e2e: guards: whoami without manifests checks DBFORM_API_KEY too, under either auth scheme") {
  Sandbox sb;
  for (const std::string& scheme : {"bearer", "basic"}) {
    RunResult r = sb.run({"whoami"}, {{"DBFORM_API_KEY", kKey + "\n"}, {"DBFORM_AUTH_SCHEME", scheme}});
    INFO(scheme << ": " << r.describe());
    CHECK(r.exit_code == 1);
    CHECK(contains(r.err, "DBFORM_API_KEY holds a control character"));
  }
  CHECK(sb.total_requests() == 0);
}

TEST_CASE("e2e: guards: a journal or lock with other names (hard links) is never written through") {
  Sandbox sb;
  apply_base(sb);
  sb.write("victim.txt", "precious");  // no newline: read as a journal, a torn last line
  ::chmod((sb.dir() / "victim.txt").c_str(), 0644);
  for (const char* own : {"dbform.state.json.journal", "dbform.state.json.lock"}) {
    fs::remove(sb.dir() / own);
    fs::create_hard_link(sb.dir() / "victim.txt", sb.dir() / own);
    RunResult r = sb.run({"rotate-password", "orders"});
    INFO(own << ": " << r.describe());
    CHECK(r.exit_code == 1);
    CHECK(contains(r.err, "other names"));
    CHECK(sb.read("victim.txt") == "precious");
    struct stat st {};
    REQUIRE(::stat((sb.dir() / "victim.txt").c_str(), &st) == 0);
    CHECK((st.st_mode & 07777) == 0644);
    fs::remove(sb.dir() / own);
  }
  CHECK(sb.count(kUpdatePassword) == 0);
}

TEST_CASE("e2e: guards: import --generate never writes over the state or its files, --force or not") {
  Sandbox sb;
  apply_base(sb);
  console_service(sb, {{"name", "legacy"}, {"region_code", "us-east-1"}});
  const std::string state = sb.read("dbform.state.json");
  for (const std::string& target : {std::string("dbform.state.json"), std::string("dbform.state.json.lock"),
                                    std::string("dbform.state.json.backup"), std::string("./dbform.state.json")}) {
    RunResult r = sb.run({"import", "--project", kProject, "--generate", target, "--force"});
    INFO(target << ": " << r.describe());
    CHECK(r.exit_code == 1);
    CHECK(contains(r.err, "a file of the state"));
    CHECK(sb.read("dbform.state.json") == state);
  }
}

TEST_CASE("e2e: guards: a generated manifest quotes what YAML 1.1 readers would take for booleans") {
  Sandbox sb;
  console_service(sb, {{"name", "yes"}, {"region_code", "on"}});
  RunResult r = sb.run({"import", "--project", kProject, "--generate", "generated.yaml"});
  INFO(r.describe());
  REQUIRE(r.exit_code == 0);
  const std::string text = sb.read("generated.yaml");
  CHECK(contains(text, "name: \"yes\""));
  CHECK(contains(text, "region_code: \"on\""));
  apply_generated(sb, "generated.yaml", 1);
}

TEST_CASE("e2e: guards: a manifest named .YAML or .Yml is read, never skipped as undeclared") {
  Sandbox sb;
  sb.write("m/main.yaml", manifest({vpc_yaml("main")}, {service_yaml("orders")}));
  sb.write("m/MORE.YAML", manifest({}, {service_yaml("billing")}));
  RunResult applied = sb.apply({"-f", "m"});
  INFO(applied.describe());
  REQUIRE(applied.exit_code == 0);
  CHECK(sb.count(kPostService) == 2);
  RunResult pruned = sb.run({"plan", "-f", "m", "--prune", "--detailed-exitcode"});
  INFO(pruned.describe());
  CHECK(pruned.exit_code == 0);  // billing is declared: nothing to delete
}
