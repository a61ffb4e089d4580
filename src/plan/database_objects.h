#pragma once
// The differ's part for what lives inside a service's database (roles, schemas, extensions,
// grants: KindForm::in_database): planned against their records like every kind, but made by SQL
// in one transaction per service, so that there are no calls, no namesakes and no imports.
#include <optional>
#include <string>

#include "manifest/model.h"
#include "plan/model.h"
#include "sql/objects.h"
#include "state/model.h"

namespace dbform {

// The action of one declared object: a create while not recorded (or recorded only as the intent
// of a transaction whose outcome is unknown), an update while its settings (as recorded, or as a
// refresh read them from the catalogs) or its password differ, a no-op otherwise. Every field is
// compared, absent ones included: the declaration is authoritative.
PlannedAction plan_database_object(const std::string& project_id, const Declaration& d, const State& state);

// The address of the service an object lives in.
std::string service_address_of(const PlannedAction& a);

// --- the service's admin connection -----------------------------------------------------------

// Why the service's database cannot be reached as tsdbadmin from its record (not READY, no
// endpoint, no known password, one sealed and read without the key, one in a table this role may
// not read), or nullopt: then admin_target() is its connection.
std::optional<std::string> admin_unreachable(const ResourceRecord& service);
// Its endpoint and tsdbadmin password (the password's text: throws Error for a sealed one).
ConnectTarget admin_target(const ResourceRecord& service);

// --- between the manifest's terms and PostgreSQL's ------------------------------------------

// Adds to `into` the object of kind `kind` named `name` (an address's last segments: a grant's
// ROLE/SCHEMA/tables) with `settings` in the manifest's terms (role_settings() and the others).
void add_db_object(ResourceKind kind, const std::string& name, const nlohmann::json& settings, DbObjects& into);

// What `read` shows of the object, in the manifest's terms as `declared` has them (a setting in the
// declared spelling where PostgreSQL keeps another, a grant's privileges as `ALL` where they are
// what ALL means on that server), with what no declaration has (a grant option) besides; null when
// the catalogs do not show it.
nlohmann::json observed_settings(ResourceKind kind, const std::string& name, const nlohmann::json& declared,
                                 const DbObjects& read, int server_version_num);

}  // namespace dbform
