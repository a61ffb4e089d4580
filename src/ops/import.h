#pragma once
// `dbform import` as operations of the core. ADDRESS ID records one existing resource in the
// state's lock (ops/locked_state.h); --project ID --generate FILE lists a project and writes a
// manifest declaring what the state does not record, recording nothing and taking no lock. The
// command line parses, opens the store and renders the outcome.
#include <string>
#include <vector>

#include "manifest/model.h"
#include "ops/locked_state.h"
#include "ops/preview.h"
#include "plan/kinds.h"
#include "state/model.h"

namespace dbform {

struct ImportRequest {
  StateAccess access;
  const Manifest& manifest;  // must declare the address
  ApiSource api;
  Clock& clock;
  std::string address;  // as typed: a full or a declared resource's short address
  std::string id;
};

struct ImportOutcome {
  ResourceRecord record;  // as recorded
};

// Reads the resource by id with its project's key and records it as it is (a VPC's attachments
// recorded by id then name it). Throws UsageError for an address not declared or recorded already,
// an id the project does not have; nothing is recorded then.
ImportOutcome import_operation(const ImportRequest& request);

struct GenerateImportsRequest {
  StateStore& store;  // opened; read once, never written, never locked
  const Manifest& manifest;
  ApiSource api;
  Clock& clock;
  EnvLookup env;
  std::string project;
  std::string file;  // the manifest to write
  bool force = false;  // replace `file` when it exists
};

struct GenerateImportsOutcome {
  std::vector<ResourceRecord> records;  // declared in `file`; none: it was not written
};

// Lists the project and writes `file` declaring each resource the state does not record, with
// its import_id. Refuses (UsageError, nothing written) a file that exists without `force`, and
// one of the state's own files whatever `force` says.
GenerateImportsOutcome generate_imports_operation(const GenerateImportsRequest& request);

// Throws UsageError when `file` is the state's own (document, journal, backup or lock): a file
// --generate writes must never replace what the state records, `--force` or not.
void refuse_state_file(const StateStore& store, const std::string& file);

}  // namespace dbform
