// The real binary against a real PostgreSQL (the `pg` CTest fixture, tests/pg/start.sh): a team
// sharing one state from several checkouts, its lock, workspaces, and moving states between a file
// and the database. Every test uses workspaces of its own, so the tests can run in parallel.
#include <signal.h>

#include "../pg/test_server.h"
#include "common.h"
#include "state/codec.h"
#include "state/pg_store.h"
#include "tls/test_pki.h"

using namespace e2e;

namespace {

// A checkout of the team's manifests in its own directory under the sandbox, with the team state.
struct Checkout {
  Sandbox& sb;
  fs::path dir;
  std::map<std::string, std::string> env;

  Checkout(Sandbox& sandbox, const std::string& name, const std::string& workspace) : sb(sandbox) {
    dir = sb.dir() / name;
    fs::create_directories(dir);
    env = sb.env;
    env["DBFORM_STATE"] = pgtest::server_url();
    env["DBFORM_WORKSPACE"] = workspace;
  }
  void write_manifest(const std::string& text) { sb.write((dir / "dbform.yaml").lexically_relative(sb.dir()), text); }
  std::unique_ptr<Process> start(const std::vector<std::string>& args) {
    return std::make_unique<Process>(args, env, dir, "", std::chrono::seconds(120));
  }
  RunResult run(const std::vector<std::string>& args, const std::string& stdin_text = "") {
    Process p(args, env, dir, stdin_text, std::chrono::seconds(60));
    return p.wait();
  }
  RunResult apply(const std::vector<std::string>& more = {}) {
    std::vector<std::string> args = {"apply", "--auto-approve", "--poll-interval", "100ms"};
    args.insert(args.end(), more.begin(), more.end());
    return run(args);
  }
};

// The workspace's state document as stored, or null JSON when there is none.
// The workspace's state as dbform reads it (its journal replayed); null while there is none, the
// tables included (a run that has only just started).
json stored_state(const std::string& workspace) {
  std::optional<dbform::State> state;
  try {
    state = dbform::PgStateStore(pgtest::server_url(), workspace).read();
  } catch (const dbform::Error&) {
    return nullptr;
  }
  return state ? json::parse(dbform::serialize_state(*state)) : json(nullptr);
}

bool has_id(const json& state, const std::string& address) {
  if (state.is_null()) return false;
  json r = find_resource(state, address);
  return r.is_object() && !r["id"].get<std::string>().empty();
}

// Output must never show the database password (it is in DBFORM_STATE).
void check_no_password(const RunResult& r) {
  INFO(r.describe());
  CHECK(!contains(r.all(), pgtest::server_password()));
}

}  // namespace

TEST_CASE("e2e: pg: a second apply from another checkout is refused at once naming the holder, and SIGKILL frees the lock",
          "[pg]") {
  auto config = default_sim_config();
  config.faults.stuck = {"orders"};
  Sandbox sb(config);
  const std::string ws = pgtest::unique_name("team");
  Checkout alice(sb, "alice", ws), ci(sb, "ci", ws);
  alice.write_manifest(manifest({}, {service_yaml("orders")}));
  ci.write_manifest(manifest({}, {service_yaml("orders")}));

  auto first = alice.start({"apply", "--auto-approve", "--poll-interval", "100ms", "--wait-timeout", "10m"});
  // Each step is its own committed write: the create is in the database while the run still waits.
  bool recorded = eventually([&] { return has_id(stored_state(ws), service_address("orders")); },
                             std::chrono::seconds(30));
  INFO("first run so far:\n" << first->stdout_so_far() << first->stderr_so_far());
  REQUIRE(recorded);

  RunResult second = ci.apply();
  INFO(second.describe());
  CHECK(second.exit_code == 1);
  CHECK(second.elapsed < std::chrono::seconds(10));
  CHECK(contains(second.err, "(workspace " + ws + ") is locked by pid " + std::to_string(first->pid())));
  CHECK(contains(second.err, "running `apply` since "));
  CHECK(contains(second.err, "--lock-timeout"));
  check_no_password(second);
  RunResult rm = ci.run({"state", "rm", "orders"});
  CHECK(rm.exit_code == 1);
  CHECK(contains(rm.err, "locked by pid " + std::to_string(first->pid())));
  CHECK(sb.count(kPostService) == 1);

  // The lock is the server's: killing the holder releases it as soon as the server sees the
  // connection close, with no timeout to wait out and nothing to unlock by hand.
  std::string holder_backend = pgtest::query_value("SELECT backend_pid FROM dbform_locks WHERE workspace = $1", {ws});
  first->signal(SIGKILL);
  CHECK(first->wait().exit_code == 128 + SIGKILL);
  REQUIRE(eventually(
      [&] { return pgtest::query_value("SELECT count(*) FROM pg_stat_activity WHERE pid = $1", {holder_backend}) == "0"; },
      std::chrono::seconds(10)));
  RunResult third = ci.apply({"--no-wait"});
  INFO(third.describe());
  CHECK(third.exit_code == 0);
  CHECK(!contains(third.err, "locked"));
  CHECK(sb.count(kPostService) == 1);  // the killed run's create was recorded: never created twice
  CHECK(pgtest::query_value("SELECT count(*) FROM dbform_locks WHERE workspace = $1", {ws}) == "0");
}

