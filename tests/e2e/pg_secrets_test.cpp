// The PostgreSQL state keeps the passwords in a table of their own (dbform_secrets): a role granted
// SELECT on the state's tables but not on that one plans, refreshes, lists, shows and outputs
// everything but a password, and never writes; the applier's role reads and writes them; a
// workspace written before the table moves its passwords there at its next write. The roles are
// those docs/state.md's GRANTs make, on the real test server (the `pg` fixture).
#include "../pg/test_server.h"
#include "pg_roles.h"

using namespace e2e;

TEST_CASE("e2e: pg: passwords live in dbform_secrets: a planner without it plans, lists, shows and outputs all but "
          "passwords, and never writes, while the applier reads and writes them",
          "[pg]") {
  const std::string database_url = pgtest::fresh_database("secrets_apart");
  Sandbox sb;
  RoleCheckout owner(sb, "owner", database_url);
  owner.write_manifest(manifest({}, {service_yaml("orders")}));
  REQUIRE(owner.apply().exit_code == 0);
  const std::string orders = service_address("orders");
  dbform::PgConnection admin(database_url);
  const std::string orders_id = dbform::PgStateStore(database_url, "default").read()->find(orders)->id;
  const std::string password = sb.sim().current_password(orders_id);
  REQUIRE(password.size() >= 16);

  // Neither the document nor the journal holds it: the secrets table does, keyed by the record.
  CHECK(!contains(documents_and_journal(admin), password));
  auto rows = admin.exec("SELECT kind, resource_id, field, value FROM dbform_secrets WHERE workspace = 'default'").rows;
  REQUIRE(rows.size() == 1);
  CHECK(rows[0][0] == "service");
  CHECK(rows[0][1] == orders_id);
  CHECK(rows[0][2] == "initial_password");
  CHECK(rows[0][3] == json(password).dump());

  const std::string planner = pgtest::unique_name("planner"), applier = pgtest::unique_name("applier");
  grant_roles(admin, planner, applier);
  const long long serial = dbform::PgStateStore(database_url, "default").read()->serial;

  RoleCheckout pr(sb, "pr", as_role(database_url, planner, "planner-pw"));
  pr.write_manifest(manifest({}, {service_yaml("orders")}));
  RunResult plan = pr.run({"plan", "--detailed-exitcode"});  // refreshing: reads the API, not the secrets
  INFO(plan.describe());
  CHECK(plan.exit_code == 0);
  RunResult list = pr.run({"state", "list"});
  CHECK(list.exit_code == 0);
  CHECK(contains(list.out, orders));
  RunResult show = pr.run({"state", "show", orders});
  INFO(show.describe());
  CHECK(show.exit_code == 0);
  CHECK(contains(show.out, "\"initial_password\": \"(not readable here)\""));
  CHECK(contains(show.out, orders_id));
  RunResult host = pr.run({"output", "orders.host"});
  INFO(host.describe());
  CHECK(host.exit_code == 0);
  CHECK(!host.out.empty());
  RunResult secret = pr.run({"output", "orders.password"});
  INFO(secret.describe());
  CHECK(secret.exit_code == 1);
  CHECK(contains(secret.err, "no access to secrets"));
  CHECK(contains(secret.err, "dbform_secrets"));
  for (const RunResult* r : {&plan, &list, &show, &host, &secret}) CHECK(!contains(r->all(), password));

  // It never writes: an apply is refused and the state is as it was.
  pr.write_manifest(manifest({}, {service_yaml("orders"), service_yaml("search")}));
  RunResult refused = pr.apply();
  INFO(refused.describe());
  CHECK(refused.exit_code == 1);
  CHECK(contains(refused.err, "dbform_secrets"));
  CHECK(dbform::PgStateStore(database_url, "default").read()->serial == serial);

  // The applier reads and writes them.
  RoleCheckout main_branch(sb, "main", as_role(database_url, applier, "applier-pw"));
  main_branch.write_manifest(manifest({}, {service_yaml("orders"), service_yaml("search")}));
  RunResult shown = main_branch.run({"output", "orders.password"});
  INFO(shown.describe());
  CHECK(shown.exit_code == 0);
  CHECK(shown.out == password + "\n");
  CHECK(contains(main_branch.run({"state", "show", orders}).out, "\"initial_password\": \"(sensitive)\""));
  RunResult applied = main_branch.apply();
  INFO(applied.describe());
  REQUIRE(applied.exit_code == 0);
  CHECK(!contains(documents_and_journal(admin), password));
  CHECK(admin.exec("SELECT count(*) FROM dbform_secrets WHERE workspace = 'default'").rows[0][0] == "2");
  CHECK(pr.run({"plan", "--detailed-exitcode"}).exit_code == 0);  // the planner sees both, no changes
}

