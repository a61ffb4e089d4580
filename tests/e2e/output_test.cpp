// Reading the state back (output, state list/rm), the demo, and `dbform sim` as a real process.
#include <signal.h>

#include <algorithm>

#include <httplib.h>

#include "common.h"

using namespace e2e;

TEST_CASE("e2e: output ADDRESS.FIELD prints raw endpoint values that match the state") {
  Sandbox sb;
  apply_base(sb);
  json orders = find_resource(sb.state(), service_address("orders"));
  const std::string host = orders["endpoint"]["host"];
  const std::string port = std::to_string(orders["endpoint"]["port"].get<int>());

  const std::vector<std::pair<std::string, std::string>> expected = {
      {"orders.endpoint", host + ":" + port},
      {"orders.host", host},
      {"orders.port", port},
      {"orders.id", orders["id"].get<std::string>()},
      {"orders.status", "READY"},
      {service_address("orders") + ".host", host},
      {"services/orders.port", port},
  };
  for (const auto& [arg, value] : expected) {
    RunResult r = sb.run({"output", arg});
    INFO("output " << arg << "\n" << r.describe());
    CHECK(r.exit_code == 0);
    CHECK(r.out == value + "\n");
    CHECK(r.err.empty());
  }
}

TEST_CASE("e2e: a mistyped address is an error that suggests the closest recorded one") {
  Sandbox sb;
  apply_base(sb);
  for (const std::string typo : {"ordres.host", "ordres", "services/ordres", "acme-prod/services/ordres"}) {
    RunResult r = sb.run({"output", typo});
    INFO("output " << typo << "\n" << r.describe());
    CHECK(r.exit_code == 1);
    CHECK(r.out.empty());
    CHECK(contains(r.err, "ordres"));
    CHECK(contains(r.err, "Did you mean"));
    CHECK(contains(r.err, "orders"));
  }
}

// Two projects applied one after the other, and a service added to the first later: the records are
// written in that order, but listings show them sorted by address, a project's resources together.
TEST_CASE("e2e: state list and output list two projects' resources sorted by address") {
  dbform::SimConfig config = default_sim_config();
  config.keys.push_back({"e2e-key-acme-0123456789", "acme", "acme-key"});
  Sandbox sb(config);
  sb.env["DBFORM_API_KEY_ACME"] = "e2e-key-acme-0123456789";
  const std::string second = "version: 1\nprojects:\n  - id: acme\n    services:\n      - name: analytics\n";
  sb.write("prod.yaml", manifest({}, {service_yaml("orders-2")}));
  REQUIRE(sb.apply({"-f", "prod.yaml"}).exit_code == 0);
  sb.write("acme.yaml", second);
  REQUIRE(sb.apply({"-f", "prod.yaml", "-f", "acme.yaml"}).exit_code == 0);
  sb.write("prod.yaml", manifest({vpc_yaml("main")}, {service_yaml("orders-2"), service_yaml("orders")}));
  REQUIRE(sb.apply({"-f", "prod.yaml", "-f", "acme.yaml"}).exit_code == 0);
  std::vector<std::string> recorded;
  const json state = sb.state();
  for (const auto& r : state["resources"]) recorded.push_back(r["address"]);
  REQUIRE(recorded == std::vector<std::string>{service_address("orders-2"), "acme/services/analytics",
                                               vpc_address("main"), service_address("orders")});
  const std::vector<std::string> sorted = {"acme/services/analytics", service_address("orders"),
                                           service_address("orders-2"), vpc_address("main")};

  RunResult list = sb.run({"state", "list"});
  INFO(list.describe());
  CHECK(list.out == sorted[0] + "\n" + sorted[1] + "\n" + sorted[2] + "\n" + sorted[3] + "\n");
  // Where each address first appears in a listing.
  auto order_in = [&](const std::string& text, const std::vector<std::string>& needles) {
    std::vector<size_t> at;
    for (const auto& n : needles) at.push_back(text.find(n));
    return at;
  };
  RunResult text = sb.run({"output"});
  INFO(text.describe());
  std::vector<std::string> lines;
  for (const auto& a : sorted) lines.push_back(a + "\n");
  const auto text_at = order_in(text.out, lines);
  CHECK(std::is_sorted(text_at.begin(), text_at.end()));
  CHECK(text_at.back() != std::string::npos);
  RunResult doc = sb.run({"output", "--format", "json"});
  const auto json_at = order_in(doc.out, {"\"" + sorted[0] + "\"", "\"" + sorted[1] + "\"", "\"" + sorted[2] + "\"",
                                          "\"" + sorted[3] + "\""});
  CHECK(std::is_sorted(json_at.begin(), json_at.end()));
  CHECK(json_at.back() != std::string::npos);
  RunResult env = sb.run({"output", "--format", "env"});
  const auto env_at = order_in(env.out, {"DBFORM_ACME_ANALYTICS_ID=", "DBFORM_ACME_PROD_ORDERS_ID=",
                                         "DBFORM_ACME_PROD_ORDERS_2_ID="});
  CHECK(std::is_sorted(env_at.begin(), env_at.end()));
  CHECK(env_at.back() != std::string::npos);
}