TEST_CASE("e2e: pg: a plan from another checkout sees what an apply recorded: no changes", "[pg]") {
  Sandbox sb;
  const std::string ws = pgtest::unique_name("team");
  Checkout alice(sb, "alice", ws), bob(sb, "bob", ws);
  alice.write_manifest(base_manifest());
  bob.write_manifest(base_manifest());

  RunResult applied = alice.apply();
  INFO(applied.describe());
  REQUIRE(applied.exit_code == 0);
  check_no_password(applied);

  RunResult plan = bob.run({"plan", "--detailed-exitcode"});
  INFO(plan.describe());
  CHECK(plan.exit_code == 0);
  CHECK(contains(plan.out, "No changes."));
  check_no_password(plan);
  RunResult endpoint = bob.run({"output", "orders.endpoint"});
  CHECK(endpoint.exit_code == 0);
  CHECK(contains(endpoint.out, ":"));
  // The team state is in the database only.
  CHECK(!fs::exists(alice.dir / "dbform.state.json"));
  CHECK(!fs::exists(bob.dir / "dbform.state.json"));
  CHECK(stored_state(ws)["resources"].size() == 4);

  // Bob's manifest gains a service: his plan shows exactly that one to create.
  bob.write_manifest(base_manifest({"reports"}));
  RunResult more = bob.run({"plan", "--detailed-exitcode"});
  CHECK(more.exit_code == 2);
  CHECK(contains(more.out, "1 to create"));
}

TEST_CASE("e2e: pg: DBFORM_STATE in libpq's keyword form names the same team state, its password shown nowhere",
          "[pg]") {
  Sandbox sb;
  const std::string ws = pgtest::unique_name("keywords");
  Checkout alice(sb, "alice", ws), bob(sb, "bob", ws);
  // postgres://dbform:PASSWORD@127.0.0.1:PORT/postgres, written as host=... port=... keywords.
  const std::string url = pgtest::server_url();
  const size_t at = url.find('@'), colon = url.find(':', at), slash = url.find('/', at);
  bob.env["DBFORM_STATE"] = "host=" + url.substr(at + 1, colon - at - 1) + " port=" +
                            url.substr(colon + 1, slash - colon - 1) + " dbname=" + url.substr(slash + 1) +
                            " user=dbform password='" + pgtest::server_password() + "' connect_timeout=5";
  alice.write_manifest(base_manifest());
  bob.write_manifest(base_manifest());
  RunResult applied = alice.apply();
  INFO(applied.describe());
  REQUIRE(applied.exit_code == 0);
  RunResult plan = bob.run({"plan", "--detailed-exitcode"});
  INFO(plan.describe());
  CHECK(plan.exit_code == 0);
  check_no_password(plan);
  // A message that names the state shows the keywords without the password.
  RunResult locked_out = bob.run({"state", "push", "missing.json"});
  CHECK(locked_out.exit_code == 1);
  check_no_password(locked_out);
  for (const auto& entry : fs::directory_iterator(bob.dir)) CHECK_FALSE(contains(entry.path().string(), "="));
}

