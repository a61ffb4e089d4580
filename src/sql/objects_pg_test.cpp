// The database objects' SQL against a real PostgreSQL (the `pg` fixture's server), as the service
// runs it: the admin is not a superuser, only CREATEROLE and the owner of its database.
#include <memory>
#include <string>

#include <catch2/catch.hpp>

#include "pg/test_server.h"
#include "sql/objects.h"
#include "sql/session.h"
#include "util/error.h"

using namespace dbform;

namespace {

// The test server's address with another user, database and password.
ConnectTarget pg_target(const std::string& user, const std::string& database, const std::string& password) {
  const std::string url = pgtest::server_url();
  const size_t at = url.find('@'), colon = url.find(':', at), slash = url.find('/', at);
  ConnectTarget t;
  t.host = url.substr(at + 1, colon - at - 1);
  t.port = std::stoi(url.substr(colon + 1, slash - colon - 1));
  t.user = user;
  t.database = database;
  t.password = password;
  return t;
}

std::unique_ptr<SqlSession> superuser_session(const std::string& database = "postgres") {
  return libpq_connector()->connect(pg_target("dbform", database, pgtest::server_password()), {});
}

void run_ok(SqlSession& session, const std::string& sql) {
  SqlResult r = session.exec(sql);
  INFO(sql);
  if (!r.ok) FAIL(r.error.message);
}

bool available(SqlSession& session, const std::string& extension) {
  SqlResult r = session.exec_params("SELECT 1 FROM pg_available_extensions WHERE name = $1", {extension});
  return r.ok && !r.rows.empty();
}

// Forwards to a real session and keeps every text sent: what the server (and its log) saw.
class RecordingSession : public SqlSession {
 public:
  explicit RecordingSession(SqlSession& inner) : inner_(inner) {}
  SqlResult exec(const std::string& sql) override {
    sent.push_back(sql);
    return inner_.exec(sql);
  }
  SqlResult exec_params(const std::string& sql, const std::vector<std::string>& params) override {
    sent.push_back(sql);
    for (const auto& p : params) sent.push_back(p);
    return inner_.exec_params(sql, params);
  }
  SqlResult exec_limited(const std::string& sql, const StatementLimit& limit) override {
    sent.push_back(sql);
    return inner_.exec_limited(sql, limit);
  }
  std::string password_verifier(const std::string& role, const std::string& password) override {
    return inner_.password_verifier(role, password);
  }
  std::vector<std::string> sent;

 private:
  SqlSession& inner_;
};

// Drops what a test made on the shared server, whatever the test's outcome.
struct MadeOnServer {
  std::string database;
  std::vector<std::string> roles;
  ~MadeOnServer() {
    try {
      auto super = superuser_session();
      if (!database.empty()) super->exec("DROP DATABASE IF EXISTS " + quote_ident(database) + " WITH (FORCE)");
      for (auto it = roles.rbegin(); it != roles.rend(); ++it) super->exec("DROP ROLE IF EXISTS " + quote_ident(*it));
    } catch (const std::exception&) {
      // the server is gone: nothing left to drop
    }
  }
};

std::string outcome_text(const ObjectsOutcome& o) { return o.object + " (" + o.kind + "): " + o.message; }

std::vector<std::string> pg_sql_of(const std::vector<DbStatement>& statements) {
  std::vector<std::string> out;
  for (const auto& s : statements) out.push_back(s.sql);
  return out;
}

}  // namespace

