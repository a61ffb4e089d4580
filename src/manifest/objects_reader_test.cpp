// A service's roles, schemas, extensions and grants as the manifest declares them: read whole,
// and every mistake a located error of its own.
#include "manifest/objects_reader.h"

#include "manifest/loader.h"

#include <catch2/catch.hpp>

using namespace dbform;

namespace {

const std::string kObjectsService = "version: 1\nprojects:\n  - id: acme\n    services:\n      - name: orders\n";

// The service of the manifest kObjectsService + body, as the manifest's loader reads it.
DesiredService load_objects(const std::string& body, Diagnostics& diags) {
  const EnvLookup env = [](const std::string&) { return std::nullopt; };
  Manifest m = load_manifest_text("m.yaml", kObjectsService + body, env, diags);
  if (m.projects.empty() || m.projects[0].services.empty()) return {};
  return m.projects[0].services[0];
}

// The one error the body gives.
Diagnostic objects_error(const std::string& body) {
  Diagnostics diags;
  load_objects(body, diags);
  INFO(diags.str());
  std::vector<Diagnostic> errors;
  for (const auto& d : diags.items())
    if (d.severity == Severity::Error) errors.push_back(d);
  REQUIRE(errors.size() == 1);
  return errors[0];
}

const std::string kSpecExample = R"(        roles:
          - name: app
            login: true
            connection_limit: 20
            member_of: [orders_rw]
            settings:
              statement_timeout: 30s
              work_mem: 64000
            deletion_protection: true
          - name: orders_rw
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
            privileges: [delete, SELECT, INSERT, UPDATE]
          - role: orders_rw
            schema: orders
            sequences: all
            privileges: [USAGE, SELECT]
          - role: app
            schema: public
            tables: [events, audit]
            privileges: [ALL]
)";

}  // namespace

TEST_CASE("objects: a service's roles schemas extensions and grants are read as declared") {
  Diagnostics diags;
  const DesiredService s = load_objects(kSpecExample, diags);
  INFO(diags.str());
  REQUIRE_FALSE(diags.has_errors());
  REQUIRE(s.roles.size() == 2);
  CHECK(s.roles[0].name == "app");
  CHECK(s.roles[0].login);
  CHECK(s.roles[0].connection_limit == 20);
  CHECK(s.roles[0].member_of == std::vector<std::string>{"orders_rw"});
  CHECK(s.roles[0].settings == std::map<std::string, std::string>{{"statement_timeout", "30s"}, {"work_mem", "64000"}});
  CHECK(s.roles[0].deletion_protection);
  CHECK(s.roles[0].path == "projects[0].services[0].roles[0]");
  CHECK_FALSE(s.roles[1].login);
  CHECK_FALSE(s.roles[1].connection_limit);
  REQUIRE(s.schemas.size() == 1);
  CHECK(s.schemas[0].owner == "orders_rw");
  REQUIRE(s.extensions.size() == 1);
  CHECK(s.extensions[0].name == "pg_stat_statements");
  // One grant per (role, object): a list of tables is one grant per table.
  std::vector<std::string> names;
  for (const auto& g : s.grants) names.push_back(g.name());
  CHECK(names == std::vector<std::string>{"orders_rw/orders", "orders_rw/orders/tables", "orders_rw/orders/sequences",
                                          "app/public/tables/events", "app/public/tables/audit"});
  CHECK(s.grants[0].target == GrantTarget::Schema);
  // Upper case, in PostgreSQL's order, whatever the order written.
  CHECK(s.grants[1].privileges == std::vector<std::string>{"SELECT", "INSERT", "UPDATE", "DELETE"});
  CHECK(s.grants[1].all);
  CHECK(s.grants[2].target == GrantTarget::Sequence);
  CHECK(s.grants[3].privileges == std::vector<std::string>{"ALL"});
  CHECK(s.grants[3].object == "events");
}

