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
  sb.write("m.yaml", objects_manifest());
  REQUIRE(sb.apply({"-f", "m.yaml"}).exit_code == 0);
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
  sb.write("m.yaml", objects_manifest());
  REQUIRE(sb.apply({"-f", "m.yaml"}).exit_code == 0);
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
  sb.write("m.yaml", objects_manifest());
  REQUIRE(sb.apply({"-f", "m.yaml"}).exit_code == 0);
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