TEST_CASE("e2e: pg: two workspaces of one database are independent", "[pg]") {
  auto config = default_sim_config();
  config.faults.stuck = {"orders"};
  Sandbox sb(config);
  const std::string staging = pgtest::unique_name("staging"), prod = pgtest::unique_name("prod");
  Checkout a(sb, "a", staging), b(sb, "b", prod);
  a.write_manifest(manifest({}, {service_yaml("orders")}));
  b.write_manifest(manifest({}, {service_yaml("billing")}));

  auto holder = a.start({"apply", "--auto-approve", "--poll-interval", "100ms", "--wait-timeout", "10m"});
  REQUIRE(eventually([&] { return has_id(stored_state(staging), service_address("orders")); }, std::chrono::seconds(30)));

  // Another workspace is neither locked nor changed by the run holding `staging`.
  RunResult other = b.apply();
  INFO(other.describe());
  CHECK(other.exit_code == 0);
  RunResult list = b.run({"state", "list"});
  CHECK(list.out == service_address("billing") + "\n");
  RunResult list_staging = b.run({"state", "list", "--workspace", staging});
  CHECK(list_staging.out == service_address("orders") + "\n");
  // A mistyped workspace is named as such, with the ones that exist, not an empty list.
  for (const std::vector<std::string>& typo : {std::vector<std::string>{"state", "list", "--workspace", "stagnig"},
                                              std::vector<std::string>{"output", "--workspace", "stagnig"}}) {
    RunResult r = b.run(typo);
    INFO(r.describe());
    CHECK(r.exit_code == 1);
    CHECK(contains(r.err, "the workspaces with a state are"));
    CHECK(contains(r.err, staging));
  }

  holder->signal(SIGTERM);
  CHECK(holder->wait().exit_code == 130);
}

TEST_CASE("e2e: pg: state push and pull move a state from a file to PostgreSQL and back", "[pg]") {
  Sandbox sb;
  const std::string ws = pgtest::unique_name("moved");
  const std::string url = pgtest::server_url();
  sb.write("dbform.yaml", base_manifest());
  REQUIRE(sb.apply().exit_code == 0);  // a state file, as a team starts out
  json file_state = sb.state();
  const std::vector<std::string> to_pg = {"--state", url, "--workspace", ws};

  auto with = [](std::vector<std::string> args, const std::vector<std::string>& more) {
    args.insert(args.end(), more.begin(), more.end());
    return args;
  };
  RunResult pushed = sb.run(with({"state", "push", "dbform.state.json"}, to_pg));
  INFO(pushed.describe());
  REQUIRE(pushed.exit_code == 0);
  CHECK(contains(pushed.out, "Pushed dbform.state.json (4 resource(s))"));
  check_no_password(pushed);
  json stored = stored_state(ws);
  CHECK(stored["lineage"] == file_state["lineage"]);
  CHECK(stored["serial"] == file_state["serial"].get<long long>() + 1);
  CHECK(stored["resources"] == file_state["resources"]);
  CHECK(sb.run(with({"plan", "--no-refresh", "--detailed-exitcode"}, to_pg)).exit_code == 0);

  // The file is now older than the database: pushing it again is refused and changes nothing.
  RunResult older = sb.run(with({"state", "push", "dbform.state.json"}, to_pg));
  INFO(older.describe());
  CHECK(older.exit_code == 1);
  CHECK(contains(older.err, "is newer"));
  CHECK(contains(older.err, "nothing was pushed"));
  CHECK(stored_state(ws) == stored);

  // Back: pull from the database, push into the file.
  RunResult pulled = sb.run(with({"state", "pull"}, to_pg));
  REQUIRE(pulled.exit_code == 0);
  CHECK(json::parse(pulled.out) == stored);
  sb.write("pulled.json", pulled.out);
  RunResult back = sb.run({"state", "push", "pulled.json"});
  INFO(back.describe());
  CHECK(back.exit_code == 0);
  CHECK(sb.state()["resources"] == stored["resources"]);
  CHECK(sb.state()["serial"] == file_state["serial"].get<long long>() + 1);
  CHECK(contains(sb.run({"state", "push", "pulled.json"}).out, "Nothing to push"));

  // Another project's state is another lineage: refused, unless forced.
  Sandbox other;
  other.write("dbform.yaml", manifest({}, {service_yaml("elsewhere")}));
  REQUIRE(other.apply().exit_code == 0);
  sb.write("stranger.json", other.read("dbform.state.json"));
  RunResult stranger = sb.run(with({"state", "push", "stranger.json"}, to_pg));
  CHECK(stranger.exit_code == 1);
  CHECK(contains(stranger.err, "holds another state"));
  CHECK(stored_state(ws) == stored);
  RunResult forced = sb.run(with({"state", "push", "stranger.json", "--force"}, to_pg));
  INFO(forced.describe());
  CHECK(forced.exit_code == 0);
  json replaced = stored_state(ws);
  CHECK(replaced["resources"].size() == 1);
  CHECK(replaced["serial"] == stored["serial"].get<long long>() + 1);

  // The state holds passwords: pull never prints it on a terminal.
  RunResult on_tty = sb.run_tty(with({"state", "pull"}, to_pg), "");
  CHECK(on_tty.exit_code == 1);
  CHECK(contains(on_tty.err, "refusing to print the state on a terminal"));
  CHECK(!contains(on_tty.all(), "initial_password"));
}

