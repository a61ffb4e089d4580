#pragma once
// Reads what a service declares inside its database (`roles`, `schemas`, `extensions`, `grants`:
// manifest/database_objects.h) from the service's mapping, each value checked where it is and the
// four checked together (a `member_of` naming nothing, a grant to a role not declared, a schema's
// owner that is not a role, a privilege its object does not have). Internal to the manifest module.
#include <vector>

#include "manifest/database_objects.h"
#include "manifest/mapping_reader.h"

namespace dbform {

struct ServiceObjects {
  std::vector<DesiredRole> roles;
  std::vector<DesiredSchema> schemas;
  std::vector<DesiredExtension> extensions;
  std::vector<DesiredGrant> grants;
};

// The service's keys this reader owns, in the order the schema lists them.
inline const std::vector<std::string> kObjectKeys = {"roles", "schemas", "extensions", "grants"};

ServiceObjects read_service_objects(ValueReader& values, const Fields& service);

}  // namespace dbform
