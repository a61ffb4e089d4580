// Roles, schemas, extensions and grants declared under a service, through the real binary against
// `dbform sim --postgres`: planned with the service, made by apply in one transaction as tsdbadmin,
// recorded, reached with the app role's own connection string, and checked in the catalogs with
// psql's library.
#include "postgres_sim.h"

using namespace e2e;

namespace {

const std::string kObjects = R"(        roles:
          - name: app
            login: true
            connection_limit: 20
            member_of: [orders_rw]
            settings:
              statement_timeout: 30s
          - name: orders_rw
          - name: analyst
            login: true
            deletion_protection: true
        schemas:
          - name: orders
            owner: orders_rw
        extensions:
          - name: pg_stat_statements
        grants:
          - role: orders_rw
            schema: orders
            privileges: [USAGE]
          - role: orders_rw
            schema: orders
            tables: all
            privileges: [SELECT, INSERT, UPDATE, DELETE]
          - role: orders_rw
            schema: orders
            sequences: all
            privileges: [USAGE, SELECT]
          - role: analyst
            schema: orders
            privileges: [USAGE]
          - role: analyst
            schema: orders
            tables: all
            privileges: [SELECT]
)";

std::string objects_manifest(const std::string& objects = kObjects) {
  return manifest({}, {service_yaml("orders") + objects});
}

// The objects declared under `orders` in m.yaml, applied (with `env`): most tests' first step.
void apply_objects(Sandbox& sb, const std::string& objects = kObjects, const std::map<std::string, std::string>& env = {}) {
  sb.write("m.yaml", objects_manifest(objects));
  RunResult applied = sb.apply({"-f", "m.yaml"}, env);
  INFO(applied.describe());
  REQUIRE(applied.exit_code == 0);
}

const std::string kApp = service_address("orders") + "/roles/app";
const std::string kAnalyst = service_address("orders") + "/roles/analyst";

// The calls that change something in the API (every POST, PATCH and DELETE the simulator saw).
long long changing_calls(const PostgresSim& sim) {
  long long n = 0;
  const json calls = sim.calls();
  for (auto it = calls.begin(); it != calls.end(); ++it)
    if (it.key().rfind("POST ", 0) == 0 || it.key().rfind("PATCH ", 0) == 0 || it.key().rfind("DELETE ", 0) == 0)
      n += it->get<long long>();
  return n;
}

}  // namespace

