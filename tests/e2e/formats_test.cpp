// Machine-readable output for pipelines: plan --format json|markdown, apply --json, output --format
// env|json, and no secret in any of them.
#include <cstdio>
#include <regex>
#include <sstream>

#include "common.h"

using namespace e2e;

namespace {

// Every line of `text` parsed as JSON; fails the test on a line that is not.
std::vector<json> json_lines(const std::string& text) {
  std::vector<json> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    INFO("line: " << line);
    json j = json::parse(line, nullptr, false);
    REQUIRE(!j.is_discarded());
    lines.push_back(j);
  }
  return lines;
}

std::vector<std::string> passwords(const json& state) {
  std::vector<std::string> out;
  for (const auto& r : state["resources"])
    if (!r.value("initial_password", "").empty()) out.push_back(r["initial_password"]);
  return out;
}

// A state with every kind of plan action: search is created, orders is resized in place, billing
// waits, analytics conflicts (a region change), legacy is an orphan, the VPC is a no-op.
void make_every_action(Sandbox& sb) {
  sb.write("dbform.yaml", manifest({vpc_yaml("main")}, {service_yaml("orders"), service_yaml("billing"),
                                                         service_yaml("analytics"), service_yaml("legacy")}));
  REQUIRE(sb.apply().exit_code == 0);
  json state = sb.state();
  for (auto& r : state["resources"])
    if (r["name"] == "billing") r["status"] = "CONFIGURING";
  sb.write("dbform.state.json", state.dump());
  sb.write("dbform.yaml", manifest({vpc_yaml("main")}, {service_yaml("orders", 2000), service_yaml("billing"),
                                                         moved_service_yaml("analytics"), service_yaml("search")}));
}

}  // namespace

TEST_CASE("e2e: plan --format json is one versioned document on stdout, also with --out") {
  Sandbox sb;
  make_every_action(sb);
  RunResult r = sb.run({"plan", "--no-refresh", "--format", "json", "--out", "tfplan"});
  INFO(r.describe());
  CHECK(r.exit_code == 1);  // a conflict
  json doc = json::parse(r.out);
  CHECK(doc["format"] == "dbform-plan");
  CHECK(doc["format_version"] == 1);
  CHECK(doc["summary"] == json({{"create", 1}, {"import", 0}, {"forget", 0}, {"update", 1}, {"delete", 0}, {"replace", 0}, {"wait", 1}, {"adopt", 0},
                                {"no_op", 1}, {"conflict", 1}, {"orphan", 1}, {"prunable", 1}, {"nothing_to_forget", 0}, {"policy_violations", 0},
                                {"has_changes", true}, {"has_conflicts", true}}));
  CHECK(doc["prune"] == false);
  std::map<std::string, json> by_address;
  for (const auto& a : doc["actions"]) by_address[a["address"]] = a;
  json conflict = by_address[service_address("analytics")];
  CHECK(conflict["action"] == "conflict");
  CHECK(conflict["changes"] ==
        json::array({{{"field", "region_code"}, {"before", "us-east-1"}, {"after", "eu-west-1"}, {"drift", false}}}));
  CHECK(contains(conflict["reason"].get<std::string>(), "requires replacing the database"));
  json update = by_address[service_address("orders")];
  CHECK(update["action"] == "update");
  CHECK(update["changes"] == json::array({{{"field", "cpu_millis"}, {"before", "1000"}, {"after", "2000"}, {"drift", false}}}));
  CHECK(update["calls"] == json::array({{{"call", "resize"},
                                         {"body", {{"cpu_millis", "2000"}, {"memory_gbs", "4"}}},
                                         {"async", true},
                                         {"sets", {{"cpu_millis", "2000"}, {"memory_gbs", "4"}}}}}));
  CHECK(by_address[service_address("legacy")]["action"] == "orphan");
  CHECK(contains(by_address[service_address("legacy")]["reason"].get<std::string>(), "no longer declared"));
  CHECK(by_address[service_address("search")]["before"].is_null());
  CHECK(by_address[service_address("search")]["after"]["cpu_millis"] == "1000");
  CHECK(by_address[service_address("billing")]["status"] == "CONFIGURING");
  CHECK(by_address[service_address("orders")]["declared_at"]["file"] == "dbform.yaml");
  CHECK(contains(r.err, "not saved"));  // notes go to stderr, stdout stays one document
}

