#pragma once
#include <string>

#include "state/model.h"

namespace dbform::cli {

// Finds the record a user means: `PROJECT/services/NAME`, `PROJECT/vpcs/NAME`, `services/NAME`,
// `vpcs/NAME` or a bare `NAME`, where the short forms must match exactly one record. Throws
// UsageError saying what matched (several) or what is close (none).
const ResourceRecord& resolve_address(const State& state, const std::string& text);

// The address of a declared resource to bring in: `PROJECT/services/NAME`, `PROJECT/vpcs/NAME`, or a
// short form (`services/NAME`, `vpcs/NAME`, `NAME`) matching exactly one. Throws UsageError for
// anything the manifests do not declare.
std::string declared_address(const Manifest& manifest, const std::string& text);

}  // namespace dbform::cli
