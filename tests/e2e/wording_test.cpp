// Every word true: what plans, applies, outputs, signals, completions and errors say matches what
// happened, through the real binary against the simulator.
#include <signal.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "service_helpers.h"

using namespace e2e;

namespace {



std::string source_file(const std::string& relative) {
  std::ifstream in(std::string(DBFORM_SOURCE_DIR) + "/" + relative);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

}  // namespace

// Item 2: status words as they are.
TEST_CASE("e2e: a stop is planned and reported as waiting for PAUSED, a pending peering as recorded, and deletes of what holds no data say so") {
  Sandbox sb;
  const std::string vpc = vpc_yaml("main") +
                          "        peerings:\n          - peer_account_id: \"123456789012\"\n"
                          "            peer_region_code: us-east-1\n            peer_vpc_id: vpc-0abc\n";
  sb.write("dbform.yaml", manifest({vpc}, {orders_yaml(kPaused + reporting())}));
  RunResult plan = sb.run({"plan"});
  INFO(plan.describe());
  CHECK(contains(plan.out, "stop, then wait for PAUSED"));
  CHECK(!contains(plan.out, "stop, then wait for READY"));

  RunResult applied = apply_ok(sb, manifest({vpc}, {orders_yaml(kPaused + reporting())}));
  INFO(applied.describe());
  CHECK(contains(applied.out, service_address("orders") + ": paused ["));
  CHECK(!contains(applied.out, service_address("orders") + ": ready"));
  const std::string peering = vpc_address("main") + "/peerings/vpc-0abc";
  CHECK(contains(applied.out, peering + ": recorded with status pending"));
  CHECK(!contains(applied.out, peering + ": ready"));
  CHECK(contains(applied.out, "3 ready, 1 paused, 0 failed"));

  sb.write("dbform.yaml", manifest({vpc_yaml("main")}, {orders_yaml(kPaused)}));
  RunResult prune = sb.run({"plan", "--prune"});
  INFO(prune.describe());
  CHECK(contains(prune.out, peering + " (id "));
  CHECK(contains(prune.out, "will be DELETED (it holds no data of its own)"));
  CHECK(!contains(prune.out, "DELETED, with its data"));
}

// Item 8: the simulator's console takes a pause and a resume, and its docs list what it serves.
TEST_CASE("e2e: the simulator's console stops and starts a service on a POST without a body") {
  Sandbox sb;
  apply_ok(sb, manifest({}, {orders_yaml()}));
  const std::string id = find_resource(sb.state(), service_address("orders"))["id"];
  const std::string url = "http://127.0.0.1:" + std::to_string(sb.port()) + "/_sim/services/" + id;
  // `curl -X POST` sends no Content-Length: the way a person pauses a service outside dbform.
  RunResult stop = sb.run_shell("curl -s -w ' %{http_code}' -X POST " + url + "/stop");
  INFO(stop.describe());
  CHECK(contains(stop.out, "\"status\":\"PAUSED\""));
  CHECK(contains(stop.out, " 200"));
  CHECK(sim_service(sb, "orders")["status"] == "PAUSED");
  RunResult plan = sb.run({"plan", "--detailed-exitcode"});
  INFO(plan.describe());
  CHECK(plan.exit_code == 0);  // `paused` is not managed: the pause made in the console stays
  RunResult start = sb.run_shell("curl -s -w ' %{http_code}' -X POST " + url + "/start");
  INFO(start.describe());
  CHECK(contains(start.out, " 200"));
  CHECK(sim_service(sb, "orders")["status"] == "READY");
  RunResult rename = sb.run_shell("curl -s -w ' %{http_code}' -X POST -d '{\"name\":\"orders-2\"}' " + url + "/rename");
  CHECK(contains(rename.out, " 200"));
  CHECK(sim_service(sb, "orders-2").is_object());
}

TEST_CASE("docs: docs/simulator.md lists every call the simulator serves, and its console's stop, start and rename") {
  const std::string doc = source_file("docs/simulator.md");
  REQUIRE(!doc.empty());
  for (const auto& call : dbform::Simulator::served_calls()) {
    INFO(call);
    CHECK(contains(doc, "`" + call + "`"));
  }
  for (const char* action : {"`rename`", "`stop`", "`start`"}) CHECK(contains(doc, action));
}

// Item 5: output does what its format and its fields say.
TEST_CASE("e2e: output ADDRESS --format text prints text, no state is a warning naming the path, and fields without a value say why") {
  Sandbox sb;
  RunResult none = sb.run({"output"});
  INFO(none.describe());
  CHECK(none.exit_code == 0);
  CHECK(none.out.empty());
  CHECK(contains(none.err, "No state at"));
  CHECK(contains(none.err, "dbform.state.json"));
  CHECK(contains(none.err, "--state"));
  RunResult missing = sb.run({"output", "orders.host"});
  INFO(missing.describe());
  CHECK(missing.exit_code == 1);
  CHECK(contains(missing.err, "No state at"));

  apply_ok(sb, manifest({}, {orders_yaml()}));
  RunResult text = sb.run({"output", "orders", "--format", "text"});
  INFO(text.describe());
  CHECK(text.exit_code == 0);
  CHECK(contains(text.out, service_address("orders") + "\n  id       "));
  CHECK(contains(text.out, "  password (sensitive)"));
  CHECK(!contains(text.out, "{"));
  RunResult as_json = sb.run({"output", "orders", "--format", "json"});
  CHECK(json::parse(as_json.out)["kind"] == "service");

  RunResult pooler = sb.run({"output", "orders.pooler_connection_string"});
  INFO(pooler.describe());
  CHECK(pooler.exit_code == 1);
  CHECK(contains(pooler.err, "connection_pooler: true"));
  CHECK(!contains(pooler.err, "recorded yet"));
}

TEST_CASE("e2e: output .connection_string of a service with no known password exits 1 naming rotate-password, as .password does") {
  Sandbox sb;
  const std::string id = console_service(sb, {{"name", "orders"}, {"cpu_millis", "1000"}, {"memory_gbs", "4"},
                                              {"region_code", "us-east-1"}});
  sb.write("dbform.yaml", manifest({}, {orders_yaml()}));
  RunResult imported = sb.run({"import", service_address("orders"), id});
  INFO(imported.describe());
  REQUIRE(imported.exit_code == 0);
  for (const char* field : {"orders.password", "orders.connection_string"}) {
    RunResult r = sb.run({"output", field});
    INFO(field << "\n" << r.describe());
    CHECK(r.exit_code == 1);
    CHECK(r.out.empty());
    CHECK(contains(r.err, "no known password"));
    CHECK(contains(r.err, "dbform rotate-password " + service_address("orders")));
  }
}

// Item 3: Ctrl-C is answered at once.
TEST_CASE("e2e: at a terminal, the first Ctrl-C says at once that what was sent is finished and saved, and the live lines stop") {
  auto config = default_sim_config();
  config.faults.create_answer_delay = std::chrono::seconds(4);  // a create in flight for a while
  Sandbox sb(config);
  sb.write("dbform.yaml", manifest({}, {orders_yaml()}));
  Process run({"apply", "--auto-approve", "--poll-interval", "100ms"}, sb.env, sb.dir(), "", std::chrono::seconds(60),
              /*tty=*/true);
  REQUIRE(eventually([&] { return sb.count("POST /projects/{project_id}/services") == 1; }, std::chrono::seconds(30)));
  // A live line drawn (while the create's answer is held back), so that its end below means something.
  REQUIRE(eventually([&] { return contains(run.stdout_so_far(), "  ~ " + service_address("orders")); },
                     std::chrono::seconds(3)));
  run.signal(SIGINT);
  const auto sent = std::chrono::steady_clock::now();
  CHECK(eventually([&] { return contains(run.stdout_so_far(), "Interrupt received"); }, std::chrono::milliseconds(1500)));
  CHECK(std::chrono::steady_clock::now() - sent < std::chrono::seconds(2));
  RunResult r = run.wait();
  INFO(r.describe());
  CHECK(r.exit_code == 130);
  CHECK(contains(r.out, "Interrupt received: finishing what was sent and saving the state; press Ctrl-C again to stop at once"));
  const std::string after = r.out.substr(r.out.find("Interrupt received"));
  CHECK(!contains(after, "  ~ " + service_address("orders")));  // no live line any more
  CHECK(contains(after, service_address("orders") + ": created"));  // the answer in flight is recorded
  CHECK(!find_resource(sb.state(), service_address("orders"))["id"].get<std::string>().empty());
}

TEST_CASE("e2e: apply --json says stop_requested at the first signal") {
  auto config = default_sim_config();
  config.faults.create_answer_delay = std::chrono::seconds(3);
  Sandbox sb(config);
  sb.write("dbform.yaml", manifest({}, {orders_yaml()}));
  auto run = sb.start({"apply", "--auto-approve", "--json", "--poll-interval", "100ms"});
  REQUIRE(eventually([&] { return sb.count("POST /projects/{project_id}/services") == 1; }, std::chrono::seconds(30)));
  run->signal(SIGTERM);
  CHECK(eventually([&] { return contains(run->stdout_so_far(), "\"type\":\"stop_requested\""); },
                   std::chrono::milliseconds(1500)));
  RunResult r = run->wait();
  INFO(r.describe());
  CHECK(r.exit_code == 130);
}

// Item 4: a suggested command can be pasted.
TEST_CASE("e2e: the stale-plan message suggests the plan command with the saved plan's manifests and flags, and pasted it works") {
  Sandbox sb;
  std::filesystem::create_directories(sb.dir() / "manifests");
  sb.write("manifests/db.yaml", manifest({}, {orders_yaml()}));
  RunResult saved = sb.run({"plan", "-f", "manifests/", "--prune", "--out", "release.plan"});
  INFO(saved.describe());
  REQUIRE(saved.exit_code == 0);
  sb.write("manifests/db.yaml", manifest({}, {orders_yaml(), service_yaml("billing")}));
  RunResult stale = sb.run({"apply", "release.plan"});
  INFO(stale.describe());
  CHECK(stale.exit_code == 1);
  const std::string suggested = "`dbform plan -f manifests/ --prune --out release.plan`";
  REQUIRE(contains(stale.err, suggested));
  RunResult pasted = sb.run_shell("\"$DBFORM\"" + suggested.substr(7, suggested.size() - 8));
  INFO(pasted.describe());
  CHECK(pasted.exit_code == 0);
  CHECK(contains(pasted.out, "2 to create"));
}

// Item 9: the small ones.
TEST_CASE("e2e: bash completion of --target offers addresses, declared and recorded, not file names") {
  Sandbox sb;
  apply_ok(sb, manifest({}, {orders_yaml()}));
  sb.write("dbform.yaml", manifest({}, {orders_yaml(), service_yaml("billing")}));
  sb.write("dbform.bash", sb.run({"completion", "bash"}).out);
  sb.write("complete.sh",
           "PATH=\"$(dirname \"$DBFORM\"):$PATH\"; source ./dbform.bash\n"
           "t() { COMP_WORDS=(\"$@\"); COMP_CWORD=$((${#COMP_WORDS[@]} - 1)); COMPREPLY=(); _dbform; echo \"${COMPREPLY[*]}\"; }\n"
           "t dbform plan --target ''; t dbform apply --target bil\n");
  RunResult r = sb.run_shell("bash ./complete.sh");
  INFO(r.describe());
  REQUIRE(r.exit_code == 0);
  std::istringstream lines(r.out);
  std::string plan_line, apply_line;
  std::getline(lines, plan_line);
  std::getline(lines, apply_line);
  CHECK(contains(plan_line, service_address("orders")));
  CHECK(contains(plan_line, service_address("billing")));  // declared, not recorded yet
  CHECK(!contains(plan_line, "dbform.yaml"));
  CHECK(!contains(plan_line, "complete.sh"));
  CHECK(apply_line == "billing");
}

TEST_CASE("e2e: a 401 names DBFORM_AUTH_SCHEME, and an import that found only a VPC says nothing of passwords") {
  Sandbox sb;
  RunResult bad = sb.run({"whoami"}, {{"DBFORM_API_KEY", "not-the-key"}});
  INFO(bad.describe());
  CHECK(bad.exit_code == 1);
  CHECK(contains(bad.err, "401"));
  CHECK(contains(bad.err, "DBFORM_AUTH_SCHEME=basic"));
  CHECK(!contains(bad.err, "not-the-key"));

  REQUIRE(sb.sim().console_create(kProject, "vpcs", json{{"name", "main"}, {"cidr", "10.0.0.0/16"},
                                                         {"region_code", "us-east-1"}}.dump()).status == 201);
  RunResult imported = sb.run({"import", "--project", kProject, "--generate", "imported.yaml"});
  INFO(imported.describe());
  CHECK(imported.exit_code == 0);
  CHECK(contains(imported.out, vpc_address("main")));
  CHECK(!contains(imported.out, "password"));
}

// Item 6: what a plan says once is not repeated every plan.
TEST_CASE("e2e: a fork brought back by import is not reported create-time only every plan, and a pending peering is counted, not repeated") {
  Sandbox sb;
  const std::string vpc = vpc_yaml("main") +
                          "        peerings:\n          - peer_account_id: \"123456789012\"\n"
                          "            peer_region_code: us-east-1\n            peer_vpc_id: vpc-0abc\n";
  const std::string yaml = manifest({vpc}, {orders_yaml(), qa_fork()});
  apply_ok(sb, yaml);
  const std::string id = find_resource(sb.state(), service_address("orders-qa"))["id"];
  REQUIRE(sb.run({"state", "rm", "orders-qa"}).exit_code == 0);
  RunResult imported = sb.run({"import", service_address("orders-qa"), id});
  INFO(imported.describe());
  REQUIRE(imported.exit_code == 0);
  for (int i = 0; i < 2; ++i) {
    RunResult plan = sb.run({"plan", "--detailed-exitcode"});
    INFO(plan.describe());
    CHECK(plan.exit_code == 0);
    CHECK(!contains(plan.out, "create-time only"));
    CHECK(!contains(plan.out, "is unchanged: peering pending"));
    CHECK(contains(plan.out, "1 VPC peering awaits its peer account's acceptance"));
  }
  // A failed peering still says why, every plan.
  const json peerings = sb.sim().all_peerings();
  REQUIRE(peerings.size() == 1);
  REQUIRE(sb.sim().console_nested("peerings", peerings[0]["id"], "fail", R"({"error_message":"peer account refused"})")
              .status == 200);
  RunResult failed = sb.run({"plan", "--refresh"});
  CHECK(contains(failed.out, "peer account refused"));
}

// Item 7: every error of a run at once, each naming its field path.
TEST_CASE("e2e: validate reports reference errors together with structural ones, each with its field path") {
  Sandbox sb;
  sb.write("dbform.yaml", "version: 1\nprojects:\n  - id: \"acme prod!\"\n    vpcs:\n      - name: main\n"
                          "        cidr: 10.0.0.0/16\n        region_code: us-east-1\n    services:\n"
                          "      - name: orders\n        regoin_code: us-east-1\n"
                          "      - name: billing\n        vpc: mian\n"
                          "      - name: qa\n        fork:\n          from: nonexistent\n          strategy: LAST_SNAPSHOT\n");
  RunResult r = sb.run({"validate"});
  INFO(r.describe());
  CHECK(r.exit_code == 1);
  CHECK(contains(r.err, "projects[0].id:"));
  CHECK(contains(r.err, "projects[0].services[0].regoin_code:"));
  CHECK(contains(r.err, "dbform.yaml:12:14: error: projects[0].services[1].vpc: service `billing` names vpc `mian`"));
  CHECK(contains(r.err, "did you mean `main`?"));
  CHECK(contains(r.err, "projects[0].services[2].fork.from: service `qa` is a fork of `nonexistent`"));
  CHECK(contains(r.err, "4 error(s)"));
}

// Docs drift: state mv says what the manifests must declare for the rename it promises.
TEST_CASE("e2e: state mv says the manifests must declare NEW, and a plan that still declares OLD is a conflict as it says") {
  Sandbox sb;
  apply_ok(sb, manifest({}, {service_yaml("orders-db")}));
  RunResult mv = sb.run({"state", "mv", "orders-db", "orders"});
  INFO(mv.describe());
  REQUIRE(mv.exit_code == 0);
  CHECK(contains(mv.out, "once the manifests declare `orders`"));
  CHECK(contains(mv.out, "still declare `orders-db`, a plan shows a conflict"));
  RunResult old_plan = sb.run({"plan"});
  INFO(old_plan.describe());
  CHECK(old_plan.exit_code == 1);
  sb.write("dbform.yaml", manifest({}, {service_yaml("orders")}));
  RunResult new_plan = sb.run({"plan"});
  INFO(new_plan.describe());
  CHECK(new_plan.exit_code == 0);
  CHECK(contains(new_plan.out, "rename {\"name\":\"orders\"}"));
}