TEST_CASE("database objects: apply makes a service's roles schema extension and grants after READY and the app role can do exactly what was granted",
          "[e2e][postgres]") {
  Sandbox sb;
  PostgresSim sim(sb);
  sb.write("m.yaml", objects_manifest());
  RunResult plan = sb.run({"plan", "-f", "m.yaml"});
  REQUIRE(plan.exit_code == 0);
  for (const char* address : {"/roles/app", "/roles/orders_rw", "/schemas/orders", "/extensions/pg_stat_statements",
                              "/grants/orders_rw/orders", "/grants/orders_rw/orders/tables",
                              "/grants/orders_rw/orders/sequences", "/grants/analyst/orders/tables"})
    CHECK_THAT(plan.out, Catch::Contains("# " + service_address("orders") + address + " will be created"));

  RunResult applied = sb.apply({"-f", "m.yaml"});
  INFO(applied.describe());
  REQUIRE(applied.exit_code == 0);
  CHECK_THAT(applied.out, Catch::Contains(kApp + ": created"));
  CHECK_THAT(applied.out, Catch::Contains("11 created"));
  const json state = sb.state();
  const json app = find_resource(state, kApp);
  REQUIRE(app.is_object());
  CHECK(app["kind"] == "role");
  CHECK(app["observed"]["connection_limit"] == 20);
  CHECK(app["initial_password"].get<std::string>().size() >= 32);
  const json group = find_resource(state, service_address("orders") + "/roles/orders_rw");
  CHECK(group.value("initial_password", std::string()).empty());  // a group role has no password

  // The application's step: its own connection string, its grants and nothing more.
  const std::string admin = connection_string(sb, service_address("orders"));
  REQUIRE(sql(admin, "CREATE TABLE orders.items (id serial, v int); INSERT INTO orders.items (v) VALUES (1)").ok);
  REQUIRE(sql(admin, "CREATE TABLE public.admin_only (v int)").ok);
  const std::string as_app = connection_string(sb, kApp);
  CHECK_THAT(as_app, Catch::StartsWith("postgres://app:"));
  CHECK(sql(as_app, "SELECT current_user").value == "app");
  CHECK(sql(as_app, "SHOW statement_timeout").value == "30s");
  CHECK(sql(as_app, "INSERT INTO orders.items (v) VALUES (2)").ok);  // the sequence's USAGE too
  CHECK(sql(as_app, "SELECT count(*) FROM orders.items").value == "2");
  CHECK_FALSE(sql(as_app, "TRUNCATE orders.items").ok);
  CHECK_FALSE(sql(as_app, "SELECT count(*) FROM public.admin_only").ok);
  CHECK_FALSE(sql(as_app, "CREATE ROLE intruder").ok);
  const std::string as_analyst = connection_string(sb, kAnalyst);
  CHECK(sql(as_analyst, "SELECT count(*) FROM orders.items").value == "2");
  CHECK_FALSE(sql(as_analyst, "INSERT INTO orders.items (v) VALUES (3)").ok);

  RunResult check = sb.run({"connect", service_address("orders"), "--role", "app", "--check"});
  CHECK(check.exit_code == 0);
  CHECK_THAT(check.out, Catch::Contains("as app (database tsdb, TLS)"));
  RunResult env = sb.run({"output", "--format", "env"});
  REQUIRE(env.exit_code == 0);
  CHECK_THAT(env.out, Catch::Contains("export DBFORM_ACME_PROD_ORDERS_APP_CONNECTION_STRING='postgres://app:"));
  RunResult pgpass = sb.run({"output", kApp, "--format", "pgpass"});
  REQUIRE(pgpass.exit_code == 0);
  CHECK_THAT(pgpass.out, Catch::Contains(":tsdb:app:"));

  // Planned again: nothing to do; applied again: not one call to the API that changes anything.
  RunResult again = sb.run({"plan", "-f", "m.yaml", "--detailed-exitcode"});
  INFO(again.describe());
  CHECK(again.exit_code == 0);
  const long long before = changing_calls(sim);
  REQUIRE(sb.apply({"-f", "m.yaml"}).exit_code == 0);
  CHECK(changing_calls(sim) == before);
}

TEST_CASE("database objects: a changed grant and limit are one transaction of ALTER and GRANT and no API call",
          "[e2e][postgres]") {
  Sandbox sb;
  PostgresSim sim(sb);
  apply_objects(sb);
  const long long before = changing_calls(sim);
  std::string changed = kObjects;
  changed.replace(changed.find("connection_limit: 20"), 20, "connection_limit: 5");
  changed.replace(changed.find("privileges: [SELECT]\n"), 21, "privileges: [SELECT, TRUNCATE]\n");
  sb.write("m.yaml", objects_manifest(changed));
  RunResult plan = sb.run({"plan", "-f", "m.yaml"});
  REQUIRE(plan.exit_code == 0);
  const std::string id = find_resource(sb.state(), service_address("orders"))["id"];
  CHECK_THAT(plan.out, Catch::Contains("# " + kApp + " (id " + id + "/roles/app) will be updated in place"));
  CHECK_THAT(plan.out, Catch::Contains("# " + service_address("orders") + "/grants/analyst/orders/tables (id " + id +
                                       "/grants/analyst/orders/tables) will be updated in place"));
  CHECK_THAT(plan.out, Catch::Contains("Plan: 0 to create, 2 to update"));
  RunResult applied = sb.apply({"-f", "m.yaml"});
  INFO(applied.describe());
  REQUIRE(applied.exit_code == 0);
  CHECK(changing_calls(sim) == before);
  const std::string admin = connection_string(sb, service_address("orders"));
  CHECK(sql(admin, "SELECT rolconnlimit FROM pg_roles WHERE rolname = 'app'").value == "5");
  REQUIRE(sql(admin, "CREATE TABLE orders.t (v int)").ok);
  CHECK(sql(connection_string(sb, kAnalyst), "TRUNCATE orders.t").ok);
}

