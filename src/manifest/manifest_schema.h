#pragma once
// The manifest's JSON Schema (schemas/manifest.schema.json, installed for editors and pipelines):
// the parts every manifest shares (its top, a project, previews, names, regions, address ranges,
// waivers) and each kind's mapping and list, which come from the kind's own file (kind_reader.h).
// A test keeps the committed file equal to what this generates (`dbform __manifest_schema`).
#include <nlohmann/json.hpp>

namespace dbform {

nlohmann::ordered_json manifest_schema();

}  // namespace dbform
