#pragma once
// Turns one parsed YAML document into the projects it declares, validating its structure (known
// keys, required keys, lists and mappings where they belong) and every value. Knows nothing of
// files, merging or duplicates across documents: loader.cpp does that.
#include <string>
#include <vector>

#include "manifest/model.h"
#include "manifest/value_reader.h"
#include "manifest/yaml_tree.h"
#include "util/diagnostics.h"
#include "util/env.h"

namespace dbform {

// Projects whose id could not be read have an empty id, resources whose name could not be read
// are left out; the errors are in `diags`. `interpolated`, when given, receives every ${NAME}'s place
// and text.
std::vector<DesiredProject> read_manifest_document(const YamlNode& root, const std::string& file,
                                                   const EnvLookup& env, Diagnostics& diags,
                                                   std::vector<InterpolatedValue>* interpolated = nullptr);

}  // namespace dbform