TEST_CASE("database objects: deletes only with --prune and never what is protected",
          "[e2e][postgres]") {
  Sandbox sb;
  PostgresSim sim(sb);
  apply_objects(sb);
  // The analyst and its grants removed from the manifest: orphans, kept without --prune.
  std::string without = kObjects;
  without.erase(without.find("          - name: analyst\n"), std::string("          - name: analyst\n            login: true\n            deletion_protection: true\n").size());
  without.erase(without.find("          - role: analyst\n"));
  sb.write("m.yaml", objects_manifest(without));
  RunResult kept = sb.apply({"-f", "m.yaml"});
  REQUIRE(kept.exit_code == 0);
  const std::string admin = connection_string(sb, service_address("orders"));
  CHECK(sql(admin, "SELECT count(*) FROM pg_roles WHERE rolname = 'analyst'").value == "1");
  // Protected: --prune refuses, naming it, and changes nothing.
  RunResult refused = sb.apply({"-f", "m.yaml", "--prune"});
  CHECK(refused.exit_code != 0);
  CHECK_THAT(refused.out + refused.err, Catch::Contains(kAnalyst));
  CHECK_THAT(refused.out + refused.err, Catch::Contains("protected"));
  CHECK(sql(admin, "SELECT count(*) FROM pg_roles WHERE rolname = 'analyst'").value == "1");
}

TEST_CASE("database objects: without a database to connect to the service is recorded and the objects' step fails naming why",
          "[e2e]") {
  Sandbox sb;  // the embedded simulator: its endpoints take no connections
  sb.write("m.yaml", objects_manifest());
  RunResult applied = sb.apply({"-f", "m.yaml", "--max-deletes", "3"});
  CHECK(applied.exit_code == 1);
  CHECK_THAT(applied.out + applied.err, Catch::Contains("its roles, schemas, extensions and grants were not made"));
  const json state = sb.state();
  CHECK(find_resource(state, service_address("orders"))["status"] == "READY");
  // Only the intent, with the password to set, recorded before the transaction: not made.
  CHECK(find_resource(state, kApp)["create_pending"] == true);
  CHECK(find_resource(state, service_address("orders") + "/schemas/orders").is_null());
  // The next plan still makes them.
  RunResult plan = sb.run({"plan", "-f", "m.yaml"});
  CHECK_THAT(plan.out, Catch::Contains("# " + kApp + " will be created"));
}

TEST_CASE("database objects: a login role dropped outside dbform is made again with its recorded password by the next apply of the service's objects",
          "[e2e][postgres]") {
  Sandbox sb;
  PostgresSim sim(sb);
  apply_objects(sb);
  const std::string as_app = connection_string(sb, kApp);
  const std::string admin = connection_string(sb, service_address("orders"));
  REQUIRE(sql(admin, "DROP ROLE app").ok);
  CHECK_FALSE(sql(as_app, "SELECT 1").ok);
  // The catalogs are read before the transaction: the role is missing, so it is made again, with the
  // password the state records (a new one would break every application configured with it).
  std::string changed = kObjects;
  changed.replace(changed.find("connection_limit: 20"), 20, "connection_limit: 21");
  sb.write("m.yaml", objects_manifest(changed));
  RunResult applied = sb.apply({"-f", "m.yaml"});
  INFO(applied.describe());
  REQUIRE(applied.exit_code == 0);
  CHECK(connection_string(sb, kApp) == as_app);  // the recorded password, unchanged
  CHECK(sql(as_app, "SELECT current_user").value == "app");
}