TEST_CASE("e2e: plan --format markdown says at a glance what there is to do, conflicts and orphans first") {
  Sandbox sb;
  make_every_action(sb);
  RunResult r = sb.run({"plan", "--no-refresh", "--format", "markdown"});
  INFO(r.describe());
  CHECK(r.exit_code == 1);
  const std::string& md = r.out;
  CHECK(md.rfind("<!-- dbform-plan -->\n### dbform plan: 1 conflict, nothing can be applied\n", 0) == 0);
  CHECK(contains(md, "| 0 | 1 | 1 | 0 | 0 | 1 | 0 | 0 | 1 | 1 | 1 |"));
  CHECK(contains(md, "> [!CAUTION]"));
  CHECK(contains(md, "#### Conflicts\n\n- `" + service_address("analytics") + "`"));
  CHECK(contains(md, "region_code `us-east-1` → `eu-west-1`"));
  CHECK(contains(md, "| `~` | `orders` | service | update in place | id `"));
  CHECK(contains(md, "cpu_millis `1000` → `2000`; calls `resize {\"cpu_millis\":\"2000\",\"memory_gbs\":\"4\"}`"));
  CHECK(contains(md, "#### Orphans"));
  CHECK(contains(md, "- `" + service_address("legacy") + "`"));
  CHECK(contains(md, "#### Project `" + kProject + "`: 5 actions, 1 unchanged"));
  CHECK(contains(md, "| `+` | `search` | service | create |"));
  CHECK(contains(md, "<details><summary>Full plan</summary>"));
  CHECK(contains(md, "</details>"));
  CHECK(!contains(md, "leaves out"));

  sb.write("dbform.yaml", manifest({vpc_yaml("main")}, {service_yaml("orders"), service_yaml("billing"),
                                                         service_yaml("analytics"), service_yaml("legacy")}));
  RunResult wait_only = sb.run({"plan", "--no-refresh", "--format", "markdown"});
  CHECK(contains(wait_only.out, "### dbform plan: 1 to wait for\n"));
  REQUIRE(sb.apply().exit_code == 0);
  RunResult nothing = sb.run({"plan", "--format", "markdown"});
  CHECK(nothing.exit_code == 0);
  CHECK(contains(nothing.out, "### dbform plan: no changes\n"));
}

TEST_CASE("e2e: a plan of 800 creates renders to markdown under 60,000 characters and says what it left out") {
  Sandbox sb;
  std::vector<std::string> services;
  for (int i = 0; i < 800; ++i) services.push_back(service_yaml("tenant-database-" + std::to_string(i)));
  sb.write("dbform.yaml", manifest({vpc_yaml("main")}, services));
  RunResult r = sb.run({"plan", "--format", "markdown", "--out", "tfplan"});
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  CHECK(r.out.size() <= 60000);
  CHECK(r.out.size() > 50000);  // it fills the room it has rather than giving up early
  CHECK(contains(r.out, "### dbform plan: 801 to create\n"));
  CHECK(contains(r.out, "| 801 | 0 | 0 | 0 | 0 | 0 | 0 | 0 |"));
  CHECK(contains(r.out, "`tenant-database-0`"));
  CHECK(std::regex_search(r.out, std::regex(R"(\*\d+ more not shown\*)")));
  CHECK(contains(r.out, "This comment is limited to 60000 characters, so it leaves out: "));
  CHECK(contains(r.out, "rows of the table of project `" + kProject + "`"));
  CHECK(contains(r.out, "</sub>\n"));  // the footer survives the cut
  CHECK(json::parse(sb.read("tfplan"))["actions"].size() == 801);  // the saved plan is whole
}

TEST_CASE("e2e: apply --json prints one JSON object per event line and nothing else") {
  dbform::SimConfig config = default_sim_config();
  config.faults.deleted = {"doomed"};
  Sandbox sb(config);
  sb.write("dbform.yaml", base_manifest({"doomed"}));
  RunResult r = sb.apply({"--json"});
  INFO(r.describe());
  CHECK(r.exit_code == 1);
  auto lines = json_lines(r.out);
  REQUIRE(lines.size() > 5);
  CHECK(r.out.rfind("{\"type\":\"plan\",", 0) == 0);  // "type" leads every line, for people reading a log
  CHECK(!contains(r.out, "\n{\"time\""));
  CHECK(lines.front()["type"] == "plan");
  CHECK(lines.front()["summary"]["create"] == 5);
  CHECK(lines.front()["actions"].size() == 5);
  CHECK(lines.back()["type"] == "summary");
  CHECK(lines.back()["ready"] == 4);
  CHECK(lines.back()["failed"] == 1);
  CHECK(lines.back()["exit_code"] == 1);
  std::map<std::string, int> types;
  for (const auto& l : lines) {
    ++types[l["type"]];
    CHECK(l.contains("time"));
  }
  CHECK(types["preflight_passed"] == 1);
  CHECK(types["create_sent"] == 5);
  CHECK(types["created"] == 5);
  CHECK(types["status_changed"] >= 4);
  CHECK(types["ready"] == 4);
  CHECK(types["failed"] == 1);
  for (const auto& l : lines) {
    if (l["type"] == "failed") {
      CHECK(l["address"] == service_address("doomed"));
      CHECK(contains(l["error"].get<std::string>(), "DELETED"));
    }
    if (l["type"] == "ready" && l["address"] == service_address("orders"))
      CHECK(contains(l["endpoint"].get<std::string>(), ":"));
  }
  CHECK(contains(r.err, "1 resource(s) failed"));
}

