#pragma once
// The manifest `import --project --generate` writes: what the API showed, declared so that reading
// it back declares exactly that, whatever text the API sent.
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "manifest/model.h"

namespace dbform {

// A resource the API showed, to be declared as it is.
struct FoundResource {
  ResourceKind kind = ResourceKind::Service;
  std::string parent;  // the name of what it lives in; "" for a project's own resources
  std::string name;    // a peering: its peer VPC's id
  std::string id;      // written as its import_id
  nlohmann::json settings;  // in the manifest's terms
};

// The manifest declaring `records` (one project's VPCs and services, as imported) with their
// settings, written by yaml-cpp's emitter: every text that YAML would read as something else (a
// number, a boolean, a null, a `${VAR}`, a line break, a `#`, a second document) is quoted or
// escaped. It is then read back with the manifest reader and compared, record by record, with
// `records`; throws Error naming each resource whose declaration would read back otherwise (or not
// at all), and nothing is to be written then. `file` names the manifest in those messages.
std::string generated_manifest(const std::string& project_id, const std::vector<FoundResource>& records,
                               const std::string& file);

}  // namespace dbform