TEST_CASE("database objects: a refreshing plan reads the catalogs and shows a limit changed a privilege added and an extension dropped outside dbform",
          "[e2e][postgres]") {
  Sandbox sb;
  PostgresSim sim(sb);
  std::string objects = kObjects;  // citext is trusted: tsdbadmin made it, and may drop it
  objects.replace(objects.find("          - name: pg_stat_statements\n"), 0, "          - name: citext\n");
  apply_objects(sb, objects);
  const std::string admin = connection_string(sb, service_address("orders"));
  REQUIRE(sql(admin, "ALTER ROLE app CONNECTION LIMIT 3").ok);
  REQUIRE(sql(admin, "DROP EXTENSION citext").ok);
  REQUIRE(sql(admin, "GRANT CREATE ON SCHEMA orders TO analyst").ok);

  RunResult plan = sb.run({"plan", "-f", "m.yaml", "--detailed-exitcode"});
  INFO(plan.describe());
  CHECK(plan.exit_code == 2);
  CHECK_THAT(plan.out, Catch::Contains("connection_limit = 3 -> 20  # changed outside dbform"));
  CHECK_THAT(plan.out, Catch::Contains("# " + service_address("orders") + "/extensions/citext will be created"));
  CHECK_THAT(plan.out, Catch::Contains("dropped outside dbform"));
  CHECK_THAT(plan.out, Catch::Contains(R"(privileges = ["CREATE","USAGE"] -> ["USAGE"]  # changed outside dbform)"));
  CHECK_THAT(plan.out, !Catch::Contains("planned from their records"));
  // From the state alone nothing of it shows: the records are as the last apply left them.
  RunResult offline = sb.run({"plan", "-f", "m.yaml", "--no-refresh", "--detailed-exitcode"});
  CHECK(offline.exit_code == 0);
  // A plan writes nothing.
  CHECK(find_resource(sb.state(), kApp)["observed"]["connection_limit"] == 20);

  RunResult applied = sb.apply({"-f", "m.yaml"});
  INFO(applied.describe());
  REQUIRE(applied.exit_code == 0);
  CHECK(sql(admin, "SELECT rolconnlimit FROM pg_roles WHERE rolname = 'app'").value == "20");
  CHECK(sql(admin, "SELECT count(*) FROM pg_extension WHERE extname = 'citext'").value == "1");
  CHECK(sql(admin, "SELECT has_schema_privilege('analyst', 'orders', 'CREATE')").value == "f");
  const json state = sb.state();
  CHECK(state["refreshed"]["catalogs"].contains(service_address("orders")));
  RunResult again = sb.run({"plan", "-f", "m.yaml", "--detailed-exitcode"});
  INFO(again.describe());
  CHECK(again.exit_code == 0);
}

TEST_CASE("database objects: a plan that cannot open the service's password plans its objects from their records and says when they were read",
          "[e2e][postgres]") {
  Sandbox sb;
  PostgresSim sim(sb);
  const auto& key = kSealingKey;
  apply_objects(sb, kObjects, key);
  REQUIRE(sb.apply({"-f", "m.yaml", "--refresh-only", "--auto-approve"}, key).exit_code == 0);  // stamps the read
  const std::string read_at = sb.state()["refreshed"]["catalogs"][service_address("orders")].get<std::string>();
  RunResult uri = sb.run({"output", service_address("orders") + ".connection_string"}, key);
  REQUIRE(uri.exit_code == 0);
  const std::string admin = uri.out.substr(0, uri.out.find('\n'));
  REQUIRE(sql(admin, "ALTER ROLE app CONNECTION LIMIT 3").ok);

  // A pull request's plan: the API key, and no key to the state's passwords.
  RunResult plan = sb.run({"plan", "-f", "m.yaml", "--detailed-exitcode"});
  INFO(plan.describe());
  CHECK(plan.exit_code == 0);
  CHECK_THAT(plan.out, Catch::Contains(service_address("orders") +
                                       ": its roles, schemas, extensions and grants are planned from their records "
                                       "(last recorded from its catalogs " + read_at + "), not read: the state's "
                                       "passwords are sealed and this run has no key"));
  RunResult json_plan = sb.run({"plan", "-f", "m.yaml", "--format", "json"});
  REQUIRE(json_plan.exit_code == 0);
  const json unread = json::parse(json_plan.out)["state"]["catalogs_unread"];
  REQUIRE(unread.size() == 1);
  CHECK(unread[0]["service"] == service_address("orders"));
  CHECK(unread[0]["last_read"] == read_at);
  // With the key, the same plan reads them.
  RunResult keyed = sb.run({"plan", "-f", "m.yaml", "--detailed-exitcode"}, key);
  INFO(keyed.describe());
  CHECK(keyed.exit_code == 2);
  CHECK_THAT(keyed.out, Catch::Contains("connection_limit = 3 -> 20  # changed outside dbform"));
}