TEST_CASE("e2e: pg: a workspace whose document holds its passwords moves them to dbform_secrets at its next write",
          "[pg]") {
  // A state file's document, as a dbform before the secrets table stored it in the row.
  Sandbox sb;
  sb.write("dbform.yaml", manifest({}, {service_yaml("orders")}));
  REQUIRE(sb.apply().exit_code == 0);
  const json old_form = sb.state();
  const std::string password = find_resource(old_form, service_address("orders"))["initial_password"];
  REQUIRE(!password.empty());
  const std::string database_url = pgtest::fresh_database("secrets_moved");
  RoleCheckout team(sb, "team", database_url);
  team.write_manifest(manifest({}, {service_yaml("orders"), service_yaml("search")}));
  make_state_tables(database_url);
  dbform::PgConnection admin(database_url);
  insert_old_form(admin, old_form);
  CHECK(team.run({"output", "orders.password"}).out == password + "\n");  // read as it is

  RunResult applied = team.apply();
  INFO(applied.describe());
  REQUIRE(applied.exit_code == 0);
  CHECK(!contains(documents_and_journal(admin), password));
  CHECK(admin.exec("SELECT count(*) FROM dbform_secrets WHERE value = $1", {json(password).dump()}).rows[0][0] == "1");
  CHECK(team.run({"output", "orders.password"}).out == password + "\n");
}

