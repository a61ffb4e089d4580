// The database objects' SQL over a fake session: quoting, privileges by server version, the
// statements in dependency order, authoritative grants, refusals of deletes, one transaction.
#include <chrono>
#include <functional>

#include <catch2/catch.hpp>

#include "sql/fake_session.h"
#include "sql/objects.h"
#include "util/error.h"

using namespace dbform;

namespace {

using On = DbGrant::On;

DbGrant grant_of(const std::string& role, const std::string& schema, On on, std::vector<std::string> privileges,
                 const std::string& object = "") {
  DbGrant g;
  g.role = role;
  g.schema = schema;
  g.on = on;
  g.object = object;
  g.privileges = normalize_privileges(on, privileges, 150000);
  return g;
}

// A team's usual objects: an app login role in a group role owning a schema, pg_stat_statements, grants.
DbObjects orders_objects() {
  DbObjects d;
  DbRole app;
  app.name = "app";
  app.login = true;
  app.connection_limit = 20;
  app.member_of = {"orders_rw"};
  app.settings = {{"statement_timeout", "30s"}};
  DbRole rw;
  rw.name = "orders_rw";
  d.roles = {app, rw};
  d.schemas = {{"orders", "orders_rw"}};
  d.extensions = {{"pg_stat_statements", ""}};
  d.grants = {grant_of("orders_rw", "orders", On::Schema, {"usage"}),
              grant_of("orders_rw", "orders", On::AllTables, {"SELECT", "INSERT", "UPDATE", "DELETE"}),
              grant_of("orders_rw", "orders", On::AllSequences, {"USAGE", "SELECT"})};
  return d;
}

std::vector<std::string> sql_of(const std::vector<DbStatement>& statements) {
  std::vector<std::string> out;
  for (const auto& s : statements) out.push_back(s.sql);
  return out;
}

std::string objects_error(const std::function<void()>& f) {
  try {
    f();
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST_CASE("names and values are quoted as PostgreSQL's quote_ident and quote_literal do", "[sql][objects]") {
  CHECK(quote_ident("app") == "\"app\"");
  CHECK(quote_ident("a\"b") == "\"a\"\"b\"");
  CHECK(quote_ident("x\"; DROP ROLE tsdbadmin; --") == "\"x\"\"; DROP ROLE tsdbadmin; --\"");
  CHECK(quote_literal("30s") == "'30s'");
  CHECK(quote_literal("it's") == "'it''s'");
  CHECK(quote_literal("a\\'b") == "E'a\\\\''b'");  // read alike whatever standard_conforming_strings says
  CHECK_THROWS_AS(quote_ident(std::string("a\0b", 3)), Error);
  CHECK(text_array({"a", "b\"c", "d\\e"}) == "{\"a\",\"b\\\"c\",\"d\\\\e\"}");
}

TEST_CASE("ALL means what the server's version says: MAINTAIN on tables from PostgreSQL 17", "[sql][objects]") {
  CHECK(normalize_privileges(On::AllTables, {"ALL"}, 150008) ==
        std::vector<std::string>{"DELETE", "INSERT", "REFERENCES", "SELECT", "TRIGGER", "TRUNCATE", "UPDATE"});
  CHECK(normalize_privileges(On::Table, {"all"}, 170002) ==
        std::vector<std::string>{"DELETE", "INSERT", "MAINTAIN", "REFERENCES", "SELECT", "TRIGGER", "TRUNCATE", "UPDATE"});
  CHECK(normalize_privileges(On::Schema, {"ALL", "usage"}, 150008) == std::vector<std::string>{"CREATE", "USAGE"});
  CHECK(normalize_privileges(On::AllSequences, {"select", "USAGE", "SELECT"}, 0) ==
        std::vector<std::string>{"SELECT", "USAGE"});
  CHECK(privilege_error(On::Table, "MAINTAIN", 0).empty());
  CHECK(privilege_error(On::Table, "maintain", 170000).empty());
}

TEST_CASE("an unknown privilege for the object type is refused naming the allowed ones", "[sql][objects]") {
  CHECK(privilege_error(On::Schema, "TRUNCATE", 150000) ==
        "'TRUNCATE' is not a privilege on schemas: allowed are USAGE, CREATE or ALL");
  CHECK(privilege_error(On::AllSequences, "INSERT", 150000) ==
        "'INSERT' is not a privilege on sequences: allowed are USAGE, SELECT, UPDATE or ALL");
  const std::string maintain = privilege_error(On::AllTables, "MAINTAIN", 150008);
  CHECK_THAT(maintain, Catch::Contains("before PostgreSQL 17") && Catch::Contains("150008") &&
                           Catch::Contains("SELECT, INSERT, UPDATE, DELETE, TRUNCATE, REFERENCES, TRIGGER or ALL"));
  CHECK_THAT(objects_error([] { normalize_privileges(On::Table, {"SELECT", "EXECUTE"}, 0); }),
             Catch::Contains("'EXECUTE' is not a privilege on tables"));
}

TEST_CASE("a new database's objects are made in dependency order", "[sql][objects]") {
  ObjectsContext ctx;
  ctx.server_version_num = 150008;
  ctx.verifiers["app"] = "SCRAM-SHA-256$4096:c2FsdA==$a:b";
  const auto statements = statements_for(orders_objects(), {}, {}, ctx);
  CHECK(sql_of(statements) == std::vector<std::string>{
      "CREATE ROLE \"app\" LOGIN CONNECTION LIMIT 20 PASSWORD 'SCRAM-SHA-256$4096:c2FsdA==$a:b'",
      "ALTER ROLE \"app\" SET \"statement_timeout\" TO '30s'",
      "CREATE ROLE \"orders_rw\" NOLOGIN CONNECTION LIMIT -1",
      "GRANT \"orders_rw\" TO \"app\"",
      "GRANT \"orders_rw\" TO \"tsdbadmin\"",
      "CREATE SCHEMA \"orders\" AUTHORIZATION \"orders_rw\"",
      "CREATE EXTENSION \"pg_stat_statements\"",
      "GRANT USAGE ON SCHEMA \"orders\" TO \"orders_rw\"",
      "GRANT DELETE, INSERT, SELECT, UPDATE ON ALL TABLES IN SCHEMA \"orders\" TO \"orders_rw\"",
      "GRANT SELECT, USAGE ON ALL SEQUENCES IN SCHEMA \"orders\" TO \"orders_rw\"",
      "ALTER DEFAULT PRIVILEGES FOR ROLE \"tsdbadmin\" IN SCHEMA \"orders\" GRANT DELETE, INSERT, SELECT, UPDATE ON TABLES TO \"orders_rw\"",
      "ALTER DEFAULT PRIVILEGES FOR ROLE \"tsdbadmin\" IN SCHEMA \"orders\" GRANT SELECT, USAGE ON SEQUENCES TO \"orders_rw\""});
  // The schema's owner makes its own tables, holding every privilege on them: only the admin's
  // future tables need default privileges.
  REQUIRE(statements.size() == 12);
  // Each says its object and kind; only the one with the verifier is secret.
  CHECK(statements[0].object == "roles/app");
  CHECK(statements[0].kind == "CREATE ROLE");
  CHECK(statements[0].secret);
  for (size_t i = 1; i < statements.size(); ++i) CHECK_FALSE(statements[i].secret);
  CHECK(statements[4].object == "roles/orders_rw");
  CHECK(statements[8].object == "grants/orders_rw/orders/tables");
  CHECK(statements[10].kind == "ALTER DEFAULT PRIVILEGES");
  CHECK(statements[11].object == "grants/orders_rw/orders/sequences");
}

TEST_CASE("objects already as declared need no statement", "[sql][objects]") {
  DbObjects observed = orders_objects();
  observed.facts.admin_member_of = {"orders_rw"};
  CHECK(statements_for(orders_objects(), observed, {}, {}).empty());
}

TEST_CASE("hostile names and values are quoted in every statement", "[sql][objects]") {
  DbObjects d;
  DbRole role;
  role.name = "a\"b";
  role.member_of = {"g\"; DROP ROLE x; --"};
  role.settings = {{"application_name", "it's, \"$user\""}};
  d.roles = {role};
  d.schemas = {{"s\"x", "tsdbadmin"}};
  d.grants = {grant_of("a\"b", "s\"x", On::Table, {"SELECT"}, "t\"1")};
  CHECK(sql_of(statements_for(d, {}, {}, {})) == std::vector<std::string>{
      "CREATE ROLE \"a\"\"b\" NOLOGIN CONNECTION LIMIT -1",
      "ALTER ROLE \"a\"\"b\" SET \"application_name\" TO 'it''s, \"$user\"'",
      "GRANT \"g\"\"; DROP ROLE x; --\" TO \"a\"\"b\"",
      "CREATE SCHEMA \"s\"\"x\" AUTHORIZATION \"tsdbadmin\"",
      "GRANT SELECT ON TABLE \"s\"\"x\".\"t\"\"1\" TO \"a\"\"b\""});
}

TEST_CASE("a list parameter such as search_path is set as its elements with a hostile one quoted", "[sql][objects]") {
  // One literal would be one element: 'orders, public' a schema of that name.
  DbObjects d;
  DbRole role;
  role.name = "app";
  role.settings = {{"search_path", "\"$user\", Orders, \"it's \"\"x\"\"\""}, {"temp_tablespaces", "a,b"}};
  d.roles = {role};
  CHECK(sql_of(statements_for(d, {}, {}, {})) == std::vector<std::string>{
      "CREATE ROLE \"app\" NOLOGIN CONNECTION LIMIT -1",
      "ALTER ROLE \"app\" SET \"search_path\" TO '$user', 'orders', 'it''s \"x\"'",
      "ALTER ROLE \"app\" SET \"temp_tablespaces\" TO 'a', 'b'"});
  // PostgreSQL keeps the list as its elements quoted as identifiers, joined by ", ".
  DbObjects observed = d;
  observed.roles[0].settings = {{"search_path", "\"$user\", orders, \"it's \"\"x\"\"\""}, {"temp_tablespaces", "a, b"}};
  CHECK(statements_for(d, observed, {}, {}).empty());
  observed.roles[0].settings["search_path"] = "\"orders, public\"";
  CHECK(statements_for(d, observed, {}, {}).size() == 1);
}

TEST_CASE("a parameter PostgreSQL keeps under its own spelling is neither set again nor reset", "[sql][objects]") {
  // timezone is stored as TimeZone: SET timezone then RESET TimeZone would remove it every apply.
  DbObjects d;
  DbRole role;
  role.name = "app";
  role.settings = {{"timezone", "UTC"}, {"datestyle", "ISO, MDY"}};
  d.roles = {role};
  DbObjects observed = d;
  observed.roles[0].settings = {{"TimeZone", "UTC"}, {"DateStyle", "ISO, MDY"}};
  CHECK(statements_for(d, observed, {}, {}).empty());
  observed.roles[0].settings = {{"TimeZone", "Europe/Paris"}, {"DateStyle", "ISO, MDY"}, {"work_mem", "4MB"}};
  CHECK(sql_of(statements_for(d, observed, {}, {})) == std::vector<std::string>{
      "ALTER ROLE \"app\" SET \"timezone\" TO 'UTC'", "ALTER ROLE \"app\" RESET \"work_mem\""});
}

TEST_CASE("a grant is authoritative: what is missing is granted and what is extra revoked", "[sql][objects]") {
  DbObjects desired;
  desired.grants = {grant_of("app", "orders", On::Schema, {"USAGE"}),
                    grant_of("app", "orders", On::Table, {"SELECT", "UPDATE"}, "items")};
  DbObjects observed;
  observed.grants = {grant_of("app", "orders", On::Schema, {"USAGE", "CREATE"}),
                     grant_of("app", "orders", On::Table, {"SELECT", "TRUNCATE"}, "items")};
  CHECK(sql_of(statements_for(desired, observed, {}, {})) == std::vector<std::string>{
      "REVOKE CREATE ON SCHEMA \"orders\" FROM \"app\"",
      "GRANT UPDATE ON TABLE \"orders\".\"items\" TO \"app\"",
      "REVOKE TRUNCATE ON TABLE \"orders\".\"items\" FROM \"app\""});
}

TEST_CASE("an all grant is granted again only where it is missing: the tables now or the default privileges", "[sql][objects]") {
  DbObjects desired;
  desired.schemas = {{"orders", "tsdbadmin"}};
  desired.grants = {grant_of("app", "orders", On::AllTables, {"SELECT", "INSERT"})};
  DbObjects observed = desired;
  observed.grants[0].existing = {"SELECT", "TRUNCATE"};  // INSERT revoked on a table, TRUNCATE given outside
  observed.grants[0].future = {"INSERT", "SELECT"};
  observed.grants[0].privileges = {"SELECT", "TRUNCATE"};
  CHECK(sql_of(statements_for(desired, observed, {}, {})) == std::vector<std::string>{
      "GRANT INSERT ON ALL TABLES IN SCHEMA \"orders\" TO \"app\"",
      "REVOKE TRUNCATE ON ALL TABLES IN SCHEMA \"orders\" FROM \"app\""});
  observed.grants[0].existing = {"INSERT", "SELECT"};
  observed.grants[0].future = {"SELECT"};
  CHECK(sql_of(statements_for(desired, observed, {}, {})) == std::vector<std::string>{
      "ALTER DEFAULT PRIVILEGES FOR ROLE \"tsdbadmin\" IN SCHEMA \"orders\" GRANT INSERT ON TABLES TO \"app\""});
}

TEST_CASE("a role's changed limit login settings and memberships are altered in place", "[sql][objects]") {
  DbObjects desired = orders_objects();
  DbObjects observed = orders_objects();
  observed.facts.admin_member_of = {"orders_rw"};
  observed.roles[0].connection_limit = 5;
  observed.roles[0].member_of = {"analysts"};
  observed.roles[0].settings = {{"statement_timeout", "10s"}, {"work_mem", "64MB"}};
  ObjectsContext ctx;
  ctx.verifiers["app"] = "SCRAM-SHA-256$new";
  const auto statements = statements_for(desired, observed, {}, ctx);
  CHECK(sql_of(statements) == std::vector<std::string>{
      "ALTER ROLE \"app\" LOGIN CONNECTION LIMIT 20",
      "ALTER ROLE \"app\" PASSWORD 'SCRAM-SHA-256$new'",
      "ALTER ROLE \"app\" SET \"statement_timeout\" TO '30s'",
      "ALTER ROLE \"app\" RESET \"work_mem\"",
      "GRANT \"orders_rw\" TO \"app\"",
      "REVOKE \"analysts\" FROM \"app\""});
  CHECK(statements[1].secret);
  CHECK_FALSE(statements[0].secret);
}

TEST_CASE("deletes revoke what dbform granted and drop in reverse order without CASCADE", "[sql][objects]") {
  DbObjects observed = orders_objects();
  observed.facts.owned_by["orders_rw"] = {{"schema", "orders", "", "schema orders"},
                                          {"default tables", "orders", "", "default privileges on new relations "
                                                                           "belonging to role orders_rw in schema orders"}};
  observed.facts.privileges_of["orders_rw"] = {{"schema", "orders", "", "schema orders"},
                                               {"table", "orders", "items", "table orders.items"}};
  const DbObjects to_delete = orders_objects();
  const auto statements = statements_for({}, observed, to_delete, {});
  CHECK(sql_of(statements) == std::vector<std::string>{
      "REVOKE ALL ON SCHEMA \"orders\" FROM \"orders_rw\"",
      "REVOKE ALL ON ALL TABLES IN SCHEMA \"orders\" FROM \"orders_rw\"",
      "ALTER DEFAULT PRIVILEGES FOR ROLE \"tsdbadmin\" IN SCHEMA \"orders\" REVOKE ALL ON TABLES FROM \"orders_rw\"",
      "REVOKE ALL ON ALL SEQUENCES IN SCHEMA \"orders\" FROM \"orders_rw\"",
      "ALTER DEFAULT PRIVILEGES FOR ROLE \"tsdbadmin\" IN SCHEMA \"orders\" REVOKE ALL ON SEQUENCES FROM \"orders_rw\"",
      "DROP EXTENSION \"pg_stat_statements\"",
      "DROP SCHEMA \"orders\"",
      "DROP ROLE \"app\"",
      "DROP ROLE \"orders_rw\""});
  CHECK(statements.back().kind == "DROP ROLE");
  // What the catalogs no longer show is not dropped again.
  CHECK(statements_for({}, {}, to_delete, {}).empty());
}

TEST_CASE("a delete PostgreSQL would refuse without CASCADE is refused naming what blocks it", "[sql][objects]") {
  DbObjects observed = orders_objects();
  observed.facts.owned_by["orders_rw"] = {{"schema", "orders", "", "schema orders"},
                                          {"table", "public", "audit", "table audit"}};
  observed.facts.privileges_of["app"] = {{"other", "", "", "database tsdb"}};
  observed.facts.schema_contents["orders"] = {"table orders.items", "sequence orders.items_id_seq"};
  observed.facts.extension_dependents["pg_stat_statements"] = {"view public.slow"};
  DbObjects to_delete = orders_objects();
  to_delete.grants.clear();
  const auto refusals = delete_refusals(observed, to_delete, {});
  REQUIRE(refusals.size() == 4);
  CHECK(refusals[0].object == "roles/app");
  CHECK(refusals[0].reason == "it holds privileges dbform did not grant, on database tsdb (revoke them first)");
  CHECK(refusals[1].object == "roles/orders_rw");
  CHECK(refusals[1].reason == "it owns table audit (reassign or drop them first)");  // its schema goes first
  CHECK(refusals[2].object == "schemas/orders");
  CHECK(refusals[2].reason == "it is not empty: table orders.items, sequence orders.items_id_seq");
  CHECK(refusals[3].object == "extensions/pg_stat_statements");
  CHECK(refusals[3].reason == "other objects depend on it: view public.slow");
  const std::string why = objects_error([&] { statements_for({}, observed, to_delete, {}); });
  CHECK_THAT(why, Catch::StartsWith("dbform will not change these objects:") &&
                      Catch::Contains("schemas/orders: cannot be dropped: it is not empty: table orders.items"));
  // A role whose privileges are dbform's own grants, revoked first, is not refused for them.
  DbObjects only_app;
  only_app.roles = {orders_objects().roles[0]};
  only_app.grants = {grant_of("app", "orders", On::AllTables, {"SELECT"})};
  observed.facts.privileges_of["app"] = {{"table", "orders", "items", "table orders.items"},
                                         {"default tables", "orders", "", "default privileges in schema orders"}};
  CHECK(delete_refusals(observed, only_app, {}).empty());
}

TEST_CASE("a privilege the server does not have is refused before any statement", "[sql][objects]") {
  // ALL read with the newest list holds MAINTAIN, which PostgreSQL 15 refuses mid-transaction.
  DbObjects d;
  DbGrant g = grant_of("app", "orders", On::AllTables, {"SELECT"});
  g.privileges = normalize_privileges(On::AllTables, {"ALL"}, 0);
  d.grants = {g};
  ObjectsContext ctx;
  ctx.server_version_num = 150008;
  CHECK_THAT(objects_error([&] { statements_for(d, {}, {}, ctx); }),
             Catch::Contains("grants/app/orders/tables: 'MAINTAIN' is not a privilege on tables before PostgreSQL 17"));
  ctx.server_version_num = 170002;
  CHECK_FALSE(statements_for(d, {}, {}, ctx).empty());
}

TEST_CASE("the admin and PostgreSQL's own roles are never managed", "[sql][objects]") {
  DbObjects desired;
  desired.roles = {DbRole{"tsdbadmin", true, -1, {}, {}}, DbRole{"pg_monitor", false, -1, {}, {}}};
  const std::string why = objects_error([&] { statements_for(desired, {}, {}, {}); });
  CHECK_THAT(why, Catch::Contains("roles/tsdbadmin: tsdbadmin can be named in member_of, not managed") &&
                      Catch::Contains("roles/pg_monitor"));
  DbObjects observed;
  observed.roles = {DbRole{"postgres", true, -1, {}, {}}};
  observed.facts.builtin_roles = {"postgres"};
  DbObjects to_delete;
  to_delete.roles = observed.roles;
  CHECK_THAT(objects_error([&] { statements_for({}, observed, to_delete, {}); }),
             Catch::Contains("roles/postgres: cannot be dropped: it is one of PostgreSQL's own roles"));
}

TEST_CASE("the objects are applied in one transaction", "[sql][objects]") {
  FakeSqlSession session;
  const std::vector<DbStatement> statements = {{"CREATE ROLE \"app\"", "roles/app", "CREATE ROLE", false},
                                               {"CREATE SCHEMA \"s\"", "schemas/s", "CREATE SCHEMA", false}};
  const ObjectsOutcome ok = apply_objects(session, statements, {});
  CHECK(ok.result == ObjectsOutcome::Result::Applied);
  CHECK(ok.applied == 2);
  CHECK(session.sent == std::vector<std::string>{"BEGIN", "CREATE ROLE \"app\"", "CREATE SCHEMA \"s\"", "COMMIT"});
  FakeSqlSession none;
  CHECK(apply_objects(none, {}, {}).result == ObjectsOutcome::Result::Applied);
  CHECK(none.sent.empty());
}

TEST_CASE("a failed statement rolls everything back naming its object kind and PostgreSQL's message", "[sql][objects]") {
  FakeSqlSession session;
  session.fail_when["CREATE EXTENSION"] = {"extension \"nope\" is not available", "Could not open control file.",
                                           "The extension must first be installed.", "0A000", 0};
  const std::vector<DbStatement> statements = {{"CREATE ROLE \"app\"", "roles/app", "CREATE ROLE", false},
                                               {"CREATE EXTENSION \"nope\"", "extensions/nope", "CREATE EXTENSION", false},
                                               {"CREATE SCHEMA \"s\"", "schemas/s", "CREATE SCHEMA", false}};
  const ObjectsOutcome out = apply_objects(session, statements, {});
  CHECK(out.result == ObjectsOutcome::Result::Failed);
  CHECK(out.object == "extensions/nope");
  CHECK(out.kind == "CREATE EXTENSION");
  CHECK(out.message == "extension \"nope\" is not available (Could not open control file.); hint: The extension "
                       "must first be installed.");
  CHECK(out.applied == 1);
  CHECK(session.sent == std::vector<std::string>{"BEGIN", "CREATE ROLE \"app\"", "CREATE EXTENSION \"nope\"", "ROLLBACK"});
}

TEST_CASE("a statement ended by the timeout or a stop rolls back and says so", "[sql][objects]") {
  FakeSqlSession session;
  session.cancel_when["CREATE SCHEMA"] = Cancelled::TimedOut;
  const std::vector<DbStatement> statements = {{"CREATE ROLE \"app\"", "roles/app", "CREATE ROLE", false},
                                               {"CREATE SCHEMA \"s\"", "schemas/s", "CREATE SCHEMA", false}};
  StatementLimit limit;
  limit.timeout = std::chrono::seconds(7);
  const ObjectsOutcome out = apply_objects(session, statements, limit);
  CHECK(out.result == ObjectsOutcome::Result::Failed);
  CHECK(out.cancelled == Cancelled::TimedOut);
  CHECK(out.object == "schemas/s");
  REQUIRE(session.limits.size() == 2);  // every statement is watched
  CHECK(session.limits[1].timeout == std::chrono::seconds(7));
  CHECK(session.sent.back() == "ROLLBACK");
}

TEST_CASE("a failed secret statement's message never holds its verifier", "[sql][objects]") {
  FakeSqlSession session;
  session.fail_when["PASSWORD"] = {"syntax error at or near \"SCRAM-SHA-256$4096:abc$def:ghi\"", "", "", "42601", 30};
  const std::vector<DbStatement> statements = {
      {"CREATE ROLE \"app\" LOGIN PASSWORD 'SCRAM-SHA-256$4096:abc$def:ghi'", "roles/app", "CREATE ROLE", true}};
  const ObjectsOutcome out = apply_objects(session, statements, {});
  CHECK(out.result == ObjectsOutcome::Result::Failed);
  CHECK(out.message == "syntax error at or near \"[verifier]\"");
  CHECK(out.message.find("abc") == std::string::npos);
}

TEST_CASE("a COMMIT whose answer is lost is unknown and one the server refused has failed", "[sql][objects]") {
  const std::vector<DbStatement> statements = {{"CREATE ROLE \"app\"", "roles/app", "CREATE ROLE", false}};
  FakeSqlSession lost;
  lost.fail_when["COMMIT"] = {"server closed the connection unexpectedly", "", "", "", 0};
  const ObjectsOutcome unknown = apply_objects(lost, statements, {});
  CHECK(unknown.result == ObjectsOutcome::Result::Unknown);
  CHECK(unknown.kind == "COMMIT");
  FakeSqlSession refused;
  refused.fail_when["COMMIT"] = {"could not serialize access", "", "", "40001", 0};
  const ObjectsOutcome failed = apply_objects(refused, statements, {});
  CHECK(failed.result == ObjectsOutcome::Result::Failed);
  CHECK(failed.kind == "COMMIT");
  CHECK(refused.sent.back() == "ROLLBACK");
}

TEST_CASE("the catalogs are read in one read-only transaction with the names as parameters", "[sql][objects]") {
  FakeSqlSession session;
  session.rows["current_user, d.oid"] = {{std::string("tsdbadmin"), std::string("16384")}};
  session.rows["r.rolcanlogin"] = {{std::string("app"), std::string("true"), std::string("20"), std::string("false")}};
  session.rows["unnest(s.setconfig)"] = {{std::string("app"), std::string("statement_timeout=30s")}};
  session.rows["pg_get_userbyid(n.nspowner) FROM"] = {{std::string("orders"), std::string("tsdbadmin")}};
  session.rows["pg_get_userbyid(c.relowner)"] = {
      {std::string("orders"), std::string("a"), std::string("false"), std::string("tsdbadmin")},
      {std::string("orders"), std::string("b"), std::string("false"), std::string("tsdbadmin")},
      {std::string("orders"), std::string("own"), std::string("false"), std::string("app")}};
  session.rows["a.privilege_type, a.is_grantable::text FROM pg_class"] = {
      {std::string("orders"), std::string("a"), std::string("false"), std::string("app"), std::string("SELECT")},
      {std::string("orders"), std::string("a"), std::string("false"), std::string("app"), std::string("INSERT")},
      {std::string("orders"), std::string("b"), std::string("false"), std::string("app"), std::string("SELECT")},
      {std::string("orders"), std::string("b"), std::string("false"), std::string("app"), std::string("TRUNCATE")}};
  session.rows["pg_get_userbyid(d.defaclrole)"] = {
      {std::string("orders"), std::string("tsdbadmin"), std::string("r"), std::string("app"), std::string("SELECT")},
      {std::string("orders"), std::string("tsdbadmin"), std::string("r"), std::string("app"), std::string("INSERT")}};
  DbObjects wanted;
  DbRole app;
  app.name = "app";
  app.login = true;
  app.connection_limit = 20;
  app.settings = {{"statement_timeout", "30s"}};
  wanted.roles = {app};
  wanted.schemas = {{"orders", "tsdbadmin"}};
  wanted.grants = {grant_of("app", "orders", On::AllTables, {"SELECT", "INSERT"}),
                   grant_of("app", "gone", On::Schema, {"USAGE"})};
  const DbObjects got = read_objects(session, wanted);
  CHECK(session.sent.front() == "BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY");
  CHECK(session.sent.back() == "COMMIT");
  CHECK_THAT(session.sent[2], Catch::EndsWith(" | {\"app\"}"));
  REQUIRE(got.roles.size() == 1);
  CHECK(got.roles[0].login);
  CHECK(got.roles[0].connection_limit == 20);
  CHECK(got.roles[0].settings == std::map<std::string, std::string>{{"statement_timeout", "30s"}});
  CHECK(got.facts.admin == "tsdbadmin");
  CHECK(got.schemas == std::vector<DbSchema>{{"orders", "tsdbadmin"}});
  // INSERT is on one table of two: missing; TRUNCATE on one: extra (the table app owns, holding
  // every privilege, does not count). The grant on a schema the catalogs do not show is absent.
  REQUIRE(got.grants.size() == 1);
  CHECK(got.grants[0].privileges == std::vector<std::string>{"SELECT", "TRUNCATE"});
  CHECK(*got.grants[0].existing == std::vector<std::string>{"SELECT", "TRUNCATE"});
  CHECK(*got.grants[0].future == std::vector<std::string>{"INSERT", "SELECT"});
  CHECK(sql_of(statements_for(wanted, got, {}, {})) == std::vector<std::string>{
      "GRANT INSERT ON ALL TABLES IN SCHEMA \"orders\" TO \"app\"",
      "REVOKE TRUNCATE ON ALL TABLES IN SCHEMA \"orders\" FROM \"app\"",
      "GRANT USAGE ON SCHEMA \"gone\" TO \"app\""});
}

TEST_CASE("the catalogs' read bounds its queries by the statement timeout it is given", "[sql][objects]") {
  // A session opened without a statement_timeout would wait on a locked catalog for ever.
  FakeSqlSession session;
  DbObjects wanted;
  wanted.roles = {DbRole{"app", false, -1, {}, {}}};
  read_objects(session, wanted, std::chrono::milliseconds(5000));
  REQUIRE(session.sent.size() > 2);
  CHECK(session.sent[0] == "BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY");
  CHECK(session.sent[1] == "SET LOCAL statement_timeout = 5000");
  FakeSqlSession unbounded;
  read_objects(unbounded, wanted);
  for (const auto& sql : unbounded.sent) CHECK(sql.find("statement_timeout") == std::string::npos);
}

TEST_CASE("a privilege held with the grant option is not as declared and the option is revoked", "[sql][objects]") {
  // Authoritative: the role could otherwise give the privilege on to any other.
  FakeSqlSession session;
  session.rows["current_user, d.oid"] = {{std::string("tsdbadmin"), std::string("16384")}};
  session.rows["r.rolcanlogin"] = {{std::string("app"), std::string("false"), std::string("-1"), std::string("false")}};
  session.rows["pg_get_userbyid(n.nspowner) FROM"] = {{std::string("orders"), std::string("tsdbadmin")}};
  session.rows["a.privilege_type, a.is_grantable::text FROM pg_namespace"] = {
      {std::string("orders"), std::string("app"), std::string("USAGE"), std::string("true")}};
  DbObjects wanted;
  wanted.roles = {DbRole{"app", false, -1, {}, {}}};
  wanted.grants = {grant_of("app", "orders", On::Schema, {"USAGE"})};
  const DbObjects got = read_objects(session, wanted);
  REQUIRE(got.grants.size() == 1);
  CHECK(got.grants[0].privileges == std::vector<std::string>{"USAGE"});
  CHECK(got.grants[0].grant_option == std::vector<std::string>{"USAGE"});
  CHECK_FALSE(got == wanted);
  CHECK(sql_of(statements_for(wanted, got, {}, {})) ==
        std::vector<std::string>{"REVOKE GRANT OPTION FOR USAGE ON SCHEMA \"orders\" FROM \"app\""});
  // An `all` grant: on the tables now and in the default privileges; a privilege revoked whole
  // loses its option with it.
  DbObjects desired;
  desired.grants = {grant_of("app", "orders", On::AllTables, {"SELECT"})};
  DbObjects observed = desired;
  observed.grants[0].privileges = {"SELECT", "UPDATE"};
  observed.grants[0].grant_option = {"SELECT", "UPDATE"};
  observed.facts.schema_owners["orders"] = "tsdbadmin";
  CHECK(sql_of(statements_for(desired, observed, {}, {})) == std::vector<std::string>{
      "REVOKE UPDATE ON ALL TABLES IN SCHEMA \"orders\" FROM \"app\"",
      "REVOKE GRANT OPTION FOR SELECT ON ALL TABLES IN SCHEMA \"orders\" FROM \"app\"",
      "ALTER DEFAULT PRIVILEGES FOR ROLE \"tsdbadmin\" IN SCHEMA \"orders\" REVOKE UPDATE ON TABLES FROM \"app\"",
      "ALTER DEFAULT PRIVILEGES FOR ROLE \"tsdbadmin\" IN SCHEMA \"orders\" REVOKE GRANT OPTION FOR SELECT ON TABLES "
      "FROM \"app\""});
}

TEST_CASE("a failed catalog query ends the read-only transaction and names what it read", "[sql][objects]") {
  FakeSqlSession session;
  session.fail_when["r.rolcanlogin"] = {"canceling statement due to statement timeout", "", "", "57014", 0};
  DbObjects wanted;
  wanted.roles = {DbRole{"app", false, -1, {}, {}}};
  CHECK_THAT(objects_error([&] { read_objects(session, wanted); }),
             Catch::Contains("could not read the roles from the catalogs: canceling statement"));
  CHECK(session.sent.back() == "ROLLBACK");
}