TEST_CASE("e2e: pg: bad URLs, passwords and workspaces give errors a person can act on, and change nothing", "[pg]") {
  Sandbox sb;
  sb.write("dbform.yaml", base_manifest());
  std::string url = pgtest::server_url(), password = pgtest::server_password();
  std::string wrong = url;
  wrong.replace(wrong.find(password), password.size(), "wrong-secret-123");

  RunResult denied = sb.apply({}, {{"DBFORM_STATE", wrong}});
  INFO(denied.describe());
  CHECK(denied.exit_code == 1);
  CHECK(contains(denied.err, "cannot connect to the PostgreSQL state (database postgres on 127.0.0.1:"));
  CHECK(contains(denied.err, "password authentication failed"));
  CHECK(!contains(denied.all(), "wrong-secret-123"));

  RunResult bad_workspace = sb.run({"plan", "--state", url, "--workspace", "no spaces"});
  CHECK(bad_workspace.exit_code == 1);
  CHECK(contains(bad_workspace.err, "--workspace: `no spaces` is not a workspace name"));
  check_no_password(bad_workspace);

  RunResult file_workspace = sb.run({"plan"}, {{"DBFORM_WORKSPACE", "prod"}});
  CHECK(file_workspace.exit_code == 1);
  CHECK(contains(file_workspace.err, "DBFORM_WORKSPACE `prod` needs a PostgreSQL state"));

  RunResult missing = sb.run({"state", "push", "nope.json", "--state", url});
  CHECK(missing.exit_code == 1);
  CHECK(contains(missing.err, "cannot push nope.json: no such file"));
  CHECK(sb.total_requests() == 0);
  CHECK(!sb.exists("dbform.state.json"));
}

