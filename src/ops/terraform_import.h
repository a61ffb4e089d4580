#pragma once
// `dbform import --from-terraform` as operations of the core, so tests drive them without the CLI. --generate reads a
// Terraform state and writes the manifests that import what it holds, and the file of `removed`
// blocks that makes Terraform forget them, calling no API and writing no state; --passwords records
// the passwords that state holds for services dbform has recorded, in the state's lock.
#include <map>
#include <string>
#include <vector>

#include "manifest/terraform_mapping.h"
#include "ops/locked_state.h"

namespace dbform {

struct TerraformGenerateRequest {
  const StateStore& store;  // opened, never read or written: its own files are not to be replaced
  std::string terraform_file;
  std::map<std::string, std::string> projects;  // provider configuration -> project id
  std::string generate;  // a manifest file, or a directory (one manifest per project)
  bool force = false;    // replace files that exist
};

struct TerraformGenerateOutcome {
  std::string form;  // what the file was
  TerraformMapping mapping;
  std::vector<std::pair<std::string, std::string>> manifests;  // written: file, project
  std::string removed_file;  // written; "" when nothing was mapped
};

// Throws UsageError (nothing written) for a file that is not a Terraform state, a move that would
// be wrong (terraform_mapping.h), a manifest file for resources of several projects, and files that
// exist without `force` (the state's own files whatever `force` says).
TerraformGenerateOutcome terraform_generate_operation(const TerraformGenerateRequest& request);

struct TerraformPasswordsRequest {
  StateAccess access;
  std::string terraform_file;
};

struct TerraformPasswordsOutcome {
  std::vector<std::string> recorded;   // addresses whose password was recorded
  std::vector<std::string> kept;       // addresses that held a password already (kept as it was)
  std::vector<std::string> without;    // Terraform addresses of services whose state holds none
  std::vector<std::string> unrecorded;  // Terraform addresses of services dbform does not record yet
  std::string clear_warning;           // recorded in clear: where, and what would seal it
};

// Records each password the Terraform state holds for a service the state records with the same
// id, in one locked write. Refuses (nothing written) a sealed state without its key, a password
// that is masked or not text.
TerraformPasswordsOutcome terraform_passwords_operation(const TerraformPasswordsRequest& request);

}  // namespace dbform
