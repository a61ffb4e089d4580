// Text from the API that must not come back out as it came in: secrets echoed inside details,
// escape sequences (from the API or a plan file) and wildcards. Through the real binary against the
// simulator.
#include "service_helpers.h"

using namespace e2e;

namespace {



bool has_control(const std::string& text) {
  return std::any_of(text.begin(), text.end(), [](char c) {
    const auto u = static_cast<unsigned char>(c);
    return (u < 0x20 && c != '\n' && c != '\t') || u == 0x7f;
  });
}

}  // namespace

// Item 6: a password the API echoes inside an object dbform keeps is never shown or kept.
TEST_CASE("e2e: guards four: a password echoed inside details is not shown by state show, nor kept in last_response") {
  auto config = default_sim_config();
  config.faults.echo_password_in_details = true;
  Sandbox sb(config);
  const std::string fork = "      - name: orders-staging\n        fork:\n          from: orders\n"
                           "          strategy: LAST_SNAPSHOT\n";
  apply_ok(sb, manifest({}, {service_with("orders", {replica_set("reporting", 1, "            connection_pooler: true\n")},
                                          "        connection_pooler: true\n"),
                             fork}));
  const json state = sb.state();
  std::vector<std::string> passwords;
  for (const char* name : {"orders", "orders-staging"}) {
    const std::string pw = find_resource(state, service_address(name))["initial_password"];
    REQUIRE(pw.size() > 8);
    passwords.push_back(pw);
  }
  // The answers did carry it (else this test proves nothing)...
  CHECK(contains(sb.sim().all_services().dump(), passwords[0]));
  CHECK(contains(sb.sim().all_replica_sets().dump(), passwords[0]));
  // ...but the state keeps each password once, as its initial_password.
  const std::string stored = state.dump();
  for (const auto& pw : passwords) CHECK(occurrences(stored, pw) == 1);
  for (const std::string& address : {service_address("orders"), service_address("orders-staging"), kSetAddress}) {
    RunResult shown = sb.run({"state", "show", address});
    INFO(shown.describe());
    CHECK(shown.exit_code == 0);
    for (const auto& pw : passwords) CHECK_FALSE(contains(shown.all(), pw));
  }
  // A refresh reads the echoes again: still neither kept nor shown.
  REQUIRE(sb.apply().exit_code == 0);
  for (const auto& pw : passwords) CHECK(occurrences(sb.state().dump(), pw) == 1);
  for (const std::vector<std::string>& args : {std::vector<std::string>{"state", "show", kSetAddress},
                                              std::vector<std::string>{"plan", "--format", "json"},
                                              std::vector<std::string>{"output", "--format", "json"}}) {
    RunResult r = sb.run(args);
    INFO(r.describe());
    for (const auto& pw : passwords) CHECK_FALSE(contains(r.all(), pw));
  }
}

// Item 7: escape sequences in a VPC endpoint's host, and in a plan file.
TEST_CASE("e2e: guards four: escape sequences from the API or a plan file never reach the terminal") {
  auto config = default_sim_config();
  config.faults.vpc_endpoint_host = "evil\x1b]0;owned\x07\x1b[2J.example";
  Sandbox sb(config);
  apply_ok(sb, manifest({vpc_yaml("main")}, {service_yaml("orders") + "        vpc: main\n"}));
  for (const std::vector<std::string>& args :
       {std::vector<std::string>{"output"}, std::vector<std::string>{"output", "--format", "json"},
        std::vector<std::string>{"output", "orders.vpc_endpoint"},
        std::vector<std::string>{"output", "orders.vpc_endpoint", "--format", "env"},
        std::vector<std::string>{"state", "show", "orders"}}) {
    RunResult r = sb.run(args);
    INFO(r.describe());
    CHECK_FALSE(has_control(r.all()));
  }
  // A plan file edited to hold escape sequences (in a reason and a name), shown in every format.
  sb.write("dbform.yaml", manifest({vpc_yaml("main")}, {service_yaml("orders") + "        vpc: main\n", service_yaml("billing")}));
  REQUIRE(sb.run({"plan", "--out", "edited.plan"}).exit_code == 0);
  json doc = json::parse(sb.read("edited.plan"));
  for (auto& a : doc["actions"]) {
    a["name"] = a["name"].get<std::string>() + "\x1b]0;owned\x07";
    a["reason"] = "\x1b[2J\x1b[31mall is fine\x1b[0m";
    a["address"] = a["address"].get<std::string>() + "\x1b[1A";
  }
  sb.write("edited.plan", doc.dump());
  for (const std::string& format : {"text", "markdown", "json"}) {
    RunResult r = sb.run({"show", "edited.plan", "--format", format});
    INFO(format << ": " << r.describe());
    CHECK(r.exit_code == 0);
    CHECK_FALSE(has_control(r.all()));
    CHECK(contains(r.out, "billing"));
  }
}

// Item 8: a host the API gives is written into pgpass as libpq reads it: `*` is no wildcard.
TEST_CASE("e2e: guards four: an API host `*` is escaped in --format pgpass") {
  auto config = default_sim_config();
  config.faults.endpoint_host = "*";
  Sandbox sb(config);
  apply_ok(sb, manifest({}, {service_yaml("orders")}));
  const json rec = find_resource(sb.state(), service_address("orders"));
  REQUIRE(rec["endpoint"]["host"] == "*");
  RunResult r = sb.run({"output", "--format", "pgpass"});
  INFO(r.describe());
  CHECK(r.exit_code == 0);
  const std::string port = std::to_string(rec["endpoint"]["port"].get<int>());
  CHECK(r.out.rfind("\\*:" + port + ":tsdb:tsdbadmin:", 0) == 0);
  CHECK_FALSE(contains(r.out, "\n*:"));
}