TEST_CASE("database objects: plan --refresh-only reports what changed inside the database and apply --refresh-only records it",
          "[e2e][postgres]") {
  Sandbox sb;
  PostgresSim sim(sb);
  apply_objects(sb);
  const std::string admin = connection_string(sb, service_address("orders"));
  REQUIRE(sql(admin, "ALTER ROLE app CONNECTION LIMIT 3").ok);
  REQUIRE(sql(admin, "REVOKE USAGE ON SCHEMA orders FROM analyst").ok);
  RunResult report = sb.run({"plan", "-f", "m.yaml", "--refresh-only", "--detailed-exitcode"});
  INFO(report.describe());
  CHECK(report.exit_code == 2);
  CHECK_THAT(report.out, Catch::Contains("~ role " + kApp));
  CHECK_THAT(report.out, Catch::Contains("connection_limit = 20 -> 3"));
  CHECK_THAT(report.out, Catch::Contains("- grant " + service_address("orders") + "/grants/analyst/orders"));
  RunResult recorded = sb.apply({"-f", "m.yaml", "--refresh-only", "--auto-approve"});
  INFO(recorded.describe());
  REQUIRE(recorded.exit_code == 0);
  const json state = sb.state();
  CHECK(find_resource(state, kApp)["observed"]["connection_limit"] == 3);
  CHECK(find_resource(state, kApp)["settings"]["connection_limit"] == 20);
  CHECK(find_resource(state, service_address("orders") + "/grants/analyst/orders")["deleted_outside"] == true);
  // The records now say what exists: a plan from them alone shows both changes back.
  RunResult offline = sb.run({"plan", "-f", "m.yaml", "--no-refresh"});
  INFO(offline.describe());
  CHECK_THAT(offline.out, Catch::Contains("connection_limit = 3 -> 20  # changed outside dbform"));
  CHECK_THAT(offline.out, Catch::Contains("# " + service_address("orders") + "/grants/analyst/orders will be created"));
}

TEST_CASE("database objects: rotate-password gives a login role a new password through its database and no API call",
          "[e2e][postgres]") {
  Sandbox sb;
  PostgresSim sim(sb);
  apply_objects(sb);
  const std::string before = connection_string(sb, kApp);
  const long long calls = changing_calls(sim);
  RunResult rotated = sb.run({"rotate-password", kApp});
  INFO(rotated.describe());
  REQUIRE(rotated.exit_code == 0);
  CHECK_THAT(rotated.out, Catch::Contains("The password of " + kApp + " was changed and recorded"));
  const std::string after = connection_string(sb, kApp);
  CHECK(after != before);
  CHECK(sql(after, "SELECT current_user").value == "app");
  CHECK_FALSE(sql(before, "SELECT 1").ok);
  CHECK(changing_calls(sim) == calls);
  const json app = find_resource(sb.state(), kApp);
  CHECK(app.value("pending_password", std::string()).empty());
  // Nothing left to do, and a group role has no password.
  CHECK(sb.run({"plan", "-f", "m.yaml", "--detailed-exitcode"}).exit_code == 0);
  RunResult group = sb.run({"rotate-password", service_address("orders") + "/roles/orders_rw"});
  CHECK(group.exit_code == 1);
  CHECK_THAT(group.err, Catch::Contains("is a group role (login: false): it has no password to rotate"));
}

TEST_CASE("database objects: the baseline policy refuses a login role without a connection limit and names it",
          "[e2e]") {
  Sandbox sb;
  const std::string baseline = std::string(DBFORM_SOURCE_DIR) + "/examples/policies/baseline.yaml";
  std::string objects = kObjects;
  objects.replace(objects.find("            connection_limit: 20\n"), 33, "");
  sb.write("m.yaml", objects_manifest(objects));
  RunResult refused = sb.run({"plan", "-f", "m.yaml", "--no-refresh", "--policy", baseline});
  INFO(refused.describe());
  CHECK(refused.exit_code == 1);
  CHECK_THAT(refused.out, Catch::Contains("[mandatory] login-roles-have-a-limit  " + kApp));
  CHECK_THAT(refused.out, Catch::Contains("[mandatory] login-roles-have-a-limit  " + kAnalyst));
  CHECK_THAT(refused.out, !Catch::Contains("login-roles-have-a-limit  " + service_address("orders") + "/roles/orders_rw"));
  // A limit on each login role, and the plan is checked clean.
  std::string limited = kObjects;
  limited.replace(limited.find("            deletion_protection: true\n"), 0, "            connection_limit: 5\n");
  sb.write("m.yaml", objects_manifest(limited));
  RunResult passed = sb.run({"plan", "-f", "m.yaml", "--no-refresh", "--policy", baseline});
  INFO(passed.describe());
  CHECK(passed.exit_code == 0);
  CHECK_THAT(passed.out, !Catch::Contains("login-roles-have-a-limit  "));
}

