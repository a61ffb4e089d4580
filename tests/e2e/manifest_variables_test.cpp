// A manifest reads only what the pipeline set for it: `${NAME}` reads DBFORM_VAR_NAME and no other
// variable, api_key_env names only a DBFORM_ variable, and no error prints a secret. A pull
// request's manifest runs in the pipeline's environment, so anything else would let it print a
// runner's token in a log or a comment.
#include "common.h"

namespace e2e {
namespace {

const std::string kToken = "ghp_abcdef123456";

std::string service_with(const std::string& settings) {
  return "version: 1\nprojects:\n  - id: " + kProject + "\n    services:\n      - name: orders\n" + settings;
}

}  // namespace

TEST_CASE("e2e: ${NAME} with only NAME set is a located error naming DBFORM_VAR_NAME, and makes no call") {
  Sandbox sb;
  sb.write("dbform.yaml", manifest({}, {service_yaml("orders")}));
  REQUIRE(sb.apply().exit_code == 0);
  const long long calls = sb.total_requests();
  const std::string state = sb.read("dbform.state.json");

  sb.write("dbform.yaml", service_with("        cpu_millis: ${E2E_CPU}\n        memory_gbs: 4\n"
                                       "        region_code: us-east-1\n"));
  for (const auto& args : std::vector<std::vector<std::string>>{
           {"validate"}, {"plan"}, {"apply", "--auto-approve", "--poll-interval", "100ms"}}) {
    RunResult r = sb.run(args, {{"E2E_CPU", "2000"}});
    INFO(r.describe());
    CHECK(r.exit_code == 1);
    CHECK(contains(r.err, "dbform.yaml:6:21"));
    CHECK(contains(r.err, "`${E2E_CPU}` reads `DBFORM_VAR_E2E_CPU`, which is not set"));
    CHECK(contains(r.err, "set DBFORM_VAR_E2E_CPU"));
  }
  CHECK(sb.total_requests() == calls);
  CHECK(sb.read("dbform.state.json") == state);
}

TEST_CASE("e2e: ${NAME} reads DBFORM_VAR_NAME, in validate, plan and apply") {
  Sandbox sb;
  sb.write("dbform.yaml", manifest({}, {service_yaml("orders")}));
  REQUIRE(sb.apply().exit_code == 0);
  sb.write("dbform.yaml", service_with("        cpu_millis: ${E2E_CPU}\n        memory_gbs: 4\n"
                                       "        region_code: us-east-1\n"));
  const std::map<std::string, std::string> vars = {{"DBFORM_VAR_E2E_CPU", "2000"}, {"E2E_CPU", "500"}};
  RunResult validate = sb.run({"validate"}, vars);
  INFO(validate.describe());
  CHECK(validate.exit_code == 0);
  RunResult plan = sb.run({"plan", "--format", "json"}, vars);
  INFO(plan.describe());
  REQUIRE(plan.exit_code == 0);
  CHECK(contains(plan.out, "\"2000\""));
  CHECK_FALSE(contains(plan.out, "\"500\""));
  RunResult apply = sb.apply({}, vars);
  INFO(apply.describe());
  CHECK(apply.exit_code == 0);
  CHECK(sb.state()["resources"][0]["settings"]["cpu_millis"] == "2000");
}

TEST_CASE("e2e: no error of validate or plan prints a variable that is not the manifest's, or a secret") {
  Sandbox sb;
  // Every kind of value that an error quotes: numbers, enums, CIDRs, regions, names, ids, addons.
  const std::vector<std::string> uses = {
      "        cpu_millis: ${SECRET_TOKEN}\n",      "        memory_gbs: ${SECRET_TOKEN}\n",
      "        environment_tag: ${SECRET_TOKEN}\n", "        region_code: ${SECRET_TOKEN}\n",
      "        replica_count: ${SECRET_TOKEN}\n",   "        addons: [\"${SECRET_TOKEN}\"]\n",
      "        vpc: ${SECRET_TOKEN}\n",             "        import_id: ${SECRET_TOKEN}\n",
      "        renamed_from: \"${SECRET_TOKEN}\"\n"};
  std::string all;
  for (const auto& use : uses) all += use;
  const std::string vpc = "    vpcs:\n      - name: ${SECRET_TOKEN}\n        cidr: ${SECRET_TOKEN}\n"
                          "        region_code: us-east-1\n";
  sb.write("dbform.yaml", "version: 1\nprojects:\n  - id: " + kProject + "\n" + vpc + "    services:\n"
                          "      - name: orders\n" + all + "      - name: ${SECRET_TOKEN}\n");
  // The runner's token in its own variable; and the API key copied into a DBFORM_VAR_ one, which
  // the manifest may read but an error must not show.
  for (const auto& env : std::vector<std::map<std::string, std::string>>{
           {{"SECRET_TOKEN", kToken}}, {{"SECRET_TOKEN", kToken}, {"DBFORM_VAR_SECRET_TOKEN", kKey}}}) {
    for (const auto& args : std::vector<std::vector<std::string>>{
             {"validate"}, {"plan"}, {"plan", "--format", "json"}, {"plan", "--format", "markdown"}}) {
      RunResult r = sb.run(args, env);
      INFO(r.describe());
      CHECK(r.exit_code == 1);
      CHECK(contains(r.err, "dbform.yaml:"));
      CHECK_FALSE(contains(r.all(), "abcdef123456"));
      CHECK_FALSE(contains(r.all(), kKey));
      CHECK_FALSE(contains(r.all(), "0123456789"));  // nor a part or a changed copy of the key
    }
  }
  CHECK(sb.total_requests() == 0);
}

// A pull request controls the manifest: dropping the project whose api_key_env names a key must not
// let it interpolate that key. Every DBFORM_ variable named as a key, passphrase, password, secret
// or token, and PGPASSWORD, is a secret whatever the manifest declares.
TEST_CASE("e2e: ${NAME} holding the value of a key variable of a project the manifest does not declare, or of "
          "PGPASSWORD, is refused without printing it") {
  Sandbox sb;
  sb.write("dbform.yaml", service_with("        cpu_millis: 1000\n        memory_gbs: 4\n") +
                              "      - name: s-${X}\n        cpu_millis: 1000\n        memory_gbs: 4\n");
  struct Case {
    std::string variable, value;
  };
  for (const Case& c : {Case{"DBFORM_API_KEY_BETA", "APIKEYbetaQQQ777"}, Case{"DBFORM_BILLING_TOKEN", "tok-9f8e7d6c"},
                        Case{"PGPASSWORD", "NEWPASSzz9"}}) {
    const std::map<std::string, std::string> env = {{c.variable, c.value}, {"DBFORM_VAR_X", c.value}};
    const std::string &variable = c.variable, &value = c.value;
    for (const auto& args : std::vector<std::vector<std::string>>{{"validate"}, {"plan", "--no-refresh"}}) {
      RunResult r = sb.run(args, env);
      INFO(variable << ": " << r.describe());
      CHECK(r.exit_code == 1);
      CHECK(contains(r.err, "DBFORM_VAR_X (read by ${X}) holds the same value as " + variable));
      CHECK_FALSE(contains(r.all(), value));
    }
  }
  // A variable whose name says nothing of a secret stays the manifest's to read.
  RunResult plain = sb.run({"plan", "--no-refresh"}, {{"DBFORM_REGION_NAME", "east"}, {"DBFORM_VAR_X", "east"}});
  INFO(plain.describe());
  CHECK(plain.exit_code == 0);
  CHECK(contains(plain.out, "s-east"));
  CHECK(sb.total_requests() == 0);
}

TEST_CASE("e2e: api_key_env that does not begin with DBFORM_ is refused before any call") {
  Sandbox sb;
  sb.env.erase("DBFORM_API_KEY");
  sb.write("dbform.yaml", "version: 1\nprojects:\n  - id: " + kProject + "\n    api_key_env: TEAM_KEY\n"
                          "    services:\n" + service_yaml("orders"));
  for (const auto& args : std::vector<std::vector<std::string>>{
           {"validate"}, {"plan"}, {"whoami"}, {"apply", "--auto-approve", "--poll-interval", "100ms"}}) {
    RunResult r = sb.run(args, {{"TEAM_KEY", kKey}});
    INFO(r.describe());
    CHECK(r.exit_code == 1);
    CHECK(contains(r.err, "dbform.yaml:4:18"));
    CHECK(contains(r.err, "`TEAM_KEY`, which does not begin with DBFORM_"));
    CHECK(contains(r.err, "rename the variable to DBFORM_TEAM_KEY"));
    CHECK_FALSE(contains(r.all(), kKey));
  }
  CHECK(sb.total_requests() == 0);
  CHECK_FALSE(sb.exists("dbform.state.json"));

  sb.write("dbform.yaml", "version: 1\nprojects:\n  - id: " + kProject + "\n    api_key_env: DBFORM_TEAM_KEY\n"
                          "    services:\n" + service_yaml("orders"));
  RunResult renamed = sb.apply({}, {{"DBFORM_TEAM_KEY", kKey}});
  INFO(renamed.describe());
  CHECK(renamed.exit_code == 0);
  CHECK(sb.count(kPostService) == 1);
}

}  // namespace e2e