TEST_CASE("e2e: pg: output's connection string, pgpass and env lines connect to a real PostgreSQL with an awkward password",
          "[pg]") {
  // A server standing in for the service: tsdbadmin and tsdb on the test cluster, with a password
  // holding every character that URIs, pgpass files and shells treat specially.
  const std::string password = "p:w\\d @/?#%&='\"$(touch pwned) `x` ;|*~";
  {
    dbform::PgConnection admin(pgtest::server_url());
    admin.exec_script("DROP DATABASE IF EXISTS tsdb");
    admin.exec_script("DROP ROLE IF EXISTS tsdbadmin");
    std::string quoted = "'";
    for (char c : password) quoted += c == '\'' ? std::string("''") : std::string(1, c);
    admin.exec_script("CREATE ROLE tsdbadmin LOGIN PASSWORD " + quoted + "'");
    admin.exec_script("CREATE DATABASE tsdb OWNER tsdbadmin");
  }
  const std::string url = pgtest::server_url();
  const std::string port = url.substr(url.rfind(':') + 1, url.rfind('/') - url.rfind(':') - 1);

  Sandbox sb;
  sb.write("dbform.yaml", manifest({}, {service_yaml("orders")}));
  REQUIRE(sb.apply().exit_code == 0);
  json state = sb.state();
  for (auto& r : state["resources"]) {
    r["endpoint"] = {{"host", "127.0.0.1"}, {"port", std::stoi(port)}};
    r["initial_password"] = password;
  }
  sb.write("dbform.state.json", state.dump());

  // The connection string, as printed.
  RunResult uri = sb.run({"output", service_address("orders") + ".connection_string"});
  INFO(uri.describe());
  REQUIRE(uri.exit_code == 0);
  std::string text = uri.out.substr(0, uri.out.size() - 1);
  CHECK(text.rfind("postgres://tsdbadmin:", 0) == 0);
  CHECK(contains(text, "@127.0.0.1:" + port + "/tsdb?sslmode=require"));
  // As printed: the test server speaks TLS, as a service does.
  CHECK(dbform::PgConnection(text).exec("SELECT ssl FROM pg_stat_ssl WHERE pid = pg_backend_pid()").rows.at(0).at(0) ==
        "t");
  CHECK(dbform::PgConnection(text).exec("SELECT current_user").rows.at(0).at(0) == "tsdbadmin");

  // A pgpass file, as libpq reads it.
  RunResult pgpass = sb.run({"output", "--format", "pgpass"});
  INFO(pgpass.describe());
  REQUIRE(pgpass.exit_code == 0);
  sb.write("pgpass", pgpass.out);
  fs::permissions(sb.dir() / "pgpass", fs::perms::owner_read | fs::perms::owner_write);
  const std::string conninfo = "host=127.0.0.1 port=" + port + " dbname=tsdb user=tsdbadmin sslmode=disable passfile=" +
                               (sb.dir() / "pgpass").string();
  CHECK(dbform::PgConnection(conninfo).exec("SELECT current_user").rows.at(0).at(0) == "tsdbadmin");

  // env lines, through bash: the password and the connection string come back unchanged.
  RunResult env = sb.run({"output", "--format", "env"});
  REQUIRE(env.exit_code == 0);
  sb.write("orders.env", env.out);
  sb.write("read-back.sh", ". ./orders.env && printf '%s\\n%s' \"$DBFORM_ACME_PROD_ORDERS_PASSWORD\" "
                           "\"$DBFORM_ACME_PROD_ORDERS_CONNECTION_STRING\"\n");
  RunResult shell = sb.run_shell("bash read-back.sh");
  INFO(shell.describe());
  CHECK(shell.exit_code == 0);
  CHECK(shell.out == password + "\n" + uri.out.substr(0, uri.out.size() - 1));
  CHECK(!sb.exists("pwned"));
}

TEST_CASE("e2e: pg: a role with SELECT alone plans with a refresh, during an apply's lock, and writes nothing", "[pg]") {
  // The team's state in a database of its own, its tables made by the applying role.
  const std::string database_url = pgtest::fresh_database("plan_only");
  const std::string workspace = "default";
  Sandbox sb;
  Checkout main_branch(sb, "main", workspace);
  main_branch.env["DBFORM_STATE"] = database_url;
  main_branch.write_manifest(manifest({}, {service_yaml("orders")}));
  REQUIRE(main_branch.apply().exit_code == 0);

  // A pull request's role: SELECT on dbform's tables and nothing else.
  const std::string role = pgtest::unique_name("pr_planner");
  {
    dbform::PgConnection admin(database_url);
    admin.exec_script("CREATE ROLE " + role + " LOGIN PASSWORD 'pr-secret'");
    admin.exec_script("GRANT SELECT ON dbform_states, dbform_journal, dbform_locks TO " + role);
  }
  const std::string host_and_db = database_url.substr(database_url.find('@'));
  Checkout pr(sb, "pr", workspace);
  pr.env["DBFORM_STATE"] = "postgres://" + role + ":pr-secret" + host_and_db;
  pr.write_manifest(manifest({}, {service_yaml("orders"), service_yaml("search")}));

  // Changed outside dbform, and main's apply holds the lock while the pull request plans.
  dbform::PgStateStore held(database_url, workspace);
  auto before = held.read();
  REQUIRE(before);
  const std::string orders_id = before->find(service_address("orders"))->id;
  REQUIRE(sb.sim().console(orders_id, "resize", R"({"cpu_millis":"2000","memory_gbs":"8"})").status == 200);
  auto lock = held.lock("apply", dbform::Duration(0));

  RunResult plan = pr.run({"plan", "--detailed-exitcode"});
  INFO(plan.describe());
  CHECK(plan.exit_code == 2);
  CHECK(contains(plan.out, "1 to create, 1 to update"));
  CHECK(contains(plan.out, "changed outside dbform"));
  CHECK(contains(plan.err, "the state is locked by pid " + std::to_string(::getpid())));
  CHECK(!contains(plan.all(), "pr-secret"));
  lock.reset();
  auto after = dbform::PgStateStore(database_url, workspace).read();
  REQUIRE(after);
  CHECK(after->serial == before->serial);

  // The same role cannot apply: its writes are refused by the database, and nothing changes.
  RunResult apply = pr.apply();
  CHECK(apply.exit_code == 1);
  CHECK(dbform::PgStateStore(database_url, workspace).read()->serial == before->serial);
}

