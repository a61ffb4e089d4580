// A workspace written before the secrets table holds its passwords in its document; the next apply
// moves them to dbform_secrets. That apply is killed (SIGKILL, delivered by strace) before each
// statement it sends to the database, each time on the workspace as it was: between two statements
// the database does not change, so this kills it at every point that can leave a different
// workspace behind. Afterwards the state reads, the applier's role prints every password, and the
// next apply ends with every password in the secrets table, none in the document or the journal,
// and the service it creates created once.
#include "../pg/test_server.h"
#include "pg_roles.h"

#include <sstream>

using namespace e2e;

namespace {

// The old form in the workspace "default", and nothing else: no journal, no secrets, no lock row.
void put_old_form(dbform::PgConnection& admin, const json& old_form) {
  admin.exec_script("DELETE FROM dbform_states WHERE workspace = 'default'; "
                    "DELETE FROM dbform_journal WHERE workspace = 'default'; "
                    "DELETE FROM dbform_secrets WHERE workspace = 'default'; "
                    "DELETE FROM dbform_locks WHERE workspace = 'default'");
  insert_old_form(admin, old_form);
}

// The ids of the live services named `name` in the simulator.
std::vector<std::string> services_named(Sandbox& sb, const std::string& name) {
  std::vector<std::string> ids;
  for (const auto& s : sb.sim().all_services())
    if (s.value("name", "") == name && s.value("status", "") != "DELETED") ids.push_back(s["service_id"]);
  return ids;
}

}  // namespace

TEST_CASE("e2e: pg: the apply that moves a workspace's passwords into dbform_secrets, killed before any message it "
          "sends, leaves every password readable by the applier, and the next apply finishes the move",
          "[pg]") {
  if (kSanitized) {
    WARN("not run in a sanitized build: LeakSanitizer does not run under strace");
    return;
  }
  // The old form: a file state's document, as a dbform before the secrets table stored it in the row.
  Sandbox sb;
  sb.write("dbform.yaml", manifest({}, {service_yaml("orders"), service_yaml("search")}));
  REQUIRE(sb.apply().exit_code == 0);
  const json old_form = sb.state();
  std::map<std::string, std::string> passwords;  // name -> password
  for (const std::string name : {"orders", "search"}) {
    passwords[name] = find_resource(old_form, service_address(name))["initial_password"];
    REQUIRE(passwords[name].size() >= 16);
  }

  const std::string database_url = pgtest::fresh_database("secrets_kill");
  make_state_tables(database_url);
  dbform::PgConnection admin(database_url);
  const std::string planner = pgtest::unique_name("planner"), applier = pgtest::unique_name("applier");
  grant_roles(admin, planner, applier);
  RoleCheckout main_branch(sb, "main", as_role(database_url, applier, "applier-pw"));
  main_branch.write_manifest(manifest({}, {service_yaml("orders"), service_yaml("search"), service_yaml("audit")}));

  // The next apply creates `audit` and, at its first write, moves the two passwords. Its main
  // thread sends every statement to the database, and the refresh's and the preflight's calls to
  // the API; the workers send the create and the polls. strace counts the calls to inject into per
  // thread, and the main thread makes its first 30 sends before any worker starts and far more than
  // any worker, so the n-th send of any thread is the main thread's: killing at each n kills before
  // each statement. (Kills before a worker's calls are tests/e2e/kill_test.cpp's.)
  const std::string apply = "\"$DBFORM\" apply --auto-approve --poll-interval 100ms";
  const std::string traced = "cd '" + main_branch.dir.string() + "' && strace -f -qq -e trace=sendto ";
  put_old_form(admin, old_form);
  RunResult counted = sb.run_shell(traced + "-o '" + (sb.dir() / "trace.txt").string() + "' " + apply,
                                   main_branch.env);
  INFO(counted.describe());
  REQUIRE(counted.exit_code == 0);
  REQUIRE(!contains(documents_and_journal(admin), passwords["orders"]));  // it moves them
  // With -f every line starts with the thread's id; the first is the main thread's.
  int sends = 0;
  std::istringstream trace(sb.read("trace.txt"));
  std::string main_thread;
  for (std::string line; std::getline(trace, line);) {
    const std::string thread = line.substr(0, line.find(' '));
    if (main_thread.empty()) main_thread = thread;
    sends += thread == main_thread && contains(line, "sendto(");
  }
  REQUIRE(sends > 30);

  auto reset = [&] {
    for (const auto& id : services_named(sb, "audit")) REQUIRE(sb.sim().console(id, "delete", "").status == 200);
    put_old_form(admin, old_form);
  };
  // How many statements a run sends varies a little with how the answers group into rounds (one
  // write a round): the kills go on until a run ends before its n-th send.
  int killed = 0;
  for (int n = 1; n <= sends + 10; ++n) {
    reset();
    RunResult r = sb.run_shell(traced + "-o /dev/null -e inject=sendto:signal=KILL:when=" + std::to_string(n) + " " +
                                   apply,
                               main_branch.env);
    INFO("killed before send #" << n << " (the counted run made " << sends << ")\n" << r.describe());
    const bool was_killed = r.exit_code != 0;

    // The state reads, whole, and the applier prints each password as it was.
    auto state = dbform::PgStateStore(database_url, "default").read();
    REQUIRE(state);
    for (const auto& [name, password] : passwords) {
      const auto* record = state->find(service_address(name));
      REQUIRE(record);
      CHECK(record->initial_password.text() == password);
      RunResult shown = main_branch.run({"output", name + ".password"});
      INFO(shown.describe());
      CHECK(shown.out == password + "\n");
    }

    // The next apply finishes: every password in the secrets table, none in the document or the
    // journal, and `audit` created once.
    RunResult next = main_branch.apply();
    INFO(next.describe());
    REQUIRE(next.exit_code == 0);
    const std::string stored = documents_and_journal(admin);
    for (const auto& [name, password] : passwords) {
      CHECK(!contains(stored, password));
      CHECK(admin.exec("SELECT count(*) FROM dbform_secrets WHERE value = $1", {json(password).dump()}).rows[0][0] ==
            "1");
    }
    CHECK(services_named(sb, "audit").size() == 1);
    CHECK(main_branch.run({"plan", "--detailed-exitcode"}).exit_code == 0);
    if (!was_killed) break;  // it made fewer than n sends: every point before was killed
    ++killed;
  }
  CHECK(killed >= sends - 5);
  CHECK(killed <= sends + 5);
}
