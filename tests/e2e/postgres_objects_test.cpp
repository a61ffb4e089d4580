// The roles, schemas, extensions and grants inside a service of `dbform sim --postgres`, made
// through dbform's SQL layer (src/sql/objects.h) as the service's own tsdbadmin, who is not a
// superuser: what apply's step for a service's objects runs, against the simulated service as it is.
#include "postgres_sim.h"
#include "sql/objects.h"
#include "sql/session.h"

using namespace e2e;

namespace {

// A service's objects as a team declares them: an application role in a group role that owns a
// schema, the group's privileges on it, its tables and its sequences, and two extensions
// (pg_stat_statements, which the service has already; citext, which tsdbadmin makes).
dbform::DbObjects objects_example(int version) {
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

// Connects through libpq; each session loses the answer to the step's COMMIT (the one sent watched,
// exec_limited) once, as a connection dropped at that moment would: after the server committed
// (`committed`), or before it got there (the transaction is rolled back instead).
class LostCommitConnector : public dbform::SqlConnector {
 public:
  explicit LostCommitConnector(bool committed) : committed_(committed) {}
  std::unique_ptr<dbform::SqlSession> connect(const dbform::ConnectTarget& target,
                                              const dbform::SqlSessionOptions& options) const override {
    return std::make_unique<Session>(dbform::libpq_connector()->connect(target, options), committed_, lost_);
  }
  int lost() const { return lost_; }

 private:
  class Session : public dbform::SqlSession {
   public:
    Session(std::unique_ptr<dbform::SqlSession> inner, bool committed, int& lost)
        : inner_(std::move(inner)), committed_(committed), lost_(lost) {}
    dbform::SqlResult exec(const std::string& sql) override { return inner_->exec(sql); }
    dbform::SqlResult exec_params(const std::string& sql, const std::vector<std::string>& params) override {
      return inner_->exec_params(sql, params);
    }
    dbform::SqlResult exec_limited(const std::string& sql, const dbform::StatementLimit& limit) override {
      if (sql != "COMMIT" || lost_ > 0) return inner_->exec_limited(sql, limit);
      ++lost_;
      inner_->exec(committed_ ? "COMMIT" : "ROLLBACK");
      dbform::SqlResult r;
      r.error.message = "server closed the connection unexpectedly";  // no SQLSTATE: libpq's own
      return r;
    }
    std::string password_verifier(const std::string& role, const std::string& password) override {
      return inner_->password_verifier(role, password);
    }

   private:
    std::unique_ptr<dbform::SqlSession> inner_;
    bool committed_;
    int& lost_;
  };
  bool committed_;
  mutable int lost_ = 0;
};

// The service `orders` made through `dbform sim --postgres`, and its tsdbadmin's login.
dbform::ConnectTarget made_service(Sandbox& sb) {
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
  return admin;
}

}  // namespace

TEST_CASE("postgres: a service's objects step reads first: nothing is made twice and a lost COMMIT is decided by the catalogs",
          "[e2e][postgres]") {
  Sandbox sb;
  PostgresSim sim(sb);
  const dbform::ConnectTarget admin = made_service(sb);
  dbform::ObjectsRequest request;
  request.desired = objects_example(0);
  for (auto& g : request.desired.grants) g.privileges = {"ALL"};  // expanded by the server's version
  request.passwords["app"] = "app-password-" + std::string(32, 'y');
  dbform::SqlSessionOptions options;
  options.statement_timeout = std::chrono::seconds(20);

  SECTION("a second run finds everything made and sends nothing") {
    const dbform::ObjectsRun first = dbform::run_objects(*dbform::libpq_connector(), admin, request, options, {});
    INFO(first.outcome.object << " (" << first.outcome.kind << "): " << first.outcome.message);
    REQUIRE(first.outcome.result == dbform::ObjectsOutcome::Result::Applied);
    CHECK(first.statements > 0);
    CHECK(first.observed.roles.size() == 2);
    request.passwords.clear();
    const dbform::ObjectsRun second = dbform::run_objects(*dbform::libpq_connector(), admin, request, options, {});
    CHECK(second.outcome.result == dbform::ObjectsOutcome::Result::Applied);
    CHECK(second.statements == 0);
    CHECK(second.observed == first.observed);
  }
  SECTION("COMMIT made, its answer lost: found made by a new connection's read") {
    LostCommitConnector connector(/*committed=*/true);
    const dbform::ObjectsRun run = dbform::run_objects(connector, admin, request, options, {});
    INFO(run.outcome.message);
    CHECK(connector.lost() == 1);
    CHECK(run.outcome.result == dbform::ObjectsOutcome::Result::Applied);
    CHECK(run.found_committed);
    CHECK(run.observed.roles.size() == 2);
    request.passwords.clear();
    CHECK(dbform::run_objects(*dbform::libpq_connector(), admin, request, options, {}).statements == 0);
  }
  SECTION("COMMIT never made, its answer lost: failed, nothing made, the next run makes it") {
    LostCommitConnector connector(/*committed=*/false);
    const dbform::ObjectsRun run = dbform::run_objects(connector, admin, request, options, {});
    CHECK(connector.lost() == 1);
    CHECK(run.outcome.result == dbform::ObjectsOutcome::Result::Failed);
    CHECK_THAT(run.outcome.message, Catch::Contains("the catalogs show the changes were not made"));
    CHECK(run.observed.roles.empty());
    CHECK_FALSE(run.found_committed);
    const dbform::ObjectsRun next = dbform::run_objects(*dbform::libpq_connector(), admin, request, options, {});
    CHECK(next.outcome.result == dbform::ObjectsOutcome::Result::Applied);
    CHECK(next.statements > 0);
  }
}

TEST_CASE("postgres: a service's tsdbadmin makes an app role a group role a schema and grants in one transaction and the app role can do exactly that",
          "[e2e][postgres]") {
  Sandbox sb;
  PostgresSim sim(sb);
  const dbform::ConnectTarget admin = made_service(sb);
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
  const dbform::DbObjects desired = objects_example(version);

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