TEST_CASE("a service's objects applied by a non-superuser admin read back as declared and drift is put back", "[sql][objects][pg]") {
  MadeOnServer made;
  const std::string admin = pgtest::unique_name("tsdbadmin"), admin_password = pgtest::unique_name("pw-admin");
  made.database = pgtest::unique_name("objects");
  made.roles.push_back(admin);
  {
    auto super = superuser_session();
    run_ok(*super, "CREATE ROLE " + quote_ident(admin) + " LOGIN CREATEROLE PASSWORD " + quote_literal(admin_password));
    run_ok(*super, "CREATE DATABASE " + quote_ident(made.database) + " OWNER " + quote_ident(admin));
  }
  SqlSessionOptions options;
  options.statement_timeout = std::chrono::seconds(20);
  auto admin_session = libpq_connector()->connect(pg_target(admin, made.database, admin_password), options);
  RecordingSession session(*admin_session);
  const int version = server_version(session);
  CHECK(version >= 150000);

  // Hostile names on purpose: a quote and a space in the group role's and the schema's.
  DbRole group;
  group.name = pgtest::unique_name("rw") + " \"q\"";
  DbRole app;
  app.name = pgtest::unique_name("app");
  app.login = true;
  app.connection_limit = 5;
  app.member_of = {group.name};
  app.settings = {{"statement_timeout", "30s"}};
  made.roles.push_back(group.name);
  made.roles.push_back(app.name);
  const std::string schema = "orders \"x\"";
  DbObjects desired;
  desired.roles = {app, group};
  desired.schemas = {{schema, group.name}};
  auto super_db = superuser_session(made.database);
  const bool citext = available(*super_db, "citext");  // trusted: the admin may create it
  if (citext) desired.extensions.push_back({"citext", ""});
  else WARN("citext is not installed on this server: the extension part is not tested");
  // pg_stat_statements is not a trusted extension: only a superuser makes it, as the service has
  // it made already. Declared, it must be found, not made again.
  if (available(*super_db, "pg_stat_statements")) {
    run_ok(*super_db, "CREATE EXTENSION pg_stat_statements");
    desired.extensions.push_back({"pg_stat_statements", ""});
  } else {
    WARN("pg_stat_statements is not installed on this server: its part is not tested");
  }
  using On = DbGrant::On;
  auto grant = [&](On on, std::vector<std::string> privileges) {
    DbGrant g;
    g.role = group.name;
    g.schema = schema;
    g.on = on;
    g.privileges = normalize_privileges(on, privileges, version);
    return g;
  };
  desired.grants = {grant(On::Schema, {"USAGE"}), grant(On::AllTables, {"SELECT", "INSERT", "UPDATE", "DELETE"}),
                    grant(On::AllSequences, {"USAGE", "SELECT"})};

  const std::string app_password = "pw-" + pgtest::unique_name("app-password-of-32-characters");
  ObjectsContext ctx;
  ctx.admin = admin;
  ctx.server_version_num = version;
  ctx.verifiers[app.name] = session.password_verifier(app.name, app_password);
  CHECK_THAT(ctx.verifiers[app.name], Catch::StartsWith("SCRAM-SHA-256$4096:"));

  const DbObjects before = read_objects(session, desired);
  CHECK(before.roles.empty());
  CHECK(before.schemas.empty());
  CHECK(before.grants.empty());
  CHECK(before.facts.admin == admin);
  const auto statements = statements_for(desired, before, {}, ctx);
  for (const auto& s : statements)
    if (s.object == "extensions/pg_stat_statements") FAIL("pg_stat_statements is there already: " + s.sql);
  ObjectsOutcome applied = apply_objects(session, statements, {});
  INFO(outcome_text(applied));
  REQUIRE(applied.result == ObjectsOutcome::Result::Applied);

  SECTION("the server keeps a SCRAM verifier and was never sent the password") {
    size_t secret = 0;
    for (const auto& s : statements)
      if (s.secret) {
        ++secret;
        CHECK_THAT(s.sql, Catch::Contains("SCRAM-SHA-256$"));
      }
    CHECK(secret == 1);
    for (const auto& text : session.sent) CHECK(text.find(app_password) == std::string::npos);
    // pg_authid is the superuser's: the verifier is checked by logging in with the password.
    auto as_app = libpq_connector()->connect(pg_target(app.name, made.database, app_password), {});
    SqlResult timeout = as_app->exec("SHOW statement_timeout");
    REQUIRE(timeout.ok);
    CHECK(timeout.rows[0][0].value_or("") == "30s");
    CHECK_THROWS_AS(libpq_connector()->connect(pg_target(app.name, made.database, "not-the-password"), {}), Error);
  }

  SECTION("the catalogs show what was declared and drift is put back by exactly its statement") {
    const DbObjects after = read_objects(session, desired);
    CHECK(after.roles == desired.roles);
    CHECK(after.schemas == desired.schemas);
    CHECK(after.extensions == desired.extensions);
    CHECK(after.grants == desired.grants);
    CHECK(after == desired);
    // The admin made itself a member of the schema's owner, as default privileges for it need.
    CHECK(after.facts.admin_member_of == std::vector<std::string>{group.name});
    CHECK(statements_for(desired, after, {}, {admin, version, {}}).empty());

    // Tables made later by the admin and by the schema's owner get the privileges by default.
    const std::string items = quote_ident(schema) + ".items";
    run_ok(session, "CREATE TABLE " + items + " (id serial PRIMARY KEY, name text)");
    run_ok(session, "SET ROLE " + quote_ident(group.name));
    run_ok(session, "CREATE TABLE " + quote_ident(schema) + ".owned (v int)");
    run_ok(session, "RESET ROLE");
    const DbObjects with_tables = read_objects(session, desired);
    CHECK(with_tables == desired);
    CHECK(statements_for(desired, with_tables, {}, {admin, version, {}}).empty());

    // As the app: what was granted, and not more (a member of the schema's owner may create in it).
    run_ok(session, "CREATE TABLE public.not_granted (v int)");
    {
      auto as_app = libpq_connector()->connect(pg_target(app.name, made.database, app_password), {});
      run_ok(*as_app, "INSERT INTO " + items + " (name) VALUES ('first')");
      run_ok(*as_app, "UPDATE " + items + " SET name = 'second'");
      run_ok(*as_app, "INSERT INTO " + quote_ident(schema) + ".owned VALUES (1)");
      CHECK_FALSE(as_app->exec("TRUNCATE " + items).ok);
      CHECK_FALSE(as_app->exec("SELECT * FROM public.not_granted").ok);
    }

    // A privilege revoked outside dbform shows missing and is granted back, by one statement.
    run_ok(session, "REVOKE UPDATE ON " + items + " FROM " + quote_ident(group.name));
    const DbObjects revoked = read_objects(session, desired);
    CHECK(revoked.grants[1].privileges == std::vector<std::string>{"DELETE", "INSERT", "SELECT"});
    const auto back = statements_for(desired, revoked, {}, {admin, version, {}});
    CHECK(pg_sql_of(back) == std::vector<std::string>{"GRANT UPDATE ON ALL TABLES IN SCHEMA " + quote_ident(schema) +
                                                      " TO " + quote_ident(group.name)});
    REQUIRE(apply_objects(session, back, {}).result == ObjectsOutcome::Result::Applied);
    CHECK(read_objects(session, desired) == desired);

    // One given outside shows extra and is revoked: each grant is authoritative.
    run_ok(session, "GRANT TRUNCATE ON " + items + " TO " + quote_ident(group.name));
    const auto extra = statements_for(desired, read_objects(session, desired), {}, {admin, version, {}});
    CHECK(pg_sql_of(extra) == std::vector<std::string>{"REVOKE TRUNCATE ON ALL TABLES IN SCHEMA " +
                                                       quote_ident(schema) + " FROM " + quote_ident(group.name)});
    REQUIRE(apply_objects(session, extra, {}).result == ObjectsOutcome::Result::Applied);
    const DbObjects settled = read_objects(session, desired);
    CHECK(statements_for(desired, settled, {}, {admin, version, {}}).empty());

    // Deletes PostgreSQL would refuse without CASCADE are refused naming what blocks them.
    DbObjects schema_only;
    schema_only.schemas = desired.schemas;
    const auto not_empty = delete_refusals(settled, schema_only, ctx);
    REQUIRE(not_empty.size() == 1);
    CHECK_THAT(not_empty[0].reason, Catch::Contains("items") && Catch::Contains("owned"));
    DbObjects group_only;
    group_only.roles = {group};
    const auto owner = delete_refusals(settled, group_only, ctx);
    REQUIRE_FALSE(owner.empty());
    CHECK(owner[0].object == "roles/" + group.name);
    CHECK_THAT(owner[0].reason, Catch::Contains("it owns") && Catch::Contains("schema"));
    if (citext) {
      run_ok(session, "CREATE TABLE " + quote_ident(schema) + ".names (n citext)");
      DbObjects citext_only;
      citext_only.extensions = {{"citext", ""}};
      const auto used = delete_refusals(read_objects(session, desired), citext_only, ctx);
      REQUIRE(used.size() == 1);
      CHECK_THAT(used[0].reason, Catch::Contains("other objects depend on it") && Catch::Contains("names"));
    }

    // A role that owns nothing and holds nothing is dropped, by the admin that made it.
    DbObjects app_only;
    app_only.roles = {app};
    const auto drop = statements_for({}, settled, app_only, ctx);
    CHECK(pg_sql_of(drop) == std::vector<std::string>{"DROP ROLE " + quote_ident(app.name)});
    REQUIRE(apply_objects(session, drop, {}).result == ObjectsOutcome::Result::Applied);
    CHECK(read_objects(session, app_only).roles.empty());
  }

  SECTION("a failing statement rolls every change of the transaction back") {
    DbObjects more = desired;
    DbRole extra_role;
    extra_role.name = pgtest::unique_name("never");
    made.roles.push_back(extra_role.name);
    more.roles.push_back(extra_role);
    more.schemas.push_back({"never_made", admin});
    more.extensions.push_back({"dbform_no_such_extension", ""});
    const auto statements_more = statements_for(more, read_objects(session, more), {}, {admin, version, {}});
    REQUIRE(statements_more.size() == 3);
    const ObjectsOutcome failed = apply_objects(session, statements_more, {});
    CHECK(failed.result == ObjectsOutcome::Result::Failed);
    CHECK(failed.object == "extensions/dbform_no_such_extension");
    CHECK(failed.kind == "CREATE EXTENSION");
    CHECK_THAT(failed.message, Catch::Contains("dbform_no_such_extension"));
    CHECK(failed.applied == 2);
    const DbObjects after = read_objects(session, more);
    CHECK(after.roles.size() == desired.roles.size());
    CHECK(after.schemas.size() == 1);
    auto super = superuser_session();
    SqlResult role = super->exec_params("SELECT 1 FROM pg_roles WHERE rolname = $1", {extra_role.name});
    REQUIRE(role.ok);
    CHECK(role.rows.empty());
    // The session is usable again: the transaction was ended.
    CHECK(read_objects(session, desired) == desired);
  }
}

