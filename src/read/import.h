#pragma once
// Bringing existing resources under dbform (`dbform import`, and `import_id`): records made from what the
// API shows, with the settings as they are now, so that the next plan compares the declaration
// with the resource itself.
#include <string>
#include <vector>

#include "api/client.h"
#include "api/project_key.h"
#include "plan/kinds.h"
#include "read/namesakes.h"
#include "manifest/manifest_writer.h"
#include "manifest/model.h"
#include "plan/model.h"
#include "state/model.h"

namespace dbform {

// Reads the resource by id with the project's key and makes its record. Throws Error (changing
// nothing) when the id does not exist there, or names a resource of another project.
ResourceRecord import_by_id(ApiClient& api, const std::string& key, const std::string& address, const State& state,
                            const std::string& id, const std::string& now);

// What a refresh reads for `import_id` (docs/using.md): for each declaration with one that
// `state` does not record, the record the resource of that id makes, or why it cannot be imported
// (no such id, another project, another name, recorded already). Parents first, so that a read
// replica set or a peering is imported with its service or VPC. Throws ApiError or TransportError
// when the API cannot be read.
Imports read_imports(ApiClient& api, const Manifest& manifest, const State& state,
                     const std::map<std::string, ProjectKey>& keys, const std::string& now);

// A resource just imported that other kinds refer to by a setting (KindForm::refers: a VPC): the
// project's records that name it by id ("id:ID") name it by its name now. Returns their addresses.
std::vector<std::string> name_attachments(State& state, const ResourceRecord& imported);

// Adds to a project's listing (its services and VPCs) what lives in each of them that is not being
// deleted: one list call per service for its read replica sets, one per VPC for its peerings.
void list_children(ApiClient& api, const std::string& key, const std::string& project_id, ProjectListing& listing);

// What `import --project` brings in: every resource (not being deleted) of the listing the state
// does not record, as records under their own names, VPCs first, those in another last. Throws Error listing every
// one that cannot be brought in (a name dbform cannot use as a manifest name, a name already taken
// in the state, two resources of one name, an attachment to a VPC the project does not list or
// one the state records already, which another manifest declares, and so a resource in a service
// or VPC the state records).
std::vector<ResourceRecord> unrecorded_resources(const ProjectListing& listing, const std::string& project_id,
                                                 const State& state, const std::string& now);
// Those records as the manifest `import --generate` writes declares them (manifest_writer.h).
std::vector<FoundResource> found_resources(const std::vector<ResourceRecord>& records);

}  // namespace dbform