TEST_CASE("e2e: state list shows every resource and state rm forgets one and the next plan creates it") {
  Sandbox sb;
  apply_base(sb);
  const long long posts = sb.count(kPostService);

  RunResult list = sb.run({"state", "list"});
  INFO(list.describe());
  CHECK(list.exit_code == 0);
  for (const auto& name : kServices) CHECK(contains(list.out, service_address(name) + "\n"));
  CHECK(contains(list.out, vpc_address("main") + "\n"));
  CHECK(std::count(list.out.begin(), list.out.end(), '\n') == 4);

  RunResult rm = sb.run({"state", "rm", "orders"});
  INFO(rm.describe());
  CHECK(rm.exit_code == 0);
  CHECK(contains(rm.out, service_address("orders")));
  CHECK(find_resource(sb.state(), service_address("orders")).is_null());
  CHECK(find_resource(sb.state(), service_address("billing")).is_object());

  RunResult after = sb.run({"state", "list"});
  CHECK(!contains(after.out, service_address("orders")));

  // From the state alone it would be created again; the refresh finds it under its name.
  RunResult plan = sb.run({"plan", "--no-refresh", "--detailed-exitcode"});
  INFO(plan.describe());
  CHECK(plan.exit_code == 2);
  CHECK(contains(plan.out, service_address("orders") + " will be created"));
  CHECK(contains(plan.out, "1 to create"));
  RunResult refreshed = sb.run({"plan"});
  INFO(refreshed.describe());
  CHECK(refreshed.exit_code == 1);
  CHECK(contains(refreshed.out, "a service of this name already exists"));

  RunResult unknown = sb.run({"state", "rm", "nosuch"});
  CHECK(unknown.exit_code == 1);
  CHECK(sb.count(kPostService) == posts);  // nothing was created
}

TEST_CASE("e2e: dbform demo runs the whole workflow and ends with no changes") {
  Sandbox sb;  // only for the temporary working directory and the clean environment
  RunResult r = sb.run({"demo"}, {}, "", std::chrono::seconds(60));
  INFO(r.describe());
  CHECK(r.exit_code == 0);
  CHECK(!r.timed_out);
  CHECK(r.elapsed < std::chrono::seconds(30));
  CHECK(contains(r.out, "No changes"));
  CHECK(sb.total_requests() == 0);  // it used its own embedded simulator
}

TEST_CASE("e2e: dbform sim as a real process serves an apply, counts requests and stops on SIGTERM") {
  Sandbox sb;
  const std::string key = "e2e-real-sim-key-5531";
  auto sim = sb.start({"sim", "--listen", "127.0.0.1:0", "--port-file", "sim.port", "--key", key + "=" + kProject,
                       "--queued-delay", "50ms", "--configuring-delay", "100ms"},
                      {}, std::chrono::seconds(120));
  int port = 0;
  bool up = eventually(
      [&] {
        try {
          std::string text = sb.read("sim.port");
          port = std::stoi(text);
          if (port <= 0) return false;
          // The file may be written before the socket listens, or be read half-written.
          httplib::Client probe("127.0.0.1", port);
          auto res = probe.Get("/_sim/requests");
          return res && res->status == 200;
        } catch (const std::exception&) {
          return false;
        }
      },
      std::chrono::seconds(30));
  INFO("sim so far:\n" << sim->stdout_so_far() << sim->stderr_so_far());
  REQUIRE(up);

  const std::string url = "http://127.0.0.1:" + std::to_string(port) + "/public/api/v1";
  sb.write("dbform.yaml", base_manifest());
  RunResult r = sb.apply({"--wait-timeout", "2m"}, {{"DBFORM_API_URL", url}, {"DBFORM_API_KEY", key}});
  INFO(r.describe());
  CHECK(r.exit_code == 0);
  for (const auto& name : kServices)
    CHECK(find_resource(sb.state(), service_address(name))["status"] == "READY");
  CHECK(sb.total_requests() == 0);  // all of it went to the external simulator

  httplib::Client client("127.0.0.1", port);
  auto res = client.Get("/_sim/requests");
  REQUIRE(res);
  CHECK(res->status == 200);
  json counts = json::parse(res->body);
  INFO("counts: " << counts.dump());
  CHECK(counts.value(kPostService, 0) == 3);
  CHECK(counts.value(kPostVpc, 0) == 1);
  CHECK(counts.value(kAuthInfo, 0) == 1);

  auto services = client.Get("/_sim/services");
  REQUIRE(services);
  CHECK(json::parse(services->body).size() == 3);

  sim->signal(SIGTERM);
  RunResult stopped = sim->wait();
  INFO(stopped.describe());
  CHECK(!stopped.timed_out);
  CHECK(stopped.exit_code == 0);
  CHECK(!contains(stopped.all(), key));
}