TEST_CASE("role settings round-trip as PostgreSQL stores them and roles are told apart whatever the quoting mode", "[sql][objects][pg]") {
  MadeOnServer made;
  auto session = superuser_session();
  SqlResult who = session->exec("SELECT current_user");
  REQUIRE(who.ok);
  ObjectsContext ctx;
  ctx.admin = who.rows[0][0].value_or("");
  ctx.server_version_num = server_version(*session);
  DbRole role;
  role.name = pgtest::unique_name("pgx");  // like pg_ but not it
  made.roles.push_back(role.name);
  // timezone is kept as TimeZone; a list parameter as its elements, each quoted as an identifier.
  role.settings = {{"timezone", "UTC"}, {"search_path", "\"$user\", Orders"}, {"statement_timeout", "30s"}};
  DbObjects desired;
  desired.roles = {role};
  const ObjectsOutcome applied = apply_objects(*session, statements_for(desired, read_objects(*session, desired), {}, ctx), {});
  INFO(outcome_text(applied));
  REQUIRE(applied.result == ObjectsOutcome::Result::Applied);
  SqlResult stored = session->exec_params(
      "SELECT c FROM pg_db_role_setting s JOIN pg_roles r ON r.oid = s.setrole CROSS JOIN LATERAL unnest(s.setconfig) c "
      "WHERE r.rolname = $1 AND s.setdatabase = 0 ORDER BY 1", {role.name});
  REQUIRE(stored.ok);
  std::vector<std::string> settings;
  for (const auto& row : stored.rows) settings.push_back(row[0].value_or(""));
  CHECK(settings == std::vector<std::string>{"TimeZone=UTC", "search_path=\"$user\", orders", "statement_timeout=30s"});
  const DbObjects after = read_objects(*session, desired);
  CHECK(after == desired);
  CHECK(statements_for(desired, after, {}, ctx).empty());

  // With standard_conforming_strings off a backslash in a plain literal is an escape: the
  // catalogs' queries must not depend on it.
  run_ok(*session, "SET standard_conforming_strings = off");
  const DbObjects old_mode = read_objects(*session, desired);
  CHECK(old_mode.facts.builtin_roles.empty());
  CHECK_NOTHROW(statements_for(desired, old_mode, {}, ctx));
}

