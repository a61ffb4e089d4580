// What must never happen, through the real binary: creating with a bad or foreign key, leaking
// secrets, applying unconfirmed, trusting an unreadable state, two applies at once.
#include <signal.h>

#include "common.h"

using namespace e2e;

TEST_CASE("e2e: a wrong API key: apply fails with the 401, never prints the key, creates nothing") {
  Sandbox sb;
  sb.write("dbform.yaml", base_manifest());
  const std::string wrong = "e2e-wrong-key-Zq8XvR41";
  RunResult r = sb.apply({}, {{"DBFORM_API_KEY", wrong}});
  INFO(r.describe() << "\ncounts: " << sb.counts().dump());
  CHECK(r.exit_code == 1);
  CHECK(contains(r.err, "401"));
  CHECK(!contains(r.all(), wrong));
  CHECK(sb.count(kAuthInfo) >= 1);
  CHECK(sb.count(kPostService) == 0);
  CHECK(sb.count(kPostVpc) == 0);
  // Nothing was created, so nothing is recorded.
  if (sb.exists("dbform.state.json")) CHECK(sb.state()["resources"].empty());
}

TEST_CASE("e2e: a key of another project: apply refuses before any create and names both projects") {
  auto config = default_sim_config();
  const std::string other_key = "e2e-key-of-other-project-77";
  config.keys.push_back({other_key, "acme-staging", "staging-key"});
  Sandbox sb(config);
  sb.write("dbform.yaml", base_manifest());
  RunResult r = sb.apply({}, {{"DBFORM_API_KEY", other_key}});
  INFO(r.describe() << "\ncounts: " << sb.counts().dump());
  CHECK(r.exit_code == 1);
  CHECK(contains(r.err, "acme-prod"));
  CHECK(contains(r.err, "acme-staging"));
  CHECK(contains(r.err, "DBFORM_API_KEY"));  // which variable to fix
  CHECK(!contains(r.all(), other_key));
  CHECK(sb.count(kAuthInfo) == 1);
  CHECK(sb.count(kPostService) == 0);
  CHECK(sb.count(kPostVpc) == 0);
  if (sb.exists("dbform.state.json")) CHECK(sb.state()["resources"].empty());
}

TEST_CASE("e2e: the project's own key variable (DBFORM_API_KEY_<ID>) wins over DBFORM_API_KEY") {
  Sandbox sb;
  sb.write("dbform.yaml", base_manifest());
  RunResult r = sb.apply({}, {{"DBFORM_API_KEY", "e2e-wrong-fallback"}, {"DBFORM_API_KEY_ACME_PROD", kKey}});
  INFO(r.describe());
  CHECK(r.exit_code == 0);
  CHECK(sb.count(kPostService) == 3);
}

TEST_CASE("e2e: passwords appear in no output unless asked for by field or --show-secrets") {
  Sandbox sb;
  RunResult first = apply_base(sb);
  std::vector<std::string> passwords;
  for (const auto& name : kServices) {
    json r = find_resource(sb.state(), service_address(name));
    passwords.push_back(r["initial_password"].get<std::string>());
    REQUIRE(passwords.back().size() >= 8);
  }
  auto check_no_password = [&](const RunResult& r, const std::string& what) {
    INFO(what << "\n" << r.describe());
    for (const auto& p : passwords) CHECK(!contains(r.all(), p));
  };
  check_no_password(first, "apply");

  // A new service, applied with the most verbose logging: its password is in the create's answer.
  sb.write("dbform.yaml", base_manifest({"search"}));
  RunResult verbose = sb.apply({}, {{"DBFORM_LOG", "trace"}});
  REQUIRE(verbose.exit_code == 0);
  passwords.push_back(find_resource(sb.state(), service_address("search"))["initial_password"].get<std::string>());
  REQUIRE(!passwords.back().empty());
  check_no_password(verbose, "apply with DBFORM_LOG=trace");

  sb.write("dbform.yaml", base_manifest({"search", "reports"}));
  RunResult flag = sb.run({"--log-level", "trace", "apply", "--auto-approve", "--poll-interval", "100ms"});
  REQUIRE(flag.exit_code == 0);
  passwords.push_back(find_resource(sb.state(), service_address("reports"))["initial_password"].get<std::string>());
  REQUIRE(!passwords.back().empty());
  check_no_password(flag, "--log-level trace apply");

  // Something left to plan, so that plan renders resources.
  sb.write("dbform.yaml", base_manifest({"search", "reports", "later"}));
  check_no_password(sb.run({"plan"}), "plan");
  check_no_password(sb.run({"--log-level", "trace", "plan"}), "--log-level trace plan");
  check_no_password(sb.run({"output"}), "output");
  check_no_password(sb.run({"output", "--json"}), "output --json");
  check_no_password(sb.run({"output", "orders"}), "output orders");
  check_no_password(sb.run({"output", "--json", "orders"}), "output --json orders");
  check_no_password(sb.run({"state", "list"}), "state list");
  for (const auto& name : kServices) {
    RunResult show = sb.run({"state", "show", service_address(name)});
    CHECK(show.exit_code == 0);
    check_no_password(show, "state show " + name);
  }

  for (size_t i = 0; i < kServices.size(); ++i) {
    RunResult r = sb.run({"output", kServices[i] + ".password"});
    INFO(r.describe());
    CHECK(r.exit_code == 0);
    CHECK(r.out == passwords[i] + "\n");
  }
  RunResult secrets = sb.run({"output", "--json", "--show-secrets"});
  INFO(secrets.describe());
  CHECK(secrets.exit_code == 0);
  for (const auto& p : passwords) CHECK(contains(secrets.out, p));
  json doc = json::parse(secrets.out);
  CHECK(doc[service_address("orders")]["password"] == passwords[0]);
}