TEST_CASE("database objects: an apply without the key of a sealed state fails the objects' step naming why and still makes the service's own changes",
          "[e2e][postgres]") {
  Sandbox sb;
  PostgresSim sim(sb);
  const auto& key = kSealingKey;
  apply_objects(sb, kObjects, key);
  // A grant changed and the service resized: neither records a password, so no key is asked for.
  std::string changed = kObjects;
  changed.replace(changed.find("privileges: [SELECT]\n"), 21, "privileges: [SELECT, TRUNCATE]\n");
  sb.write("m.yaml", manifest({}, {service_yaml("orders", 2000, 8) + changed}));
  RunResult applied = sb.apply({"-f", "m.yaml"});
  INFO(applied.describe());
  CHECK(applied.exit_code == 1);
  CHECK_THAT(applied.out + applied.err,
             Catch::Contains("the state's passwords are sealed and this run has no key (DBFORM_STATE_PASSPHRASE or "
                             "DBFORM_STATE_KEY_FILE) to open the service's tsdbadmin password"));
  const json state = sb.state();
  CHECK(find_resource(state, service_address("orders"))["settings"]["cpu_millis"] == "2000");
  CHECK(find_resource(state, service_address("orders") + "/grants/analyst/orders/tables")["settings"]["privileges"] ==
        json::array({"SELECT"}));
  // With the key, the next apply makes what is left.
  RunResult keyed = sb.apply({"-f", "m.yaml"}, key);
  INFO(keyed.describe());
  CHECK(keyed.exit_code == 0);
  CHECK(find_resource(sb.state(), service_address("orders") + "/grants/analyst/orders/tables")["settings"]["privileges"] ==
        json::array({"SELECT", "TRUNCATE"}));
}

TEST_CASE("database objects: --target of one grant makes it with its role schema and service and nothing else of the database",
          "[e2e][postgres]") {
  Sandbox sb;
  PostgresSim sim(sb);
  sb.write("m.yaml", objects_manifest());
  const std::string orders = service_address("orders");
  const std::string grant = orders + "/grants/analyst/orders/tables";
  RunResult plan = sb.run({"plan", "-f", "m.yaml", "--target", grant});
  INFO(plan.describe());
  REQUIRE(plan.exit_code == 0);
  // The schema's owner is made before the schema, the grant's role and schema before the grant.
  for (const std::string& address : {orders, kAnalyst, orders + "/roles/orders_rw", orders + "/schemas/orders", grant})
    CHECK_THAT(plan.out, Catch::Contains("# " + address + " will be created"));
  CHECK_THAT(plan.out, !Catch::Contains(kApp + " will be created"));
  CHECK_THAT(plan.out, !Catch::Contains("/extensions/pg_stat_statements will be created"));
  CHECK_THAT(plan.out, !Catch::Contains("/grants/orders_rw/orders"));
  CHECK_THAT(plan.out, Catch::Contains("Plan: 5 to create"));

  RunResult applied = sb.apply({"-f", "m.yaml", "--target", grant});
  INFO(applied.describe());
  REQUIRE(applied.exit_code == 0);
  const std::string admin = connection_string(sb, orders);
  CHECK(sql(admin, "SELECT string_agg(rolname, ',' ORDER BY rolname) FROM pg_roles WHERE rolname IN "
                   "('app', 'analyst', 'orders_rw')").value == "analyst,orders_rw");
  REQUIRE(sql(admin, "CREATE TABLE orders.t (v int)").ok);  // the default privileges of `tables: all`
  CHECK(sql(admin, "SELECT has_table_privilege('analyst', 'orders.t', 'SELECT')").value == "t");
  CHECK(sql(admin, "SELECT has_schema_privilege('analyst', 'orders', 'USAGE')").value == "f");  // not targeted
  CHECK(find_resource(sb.state(), kApp).is_null());

  // The next whole apply makes the rest.
  RunResult rest = sb.apply({"-f", "m.yaml"});
  INFO(rest.describe());
  REQUIRE(rest.exit_code == 0);
  CHECK_THAT(rest.out, Catch::Contains("6 created"));
  CHECK(sql(admin, "SELECT has_schema_privilege('analyst', 'orders', 'USAGE')").value == "t");
}