TEST_CASE("objects: a privilege its object does not have is an error naming those it has") {
  Diagnostic d = objects_error(
      "        roles: [{name: r}]\n        grants:\n          - role: r\n            schema: public\n"
      "            tables: all\n            privileges: [SELECT, USAGE]\n");
  CHECK(d.location.str() == "m.yaml:11:34");
  CHECK(d.field == "projects[0].services[0].grants[0].privileges[1]");
  CHECK(d.message == "a table has no privilege `USAGE`");
  CHECK(d.hint == "a table's are SELECT, INSERT, UPDATE, DELETE, TRUNCATE, REFERENCES, TRIGGER, MAINTAIN (or ALL)");
  Diagnostic on_schema = objects_error(
      "        roles: [{name: r}]\n        grants:\n          - role: r\n            schema: public\n"
      "            privileges: [SELECT]\n");
  CHECK(on_schema.message == "a schema has no privilege `SELECT`");
}

TEST_CASE("objects: names given of roles and schemas must be declared in the service") {
  Diagnostic member = objects_error("        roles:\n          - name: app\n            member_of: [orders_rw]\n");
  CHECK(member.field == "projects[0].services[0].roles[0].member_of[0]");
  CHECK(member.location.str() == "m.yaml:8:25");
  CHECK(member.message == "member_of names `orders_rw`, which is not a role of this service (declared: app)");
  // The service's own roles may be named, never declared.
  Diagnostics fine;
  load_objects("        roles:\n          - name: app\n            member_of: [tsdbadmin, pg_read_all_data]\n", fine);
  CHECK_FALSE(fine.has_errors());

  Diagnostic grant = objects_error("        grants:\n          - role: app\n            schema: public\n"
                                   "            privileges: [USAGE]\n");
  CHECK(grant.field == "projects[0].services[0].grants[0].role");
  CHECK(grant.message == "the grant is to `app`, which is not a role of this service (none is declared)");

  Diagnostic owner = objects_error("        roles: [{name: app}]\n        schemas:\n          - name: orders\n"
                                   "            owner: orders_rw\n");
  CHECK(owner.field == "projects[0].services[0].schemas[0].owner");
  CHECK(owner.message == "the schema's owner `orders_rw` is not a role of this service (declared: app)");

  Diagnostic schema = objects_error("        roles: [{name: app}]\n        grants:\n          - role: app\n"
                                    "            schema: orders\n            privileges: [USAGE]\n");
  CHECK(schema.field == "projects[0].services[0].grants[0].schema");
  CHECK(schema.message == "the grant is on schema `orders`, which is not declared in this service");
}

TEST_CASE("objects: names PostgreSQL would cut or keeps for itself are refused") {
  CHECK(objects_error("        roles: [{name: " + std::string(64, 'a') + "}]\n").message ==
        "a role's name is at most 63 characters in PostgreSQL (this one has 64)");
  CHECK(objects_error("        roles: [{name: pg_app}]\n").message ==
        "names starting with `pg_` are PostgreSQL's own: no role of a database may be named so");
  CHECK(objects_error("        roles: [{name: tsdbadmin}]\n").message ==
        "`tsdbadmin` is the service's own role: it can be named in `member_of` or as an owner, not declared");
  CHECK(objects_error("        schemas: [{name: public}]\n").message ==
        "`public` is in every database already: it is not declared");
  // Schemas of PostgreSQL and TimescaleDB, in every service, owned by neither tsdbadmin nor a role.
  for (const std::string theirs : {"information_schema", "timescaledb_information", "timescaledb_experimental",
                                   "toolkit_experimental"}) {
    Diagnostic schema = objects_error("        schemas: [{name: " + theirs + "}]\n");
    CHECK(schema.message == "`" + theirs + "` is a schema of PostgreSQL or TimescaleDB in every service: it is not "
                                           "declared");
    CHECK(schema.field == "projects[0].services[0].schemas[0].name");
  }
  // PostgreSQL reserves these role names (PUBLIC is every role): CREATE ROLE refuses them.
  for (const std::string reserved : {"public", "none"}) {
    Diagnostic role = objects_error("        roles: [{name: " + reserved + "}]\n");
    CHECK(role.message == "`" + reserved + "` is a name PostgreSQL reserves: no role may be named so");
    CHECK(role.field == "projects[0].services[0].roles[0].name");
  }
}