TEST_CASE("e2e: pg: on a database made before dbform_secrets, a reader that may create tables makes none, and a "
          "dbform_secrets a reader owns is refused to the writer",
          "[pg]") {
  Sandbox sb;
  sb.write("dbform.yaml", manifest({}, {service_yaml("orders")}));
  REQUIRE(sb.apply().exit_code == 0);
  const json old_form = sb.state();
  const std::string password = find_resource(old_form, service_address("orders"))["initial_password"];
  const std::string database_url = pgtest::fresh_database("secrets_owner");
  make_state_tables(database_url);
  dbform::PgConnection admin(database_url);
  // The three tables of a dbform before the secrets table, and a workspace it wrote.
  admin.exec_script("DROP TABLE dbform_secrets");
  insert_old_form(admin, old_form);
  // Both roles may create tables in the schema, as every role may in `public` before PostgreSQL 15.
  const std::string planner = pgtest::unique_name("planner"), applier = pgtest::unique_name("applier");
  admin.exec_script("CREATE ROLE " + planner + " LOGIN PASSWORD 'planner-pw'; "
                    "GRANT SELECT ON dbform_states, dbform_journal, dbform_locks TO " + planner + "; "
                    "CREATE ROLE " + applier + " LOGIN PASSWORD 'applier-pw'; "
                    "GRANT SELECT, INSERT, UPDATE, DELETE ON dbform_states, dbform_journal, dbform_locks TO " +
                    applier + "; GRANT CREATE ON SCHEMA public TO " + planner + ", " + applier);
  auto secrets_table = [&] { return admin.exec("SELECT to_regclass('dbform_secrets') IS NOT NULL").rows[0][0]; };
  const long long serial = dbform::PgStateStore(database_url, "default").read()->serial;

  RoleCheckout pr(sb, "pr", as_role(database_url, planner, "planner-pw"));
  RoleCheckout main_branch(sb, "main", as_role(database_url, applier, "applier-pw"));
  for (RoleCheckout* checkout : {&pr, &main_branch}) checkout->write_manifest(manifest({}, {service_yaml("orders")}));
  RunResult refused = pr.run({"rotate-password", "orders"});
  INFO(refused.describe());
  CHECK(refused.exit_code == 1);
  CHECK(contains(refused.err, "may not write the state"));
  CHECK(secrets_table() == "f");  // it made nothing

  // A table a reader could read (made by it, as a dbform before this guard did at the reader's
  // refused lock; or granted to it; or with a trigger that copies what is put there): the writer
  // puts nothing there, and says why and what to do.
  dbform::PgConnection as_planner(as_role(database_url, planner, "planner-pw"));
  const std::string create_table = "CREATE TABLE dbform_secrets (workspace text NOT NULL, kind text NOT NULL, "
                                   "project_id text NOT NULL, resource_id text NOT NULL, field text NOT NULL, value "
                                   "text NOT NULL, PRIMARY KEY (workspace, kind, project_id, resource_id, field)); "
                                   "GRANT SELECT, INSERT, UPDATE, DELETE ON dbform_secrets TO " + applier + "; ";
  struct Exposed {
    std::string made_as, why, fix;
    std::function<void()> make;
  };
  const std::string drop = "DROP TABLE dbform_secrets";
  const std::vector<Exposed> exposed = {
      {"made by the reader", "is owned by " + planner + ", a role that may not write the state", drop,
       [&] { as_planner.exec_script(create_table); }},
      {"granted to the reader", "may be read by " + planner + ", which may not write the state",
       "REVOKE ALL ON dbform_secrets FROM " + planner,
       [&] { admin.exec_script(create_table + "GRANT SELECT ON dbform_secrets TO " + planner); }},
      {"granted to PUBLIC", "may be read by PUBLIC", "REVOKE ALL ON dbform_secrets FROM PUBLIC",
       [&] { admin.exec_script(create_table + "GRANT SELECT ON dbform_secrets TO PUBLIC"); }},
      {"with a trigger", "has triggers, rules or row security policies", drop, [&] {
         admin.exec_script(create_table + "CREATE FUNCTION copy_secret() RETURNS trigger LANGUAGE plpgsql AS "
                           "$$BEGIN RETURN NEW; END$$; CREATE TRIGGER copy_secret BEFORE INSERT ON dbform_secrets "
                           "FOR EACH ROW EXECUTE PROCEDURE copy_secret()");
       }}};
  for (const Exposed& e : exposed) {
    e.make();
    RunResult foreign = main_branch.run({"rotate-password", "orders"});
    INFO(e.made_as << "\n" << foreign.describe());
    CHECK(foreign.exit_code == 1);
    CHECK(contains(foreign.err, "the table dbform_secrets " + e.why));
    CHECK(contains(foreign.err, e.fix));
    CHECK(contains(foreign.err, "dbform rotate-password"));
    CHECK(admin.exec("SELECT count(*) FROM dbform_secrets").rows[0][0] == "0");
    CHECK(dbform::PgStateStore(database_url, "default").read()->serial == serial);
    CHECK(sb.count(kUpdatePassword) == 0);
    admin.exec_script("DROP TABLE dbform_secrets; DROP FUNCTION IF EXISTS copy_secret()");
  }

  // None left: the writer makes it, its own, and moves the password there.
  RunResult rotated = main_branch.run({"rotate-password", "orders"});
  INFO(rotated.describe());
  REQUIRE(rotated.exit_code == 0);
  CHECK(admin.exec("SELECT pg_get_userbyid(relowner) FROM pg_class WHERE oid = 'dbform_secrets'::regclass").rows[0][0] ==
        applier);
  const std::string rotated_password = main_branch.run({"output", "orders.password"}).out;
  CHECK(rotated_password != password + "\n");
  CHECK(!contains(documents_and_journal(admin), password));
  RunResult hidden = pr.run({"output", "orders.password"});
  CHECK(hidden.exit_code == 1);
  CHECK(contains(hidden.err, "dbform_secrets"));

  // Owned by the database's owner (who may make it where the writer may not, as docs/state.md
  // says): accepted.
  admin.exec_script("ALTER TABLE dbform_secrets OWNER TO CURRENT_USER; "
                    "GRANT SELECT, INSERT, UPDATE, DELETE ON dbform_secrets TO " + applier);
  RunResult by_owner = main_branch.run({"rotate-password", "orders"});
  INFO(by_owner.describe());
  CHECK(by_owner.exit_code == 0);
}