TEST_CASE("database objects: --prune --target of a role drops it with the grants dbform gave it and leaves the other deletes",
          "[e2e][postgres]") {
  Sandbox sb;
  PostgresSim sim(sb);
  const std::string reporter = R"(          - name: reporter
            login: true
)";
  const std::string reporter_grant = R"(          - role: reporter
            schema: orders
            privileges: [USAGE]
)";
  std::string with = kObjects;
  with.insert(with.find("        schemas:"), reporter);
  with += reporter_grant;
  apply_objects(sb, with);
  const std::string admin = connection_string(sb, service_address("orders"));
  REQUIRE(sql(admin, "SELECT has_schema_privilege('reporter', 'orders', 'USAGE')").value == "t");

  // Both the reporter and the app removed; only the reporter targeted.
  std::string without = kObjects;
  without.erase(without.find("          - name: app\n"), without.find("          - name: orders_rw\n") - without.find("          - name: app\n"));
  sb.write("m.yaml", objects_manifest(without));
  const std::string reporter_address = service_address("orders") + "/roles/reporter";
  RunResult plan = sb.run({"plan", "-f", "m.yaml", "--prune", "--target", reporter_address});
  INFO(plan.describe());
  REQUIRE(plan.exit_code == 0);
  CHECK_THAT(plan.out, Catch::Contains("# " + reporter_address + " (id "));
  CHECK_THAT(plan.out, Catch::Contains("/grants/reporter/orders (id "));
  CHECK_THAT(plan.out, Catch::Contains("Plan: 0 to create, 0 to update, 0 to wait for, 3 unchanged, 2 to delete."));
  RunResult applied = sb.apply({"-f", "m.yaml", "--prune", "--target", reporter_address});
  INFO(applied.describe());
  REQUIRE(applied.exit_code == 0);
  CHECK(sql(admin, "SELECT string_agg(rolname, ',' ORDER BY rolname) FROM pg_roles WHERE rolname IN "
                   "('app', 'reporter')").value == "app");
  CHECK(find_resource(sb.state(), reporter_address).is_null());
  CHECK(find_resource(sb.state(), service_address("orders") + "/grants/reporter/orders").is_null());
  CHECK_FALSE(find_resource(sb.state(), kApp).is_null());
}

TEST_CASE("database objects: a login role's password reaches the server only as a SCRAM verifier and no statement log keeps it",
          "[e2e][postgres]") {
  Sandbox sb;
  PostgresSim sim(sb, {"--log-statements"});
  apply_objects(sb);
  auto password_of = [&](const std::string& address) {
    RunResult r = sb.run({"output", address + ".password"});
    REQUIRE(r.exit_code == 0);
    return r.out.substr(0, r.out.find('\n'));
  };
  const std::string first = password_of(kApp);
  REQUIRE(first.size() >= 32);
  RunResult rotated = sb.run({"rotate-password", kApp});
  INFO(rotated.describe());
  REQUIRE(rotated.exit_code == 0);
  const std::string second = password_of(kApp);
  REQUIRE(second != first);
  CHECK(sql(connection_string(sb, kApp), "SELECT current_user").value == "app");

  // Every server's log, with every statement it ran (log_statement = all).
  std::string logs;
  for (const auto& entry : fs::directory_iterator(fs::path(sim.dir()) / "log"))
    logs += sb.read("pg/log/" + entry.path().filename().string());
  CHECK_THAT(logs, Catch::Contains("statement: "));  // the logs do hold dbform's statements
  CHECK_THAT(logs, Catch::Contains("CREATE ROLE"));
  CHECK_THAT(logs, Catch::Contains("PASSWORD 'SCRAM-SHA-256$4096:"));
  for (const std::string& password : {first, second, password_of(kAnalyst)}) CHECK(logs.find(password) == std::string::npos);
}