TEST_CASE("e2e: apply without --auto-approve and without a terminal refuses and sends nothing") {
  Sandbox sb;
  sb.write("dbform.yaml", base_manifest());
  // Neither an empty stdin nor a piped "yes" is a terminal a person answered on.
  for (const std::string stdin_text : {"", "yes\n"}) {
    RunResult r = sb.run({"apply", "--poll-interval", "100ms"}, {}, stdin_text);
    INFO("stdin: '" << stdin_text << "'\n" << r.describe());
    CHECK(r.exit_code == 1);
    CHECK(contains(r.err, "--auto-approve"));
    CHECK(sb.total_requests() == 0);
    CHECK(!sb.exists("dbform.state.json"));
  }
}

TEST_CASE("e2e: an unreadable state is refused by plan and apply, left untouched, and nothing is sent") {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"garbage", "this is {not JSON at all\n"},
      {"newer version",
       R"({"format":"dbform-state","version":99,"lineage":"5b4f7c1e-0000-4000-8000-000000000002","serial":7,"resources":[]})"
       "\n"},
      {"another format", R"({"format":"terraform","version":4,"resources":[]})"
                         "\n"},
  };
  for (const auto& [what, text] : cases) {
    Sandbox sb;
    sb.write("dbform.yaml", base_manifest());
    sb.write("dbform.state.json", text);
    const std::vector<std::vector<std::string>> commands = {
        {"plan"}, {"plan", "--detailed-exitcode"}, {"apply", "--auto-approve"}, {"output"}, {"state", "list"}};
    for (const auto& args : commands) {
      RunResult r = sb.run(args);
      INFO("state: " << what << "\ncommand: " << args[0] << "\n" << r.describe());
      CHECK(r.exit_code == 1);
      CHECK(contains(r.err, "dbform.state.json"));
      if (what == "newer version") CHECK(contains(r.err, "99"));
      CHECK(sb.read("dbform.state.json") == text);
      CHECK(!sb.exists("dbform.state.json.backup"));
    }
    INFO("counts: " << sb.counts().dump());
    CHECK(sb.total_requests() == 0);
  }
}

TEST_CASE("e2e: a second apply while the first holds the lock fails at once naming the holder") {
  auto config = default_sim_config();
  config.faults.stuck = {"orders"};
  Sandbox sb(config);
  sb.write("dbform.yaml", manifest({}, {service_yaml("orders")}));

  auto first = sb.start({"apply", "--auto-approve", "--poll-interval", "100ms", "--wait-timeout", "10m"});
  // The first run holds the lock from before its first write until it ends; its create is on disk.
  bool recorded = wait_for_record(sb, service_address("orders"), /*with_id=*/true);
  INFO("first run so far:\n" << first->stdout_so_far() << first->stderr_so_far());
  REQUIRE(recorded);

  RunResult second = sb.apply();
  INFO(second.describe());
  CHECK(second.exit_code == 1);
  CHECK(second.elapsed < std::chrono::seconds(10));
  CHECK(contains(second.err, "locked"));
  CHECK(contains(second.err, "pid " + std::to_string(first->pid())));
  CHECK(contains(second.err, "apply"));
  CHECK(sb.count(kPostService) == 1);

  // Every other writer of the state is refused too.
  RunResult rm = sb.run({"state", "rm", "orders"});
  INFO(rm.describe());
  CHECK(rm.exit_code == 1);
  CHECK(contains(rm.err, "pid " + std::to_string(first->pid())));
  CHECK(find_resource(sb.state(), service_address("orders")).is_object());

  // --lock-timeout waits for the holder, then gives up with the same message.
  RunResult patient = sb.apply({"--lock-timeout", "1s"});
  INFO(patient.describe());
  CHECK(patient.exit_code == 1);
  CHECK(patient.elapsed >= std::chrono::milliseconds(900));
  CHECK(contains(patient.err, "pid " + std::to_string(first->pid())));
  // And says so while it waits: a pipeline waiting for another must not look hung.
  CHECK(contains(patient.err, "Waiting up to 1s for the state's lock, held by pid " + std::to_string(first->pid())));
  // Given up, it says the wait ran out, not to pass the --lock-timeout it was given.
  CHECK(contains(patient.err, "It still held it after --lock-timeout 1s: wait for it to finish, or pass a longer --lock-timeout"));
  CHECK_FALSE(contains(patient.err, "or pass --lock-timeout to wait for it"));

  // The first run stops cleanly on SIGTERM, keeping what it created.
  first->signal(SIGTERM);
  RunResult stopped = first->wait();
  INFO(stopped.describe());
  CHECK(!stopped.timed_out);
  CHECK(stopped.exit_code == 130);
  json rec = find_resource(sb.state(), service_address("orders"));
  CHECK(rec["create_pending"] == false);
  CHECK(!rec["id"].get<std::string>().empty());

  // The lock went with it: the next run can take it (and still creates nothing new).
  RunResult third = sb.apply({"--wait-timeout", "500ms"});
  INFO(third.describe());
  CHECK(!contains(third.err, "locked"));
  CHECK(sb.count(kPostService) == 1);
}