TEST_CASE("e2e: apply --json reports errors as JSON too and never asks") {
  Sandbox sb;
  sb.write("dbform.yaml", base_manifest());
  RunResult unapproved = sb.run({"apply", "--json"});
  CHECK(unapproved.exit_code == 1);
  CHECK(contains(unapproved.err, "--json needs --auto-approve or a saved plan"));
  CHECK(unapproved.out.empty());

  RunResult rejected = sb.apply({"--json"}, {{"DBFORM_API_KEY", "wrong-key"}});
  INFO(rejected.describe());
  CHECK(rejected.exit_code == 1);
  // The refresh before the plan checks the keys first: no plan can be made, only the error is told.
  auto lines = json_lines(rejected.out);
  REQUIRE(lines.size() == 1);
  CHECK(lines[0]["type"] == "error");
  CHECK(contains(lines[0]["message"].get<std::string>(), "preflight failed"));
  CHECK(sb.count(kPostService) == 0);
}

TEST_CASE("e2e: no password or key in any plan format, apply output or output's text and json without --show-secrets") {
  Sandbox sb;
  make_every_action(sb);
  const auto secrets = passwords(sb.state());
  REQUIRE(secrets.size() == 4);
  std::vector<RunResult> runs;
  for (const std::string format : {"text", "json", "markdown"})
    runs.push_back(sb.run({"plan", "--format", format, "--out", "p-" + format}));
  sb.write("dbform.yaml", base_manifest({"search"}));
  runs.push_back(sb.run({"plan", "--out", "tfplan"}));
  runs.push_back(sb.run({"apply", "tfplan", "--json", "--poll-interval", "100ms"}));
  runs.push_back(sb.apply());
  for (const std::string format : {"text", "json"}) runs.push_back(sb.run({"output", "--format", format}));
  runs.push_back(sb.run({"output", "--json"}));
  runs.push_back(sb.run({"output", "orders"}));
  const auto all_secrets = passwords(sb.state());
  REQUIRE(all_secrets.size() == 5);
  for (const auto& r : runs) {
    INFO(r.describe());
    for (const auto& s : all_secrets) CHECK(!contains(r.all(), s));
    CHECK(!contains(r.all(), kKey));
  }
  for (const auto& file : {"tfplan", "p-text", "p-json", "p-markdown"}) {
    if (!sb.exists(file)) continue;  // plans with conflicts are not saved
    for (const auto& s : all_secrets) CHECK(!contains(sb.read(file), s));
  }
}

