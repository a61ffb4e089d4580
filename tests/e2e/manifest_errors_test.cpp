// Bad manifests through the real binary: validate, plan and apply all refuse with file:line:col,
// touch no state and send nothing to the API.
#include "common.h"

using namespace e2e;

namespace {

struct BadManifest {
  std::string what;
  std::map<std::string, std::string> files;  // name -> text
  std::vector<std::string> expected;         // substrings of stderr, e.g. "dbform.yaml:6:9"
};

const std::string kHead = "version: 1\nprojects:\n  - id: acme-prod\n";

std::vector<BadManifest> bad_manifests() {
  return {
      {"unknown key with a typo",
       {{"dbform.yaml", kHead + "    services:\n      - name: orders\n        regoin_code: us-east-1\n"}},
       {"dbform.yaml:6:9", "regoin_code", "did you mean", "region_code"}},
      {"wrong type",
       {{"dbform.yaml", kHead + "    services:\n      - name: orders\n        cpu_millis: true\n"}},
       {"dbform.yaml:6:21", "cpu_millis"}},
      {"bad CIDR",
       {{"dbform.yaml", kHead + "    vpcs:\n      - name: main\n        cidr: 10.0.0.0/33\n        region_code: us-east-1\n"}},
       {"dbform.yaml:6:15", "cidr"}},
      {"negative replica_count",
       {{"dbform.yaml", kHead + "    services:\n      - name: orders\n        replica_count: -1\n"}},
       {"dbform.yaml:6:24", "replica_count"}},
      {"bad environment_tag",
       {{"dbform.yaml", kHead + "    services:\n      - name: orders\n        environment_tag: STAGING\n"}},
       {"dbform.yaml:6:26", "environment_tag"}},
      {"missing service name",
       {{"dbform.yaml", kHead + "    services:\n      - cpu_millis: 1000\n"}},
       {"dbform.yaml:5:9", "name"}},
      {"version 2",
       {{"dbform.yaml", "version: 2\nprojects: []\n"}},
       {"dbform.yaml:1:10", "version"}},
      {"YAML syntax error",
       {{"dbform.yaml", kHead + "    services:\n      - name: orders\n        cpu_millis: 1000: 2\n"}},
       {"dbform.yaml:6:25", "YAML"}},
      {"unset ${VAR}",
       {{"dbform.yaml", "version: 1\nprojects:\n  - id: ${E2E_UNSET_PROJECT}\n"}},
       {"dbform.yaml:3:", "DBFORM_VAR_E2E_UNSET_PROJECT"}},
      {"the same service in two files",
       {{"a.yaml", kHead + "    services:\n      - name: orders\n"},
        {"b.yaml", kHead + "    services:\n      - name: orders\n"}},
       {"a.yaml:5:9", "b.yaml:5:9", "orders"}},
      {"bad addon",
       {{"dbform.yaml", kHead + "    services:\n      - name: orders\n        addons: [timeseries]\n"}},
       {"dbform.yaml:6:18", "addons"}},
      {"services is not a list",
       {{"dbform.yaml", kHead + "    services: orders\n"}},
       {"dbform.yaml:4:15", "services"}},
      {"unknown top-level key",
       {{"dbform.yaml", "version: 1\nprojetcs: []\n"}},
       {"dbform.yaml:2:1", "projetcs", "did you mean", "projects"}},
  };
}

// A valid state recording one service, as a previous apply would have left it.
const std::string kExistingState = R"({
  "format": "dbform-state",
  "version": 1,
  "lineage": "5b4f7c1e-0000-4000-8000-000000000001",
  "serial": 4,
  "resources": [
    {
      "address": "acme-prod/services/orders",
      "project_id": "acme-prod",
      "kind": "service",
      "name": "orders",
      "settings": {"cpu_millis": "1000"},
      "id": "abcde12345",
      "create_pending": false,
      "status": "READY",
      "endpoint": {"host": "abcde12345.acme-prod.tsdb.sim.local", "port": 31234},
      "pooler_endpoint": null,
      "initial_password": "OldSecretPassw0rd",
      "created_at": "2026-01-01T00:00:00Z",
      "updated_at": "2026-01-01T00:00:00Z",
      "last_response": null
    }
  ]
}
)";

void check_refused(Sandbox& sb, const BadManifest& bad, bool with_state) {
  const std::vector<std::vector<std::string>> commands = {
      {"validate"}, {"plan"}, {"plan", "--detailed-exitcode"}, {"apply", "--auto-approve", "--poll-interval", "100ms"}};
  for (const auto& args : commands) {
    RunResult r = sb.run(args);
    INFO("case: " << bad.what << (with_state ? " (with a state)" : " (no state)") << "\ncommand: dbform "
                  << args[0] << (args.size() > 1 ? " " + args[1] : std::string()) << "\n"
                  << r.describe());
    CHECK(r.exit_code == 1);
    for (const auto& e : bad.expected) CHECK(contains(r.err, e));
    if (with_state) {
      CHECK(sb.read("dbform.state.json") == kExistingState);
      CHECK(!sb.exists("dbform.state.json.backup"));
    } else {
      CHECK(!sb.exists("dbform.state.json"));
    }
  }
}

}  // namespace

TEST_CASE("e2e: bad manifests are refused by validate, plan and apply with file:line:col, touching nothing") {
  for (const auto& bad : bad_manifests()) {
    for (bool with_state : {false, true}) {
      Sandbox sb;
      for (const auto& [name, text] : bad.files) sb.write(name, text);
      if (with_state) sb.write("dbform.state.json", kExistingState);
      check_refused(sb, bad, with_state);
      INFO("case: " << bad.what << "; requests: " << sb.counts().dump());
      CHECK(sb.total_requests() == 0);
    }
  }
}

TEST_CASE("e2e: the valid twin of each bad manifest passes validate (the errors above are not incidental)") {
  Sandbox sb;
  sb.write("dbform.yaml", kHead +
                              "    vpcs:\n      - name: main\n        cidr: 10.0.0.0/16\n        region_code: us-east-1\n"
                              "    services:\n      - name: orders\n        region_code: us-east-1\n"
                              "        cpu_millis: 1000\n        replica_count: 1\n        environment_tag: PROD\n"
                              "        addons: [time-series]\n");
  RunResult r = sb.run({"validate"});
  INFO(r.describe());
  CHECK(r.exit_code == 0);
  CHECK(sb.total_requests() == 0);
}