TEST_CASE("objects: one declaration per object and per grant") {
  Diagnostic role = objects_error("        roles:\n          - name: app\n          - name: app\n");
  CHECK(role.message == "role `app` of service `orders` is declared twice: here and at m.yaml:7:13");
  Diagnostic grant = objects_error(
      "        roles: [{name: r}]\n        grants:\n"
      "          - {role: r, schema: public, tables: [a], privileges: [SELECT]}\n"
      "          - {role: r, schema: public, tables: [a, b], privileges: [INSERT]}\n");
  CHECK(grant.message == "grant `r/public/tables/a` of service `orders` is declared twice: here and at m.yaml:8:13");
  CHECK(objects_error("        roles: [{name: r}]\n        grants:\n"
                      "          - {role: r, schema: public, tables: all, sequences: all, privileges: [SELECT]}\n")
            .message == "a grant is on the schema, its tables or its sequences: not both tables and sequences");
  CHECK(objects_error("        roles: [{name: r}]\n        grants:\n"
                      "          - {role: r, schema: public, privileges: [ALL, USAGE]}\n")
            .message == "ALL is every privilege of a schema: it goes alone");
}

TEST_CASE("objects: a grant on a list of tables is one declaration with one error each") {
  // Read as one grant per table, it must not say the same thing once per table.
  Diagnostic role = objects_error("        grants:\n"
                                  "          - {role: nobody, schema: public, tables: [a, b], privileges: [SELECT]}\n");
  CHECK(role.message.find("the grant is to `nobody`, which is not a role of this service") == 0);
  CHECK(role.field == "projects[0].services[0].grants[0].role");
  Diagnostic schema = objects_error("        roles: [{name: r}]\n        grants:\n"
                                    "          - {role: r, schema: nowhere, sequences: [a, b], privileges: [USAGE]}\n");
  CHECK(schema.message == "the grant is on schema `nowhere`, which is not declared in this service");
  // A name listed twice is an error at the second, not a grant "declared twice" at its own place.
  Diagnostic twice = objects_error("        roles: [{name: r}]\n        grants:\n"
                                   "          - {role: r, schema: public, tables: [a, a], privileges: [SELECT]}\n");
  CHECK(twice.message == "`a` is listed twice in tables");
  CHECK(twice.field == "projects[0].services[0].grants[0].tables[1]");
  CHECK(twice.location.str() == "m.yaml:8:51");  // the second a
}

TEST_CASE("objects: a role's settings and limit are checked where they are written") {
  CHECK(objects_error("        roles: [{name: r, connection_limit: -2}]\n").message ==
        "expected a whole number of connections, or -1 for no limit, found the integer `-2`");
  Diagnostic setting = objects_error("        roles:\n          - name: r\n            settings: {statement_timeout: }\n");
  CHECK(setting.field == "projects[0].services[0].roles[0].settings.statement_timeout");
  Diagnostic name = objects_error("        roles:\n          - name: r\n            settings: {\"bad name\": 1}\n");
  CHECK(name.message.find("a setting's name is a PostgreSQL parameter") == 0);
  // PostgreSQL's parameters are one whatever the case of their name.
  Diagnostic twice = objects_error("        roles:\n          - name: r\n            settings: {timezone: UTC, TimeZone: UTC}\n");
  CHECK(twice.message == "`TimeZone` is set twice");
  CHECK(twice.field == "projects[0].services[0].roles[0].settings.TimeZone");
  CHECK(twice.location.str() == "m.yaml:8:39");  // the second name
}