TEST_CASE("e2e: output --format env prints shell-safe export lines named after each address") {
  Sandbox sb;
  std::vector<std::string> pooled;  // each with its pooler on: its endpoint is in the output too
  for (const auto& s : kServices) pooled.push_back(service_yaml(s) + "        connection_pooler: true\n");
  sb.write("dbform.yaml", manifest({vpc_yaml("main")}, pooled));
  RunResult applied = sb.apply();
  REQUIRE(applied.exit_code == 0);
  CHECK(sb.count("POST /projects/{project_id}/services/{service_id}/enablePooler") == 3);
  json orders = find_resource(sb.state(), service_address("orders"));
  RunResult r = sb.run({"output", "--format", "env"});
  INFO(r.describe());
  CHECK(r.exit_code == 0);
  CHECK(contains(r.out, "export DBFORM_ACME_PROD_ORDERS_HOST='" + orders["endpoint"]["host"].get<std::string>() + "'\n"));
  CHECK(contains(r.out, "export DBFORM_ACME_PROD_ORDERS_PORT='" + std::to_string(orders["endpoint"]["port"].get<int>()) + "'\n"));
  CHECK(contains(r.out, "export DBFORM_ACME_PROD_ANALYTICS_POOLER_HOST='"));
  CHECK(contains(r.out, "export DBFORM_ACME_PROD_BILLING_POOLER_PORT='"));
  // env exists to connect: passwords and connection strings are in it.
  const std::string password = orders["initial_password"];
  CHECK(contains(r.out, "export DBFORM_ACME_PROD_ORDERS_PASSWORD='" + password + "'\n"));
  CHECK(contains(r.out, "export DBFORM_ACME_PROD_ORDERS_CONNECTION_STRING='postgres://tsdbadmin:" + password + "@" +
                            orders["endpoint"]["host"].get<std::string>() + ":" +
                            std::to_string(orders["endpoint"]["port"].get<int>()) + "/tsdb?sslmode=require'\n"));
  CHECK(contains(r.out, "export DBFORM_ACME_PROD_ORDERS_POOLER_CONNECTION_STRING='postgres://tsdbadmin:"));
  CHECK(!contains(r.out, "MAIN"));  // VPCs have no endpoints
  std::istringstream lines(r.out);
  int count = 0;
  for (std::string line; std::getline(lines, line); ++count)
    CHECK(std::regex_match(line, std::regex(R"(export DBFORM_ACME_PROD_[A-Z]+_[A-Z_]+='[a-zA-Z0-9.\-:/@?=]+')")));
  CHECK(count == 24);  // three services, eight values each

  RunResult one = sb.run({"output", "--format", "env", "orders"});
  CHECK(contains(one.out, "export DBFORM_ACME_PROD_ORDERS_PASSWORD='" + password + "'\n"));
  CHECK(!contains(one.out, "BILLING"));
  RunResult field = sb.run({"output", "--format", "env", "orders.password"});
  CHECK(field.out == "export DBFORM_ACME_PROD_ORDERS_PASSWORD='" + password + "'\n");
  RunResult both = sb.run({"output", "--json", "--format", "env"});
  CHECK(both.exit_code == 1);
  CHECK(contains(both.err, "--json means --format json"));
}

TEST_CASE("e2e: output --format env quotes any value so a shell reads it back unchanged") {
  Sandbox sb;
  apply_base(sb);
  json state = sb.state();
  const std::string nasty = "it's $(touch pwned) `x` \"q\" \\ $HOME";
  for (auto& r : state["resources"])
    if (r["name"] == "orders") r["endpoint"]["host"] = nasty;
  sb.write("dbform.state.json", state.dump());
  RunResult r = sb.run({"output", "--format", "env"});
  REQUIRE(r.exit_code == 0);
  sb.write("endpoints.env", r.out);
  sb.write("read-back.sh", ". ./endpoints.env && printf %s \"$DBFORM_ACME_PROD_ORDERS_HOST\"\n");
  FILE* shell = ::popen(("cd " + sb.dir().string() + " && /bin/sh read-back.sh").c_str(), "r");
  REQUIRE(shell);
  std::string read_back;
  char buf[256];
  while (size_t n = std::fread(buf, 1, sizeof buf, shell)) read_back.append(buf, n);
  CHECK(::pclose(shell) == 0);
  CHECK(read_back == nasty);
  CHECK(!sb.exists("pwned"));
}

TEST_CASE("e2e: output --format env refuses two services that would set the same variables") {
  Sandbox sb;
  sb.write("dbform.yaml", manifest({}, {service_yaml("orders"), service_yaml("orders-pooler")}));
  REQUIRE(sb.apply().exit_code == 0);
  RunResult r = sb.run({"output", "--format", "env"});
  CHECK(r.exit_code == 1);
  CHECK(contains(r.err, "DBFORM_ACME_PROD_ORDERS_POOLER_HOST"));
  CHECK(contains(r.err, service_address("orders-pooler")));
  CHECK(r.out.empty());
}

TEST_CASE("e2e: output ADDRESS.vpc_endpoint is the endpoint inside the VPC the service is attached to") {
  Sandbox sb;
  sb.write("dbform.yaml", manifest({vpc_yaml("main")}, {service_yaml("orders") + "        vpc: main\n", service_yaml("billing")}));
  REQUIRE(sb.apply().exit_code == 0);
  json shown;
  for (const auto& s : sb.sim().all_services())
    if (s["name"] == "orders") shown = s["vpc_endpoint"];
  REQUIRE(shown.is_object());
  RunResult r = sb.run({"output", service_address("orders") + ".vpc_endpoint"});
  INFO(r.describe());
  CHECK(r.out == shown["host"].get<std::string>() + ":" + std::to_string(shown["port"].get<int>()) + "\n");
  RunResult none = sb.run({"output", service_address("billing") + ".vpc_endpoint"});
  CHECK(none.exit_code == 1);
  CHECK(contains(none.err, "has no vpc_endpoint recorded"));
  CHECK(contains(sb.run({"output"}).out, "  in VPC   " + shown["host"].get<std::string>()));
}
