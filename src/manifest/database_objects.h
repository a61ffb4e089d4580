#pragma once
// What a service declares inside its database (roles, schemas, extensions, grants): the manifest's
// form of them, as manifest/objects_reader.cpp reads it. Each lives in its service: its address
// is PROJECT/services/SERVICE/roles/NAME (schemas/NAME, extensions/NAME, grants/ROLE/SCHEMA...).
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "util/diagnostics.h"
#include "util/privileges.h"

namespace dbform {

// A name one declaration gives of another (a member_of, a schema's owner, a grant's role or
// schema), with where it was written: checked once all of the service's objects are read.
struct NameAt {
  std::string name;
  Location where;
  std::string path;
};

// A role; `login` makes it one that logs in (dbform generates its password), without it a group.
struct DesiredRole {
  std::string name;
  bool login = false;
  std::optional<long long> connection_limit;  // -1 or unset: none
  std::vector<std::string> member_of;         // declared roles, tsdbadmin or PostgreSQL's predefined ones
  std::vector<NameAt> member_of_at;           // the same, with where each was written
  std::map<std::string, std::string> settings;  // ALTER ROLE ... SET NAME = 'VALUE', as text
  bool deletion_protection = false;
  Location location;
  std::string path;  // "projects[0].services[1].roles[0]"
};

struct DesiredSchema {
  std::string name;
  std::string owner = "tsdbadmin";  // a declared role, or tsdbadmin
  std::optional<NameAt> owner_at;   // where `owner` was written
  Location location;
  std::string path;
};

struct DesiredExtension {
  std::string name;
  Location location;
  std::string path;
};

// One grant's object: a schema itself, every table (sequence) of a schema (`all`, which also sets
// the default privileges of those made later), or one of them by name.
struct DesiredGrant {
  std::string role;
  std::string schema;
  GrantTarget target = GrantTarget::Schema;
  bool all = false;        // `tables: all` / `sequences: all`
  std::string object;      // a table's or sequence's name, when not `all` and not the schema
  std::vector<std::string> privileges;  // upper case, in the target's order; `ALL` as it is written
  NameAt role_at, schema_at;             // where `role` and `schema` were written
  // The tables (sequences) named in the declaration: it is read as one, then made one grant each.
  std::vector<std::string> listed;
  Location location;
  std::string path;
  // Its name within the service's grants: ROLE/SCHEMA, ROLE/SCHEMA/tables, ROLE/SCHEMA/tables/NAME.
  std::string name() const;
  std::string address_name;  // name(), kept once read: what the walk of declarations shows

};

// The roles every service has that a declaration may name (in member_of or as an owner) but never
// declares: the service's admin and PostgreSQL's predefined roles.
bool is_builtin_role(const std::string& name);

}  // namespace dbform
