// SPEC section 14's objects inside a service of `dbform sim --postgres`, made through dbform's SQL
// layer (src/sql/objects.h) as the service's own tsdbadmin, who is not a superuser: what apply's
// step for a service's objects runs, against the simulated service as it is.
#include "postgres_sim.h"
#include "sql/objects.h"
#include "sql/session.h"

using namespace e2e;

namespace {

// The SPEC's example: an application role in a group role that owns a schema, the group's
// privileges on it, its tables and its sequences, and two extensions (pg_stat_statements, which
// the service has already; citext, which tsdbadmin makes).
dbform::DbObjects spec_example(int version) {
  using dbform::DbGrant;
  dbform::DbRole app;
  app.name = "app";
  app.login = true;
  app.connection_limit = 20;
  app.member_of = {"orders_rw"};
  app.settings = {{"statement_timeout", "30s"}};
  dbform::DbRole group;
  group.name = "orders_rw";
  dbform::DbObjects o;
  o.roles = {app, group};
  o.schemas = {{"orders", "orders_rw"}};
  o.extensions = {{"pg_stat_statements", ""}, {"citext", ""}};
  auto grant = [&](DbGrant::On on, std::vector<std::string> privileges) {
    DbGrant g;
    g.role = "orders_rw";
    g.schema = "orders";
    g.on = on;
    g.privileges = dbform::normalize_privileges(on, privileges, version);
    return g;
  };
  o.grants = {grant(DbGrant::On::Schema, {"USAGE"}),
              grant(DbGrant::On::AllTables, {"SELECT", "INSERT", "UPDATE", "DELETE"}),
              grant(DbGrant::On::AllSequences, {"USAGE", "SELECT"})};
  return o;
}

}  // namespace

TEST_CASE("postgres: a service's tsdbadmin makes SPEC 14's roles and grants in one transaction and the app role can do exactly that",
          "[e2e][postgres]") {
  Sandbox sb;
  PostgresSim sim(sb);
  sb.write("m.yaml", manifest({}, {service_yaml("orders")}));
  REQUIRE(sb.apply({"-f", "m.yaml"}).exit_code == 0);
  auto output = [&](const std::string& field) {
    RunResult r = sb.run({"output", service_address("orders") + "." + field});
    REQUIRE(r.exit_code == 0);
    return r.out.substr(0, r.out.find('\n'));
  };
  dbform::ConnectTarget admin;
  admin.host = output("host");
  admin.port = std::stoi(output("port"));
  admin.password = output("password");
  dbform::SqlSessionOptions options;
  options.statement_timeout = std::chrono::seconds(20);
  auto session = dbform::libpq_connector()->connect(admin, options);
  // As on the real service: tsdbadmin may create roles and owns tsdb, and is no superuser.
  dbform::SqlResult who = session->exec(
      "SELECT r.rolsuper::text, r.rolcreaterole::text, pg_get_userbyid(d.datdba) FROM pg_roles r, pg_database d "
      "WHERE r.rolname = current_user AND d.datname = current_database()");
  REQUIRE(who.ok);
  CHECK(who.rows.at(0) == dbform::SqlRow{"false", "true", "tsdbadmin"});
  const int version = dbform::server_version(*session);
  const dbform::DbObjects desired = spec_example(version);

  dbform::ObjectsContext ctx;
  ctx.server_version_num = version;
  const std::string app_password = "app-password-" + std::string(32, 'x');
  ctx.verifiers["app"] = session->password_verifier("app", app_password);

  SECTION("applied, the catalogs read back as declared, and the app role has what the group was granted") {
    const dbform::DbObjects before = dbform::read_objects(*session, desired);
    // pg_stat_statements is the service's already (tsdbadmin could not make it): found, not made.
    REQUIRE(before.extensions.size() == 1);
    CHECK(before.extensions[0].name == "pg_stat_statements");
    const auto statements = dbform::statements_for(desired, before, {}, ctx);
    for (const auto& s : statements) CHECK(s.object != "extensions/pg_stat_statements");
    const dbform::ObjectsOutcome applied = dbform::apply_objects(*session, statements, {});
    INFO(applied.object << " (" << applied.kind << "): " << applied.message);
    REQUIRE(applied.result == dbform::ObjectsOutcome::Result::Applied);
    const dbform::DbObjects after = dbform::read_objects(*session, desired);
    CHECK(after == desired);
    CHECK(dbform::statements_for(desired, after, {}, {"tsdbadmin", version, {}}).empty());  // no password to set

    // A table tsdbadmin makes later in the schema: the default privileges reach it.
    REQUIRE(session->exec("CREATE TABLE orders.items (id int); INSERT INTO orders.items VALUES (1)").ok);
    const std::string as_app = "host=" + admin.host + " port=" + std::to_string(admin.port) +
                               " user=app dbname=tsdb sslmode=require password=" + app_password;
    CHECK(sql(as_app, "SHOW statement_timeout").value == "30s");
    CHECK(sql(as_app, "INSERT INTO orders.items VALUES (2)").ok);
    CHECK(sql(as_app, "SELECT count(*) FROM orders.items").value == "2");
    CHECK_FALSE(sql(as_app, "TRUNCATE orders.items").ok);  // not granted
    // Nothing outside its grants: a table of tsdbadmin's in public.
    REQUIRE(session->exec("CREATE TABLE public.admin_only (v int)").ok);
    CHECK_FALSE(sql(as_app, "SELECT count(*) FROM public.admin_only").ok);
    CHECK_FALSE(sql(as_app.substr(0, as_app.rfind("password=")) + "password=wrong", "SELECT 1").ok);
  }

  SECTION("an extension tsdbadmin may not make rolls back the whole step and is named") {
    dbform::DbObjects with_untrusted = desired;
    with_untrusted.extensions.push_back({"file_fdw", ""});  // not trusted: a superuser's
    const dbform::DbObjects before = dbform::read_objects(*session, with_untrusted);
    const dbform::ObjectsOutcome failed =
        dbform::apply_objects(*session, dbform::statements_for(with_untrusted, before, {}, ctx), {});
    CHECK(failed.result == dbform::ObjectsOutcome::Result::Failed);
    CHECK(failed.object == "extensions/file_fdw");
    CHECK(failed.kind == "CREATE EXTENSION");
    CHECK_THAT(failed.message, Catch::Contains("permission denied"));
    CHECK(failed.message.find(app_password) == std::string::npos);
    // Nothing of that transaction is left: no role, no schema.
    const dbform::DbObjects after = dbform::read_objects(*session, with_untrusted);
    CHECK(after.roles.empty());
    CHECK(after.schemas.empty());
  }
}