TEST_CASE("a privilege given outside WITH GRANT OPTION reads as drift and loses the option", "[sql][objects][pg]") {
  MadeOnServer made;
  made.database = pgtest::unique_name("grantopt");
  superuser_session()->exec("CREATE DATABASE " + quote_ident(made.database));
  auto session = superuser_session(made.database);
  ObjectsContext ctx;
  ctx.admin = session->exec("SELECT current_user").rows.at(0).at(0).value_or("");
  ctx.server_version_num = server_version(*session);
  DbRole role;
  role.name = pgtest::unique_name("opt");
  made.roles.push_back(role.name);
  DbObjects desired;
  desired.roles = {role};
  desired.schemas = {{"s", ctx.admin}};
  DbGrant g;
  g.role = role.name;
  g.schema = "s";
  g.on = DbGrant::On::AllTables;
  g.privileges = {"SELECT"};
  DbGrant usage = g;
  usage.on = DbGrant::On::Schema;
  usage.privileges = {"USAGE"};
  desired.grants = {usage, g};
  REQUIRE(apply_objects(*session, statements_for(desired, read_objects(*session, desired), {}, ctx), {}).result ==
          ObjectsOutcome::Result::Applied);
  run_ok(*session, "CREATE TABLE s.t (v int)");
  REQUIRE(read_objects(*session, desired) == desired);
  run_ok(*session, "GRANT USAGE ON SCHEMA s TO " + quote_ident(role.name) + " WITH GRANT OPTION");
  run_ok(*session, "GRANT SELECT ON s.t TO " + quote_ident(role.name) + " WITH GRANT OPTION");
  const DbObjects drifted = read_objects(*session, desired);
  CHECK_FALSE(drifted == desired);
  const ObjectsOutcome back = apply_objects(*session, statements_for(desired, drifted, {}, ctx), {});
  INFO(outcome_text(back));
  REQUIRE(back.result == ObjectsOutcome::Result::Applied);
  const DbObjects settled = read_objects(*session, desired);
  CHECK(settled == desired);
  CHECK(statements_for(desired, settled, {}, ctx).empty());
}