TEST_CASE("e2e: pg: a state over TLS: sslmode=verify-full with the server's CA and sslmode=require work, and a CA that "
          "did not sign its certificate is refused",
          "[pg]") {
  const std::string url = pgtest::server_url();
  const std::string workspace = pgtest::unique_name("tls");
  const std::string verified = url + "?sslmode=verify-full&sslrootcert=" + pgtest::server_ca_file();
  Sandbox sb;
  sb.write("dbform.yaml", manifest({}, {service_yaml("orders")}));
  RunResult r = sb.apply({}, {{"DBFORM_STATE", verified}, {"DBFORM_WORKSPACE", workspace}});
  INFO(r.describe());
  REQUIRE(r.exit_code == 0);
  check_no_password(r);
  CHECK(has_id(stored_state(workspace), service_address("orders")));

  RunResult required = sb.run({"plan", "--detailed-exitcode"},
                              {{"DBFORM_STATE", url + "?sslmode=require"}, {"DBFORM_WORKSPACE", workspace}});
  INFO(required.describe());
  CHECK(required.exit_code == 0);
  check_no_password(required);
  const std::string port = url.substr(url.rfind(':') + 1, url.rfind('/') - url.rfind(':') - 1);
  RunResult keywords = sb.run(
      {"plan", "--detailed-exitcode"},
      {{"DBFORM_STATE", "host=localhost port=" + port + " dbname=postgres user=dbform password=" +
                            pgtest::server_password() + " sslmode=verify-full sslrootcert=" + pgtest::server_ca_file()},
       {"DBFORM_WORKSPACE", workspace}});
  INFO(keywords.describe());
  CHECK(keywords.exit_code == 0);
  check_no_password(keywords);

  // Another CA's bundle: the server's certificate does not chain to it.
  tlstest::TempPki other;
  RunResult wrong = sb.run({"plan"}, {{"DBFORM_STATE", url + "?sslmode=verify-full&sslrootcert=" + other.file("ca.pem")},
                                      {"DBFORM_WORKSPACE", workspace}});
  INFO(wrong.describe());
  CHECK(wrong.exit_code == 1);
  CHECK(contains(wrong.err, "cannot connect to the PostgreSQL state (database postgres on 127.0.0.1:"));
  CHECK(contains(wrong.err, "certificate verify failed"));
  check_no_password(wrong);
}

TEST_CASE("e2e: pg: a plan against a database that holds no state yet creates nothing in it, and apply makes the tables",
          "[pg]") {
  const std::string database_url = pgtest::fresh_database("plan_first");
  Sandbox sb;
  Checkout pr(sb, "pr", "default");
  pr.env["DBFORM_STATE"] = database_url;
  pr.write_manifest(manifest({}, {service_yaml("orders")}));
  auto tables = [&] {
    dbform::PgConnection admin(database_url);
    return admin.exec("SELECT count(*) FROM pg_tables WHERE tablename LIKE 'dbform_%'").rows.at(0).at(0).value_or("");
  };
  RunResult plan = pr.run({"plan", "--detailed-exitcode"});
  INFO(plan.describe());
  CHECK(plan.exit_code == 2);
  CHECK(contains(plan.out, "1 to create"));
  CHECK(tables() == "0");
  REQUIRE(pr.apply().exit_code == 0);
  CHECK(tables() == "4");  // dbform_states, dbform_journal, dbform_locks, dbform_secrets
}
