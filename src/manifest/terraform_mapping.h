#pragma once
// What `dbform import --from-terraform` makes of a Terraform state, for teams moving from Terraform to dbform: each resource of the
// vendor's provider (timescale/timescale v2.13.3: `timescale_service`, its read replicas,
// `timescale_vpcs`, `timescale_peering_connection`) as the declaration that imports it, in its
// project; what cannot be moved is listed with its Terraform address and why, never guessed.
#include <map>
#include <string>
#include <vector>

#include "manifest/manifest_writer.h"
#include "manifest/terraform_state.h"

namespace dbform {

struct TerraformMove {
  std::string project;
  FoundResource found;    // the declaration, with its import_id and comment
  std::string address;    // the Terraform instance's address
  std::string from;       // its `removed` block's `from`
  std::vector<std::string> not_moved;  // attributes left behind, each with why
};

struct TerraformLeftOut {
  std::string address;  // Terraform's
  std::string why;
  std::string project;  // "" when none is known
};

struct TerraformMapping {
  std::vector<TerraformMove> moves;  // VPCs, services, then what lives in them
  std::vector<TerraformLeftOut> left_out;
  size_t other_providers = 0;  // resources of other providers, left alone
};

// Whether `v` is a value a tool masked (`(sensitive value)` as terraform show's text writes it, in
// any case and spacing, and the like), not the value itself.
bool is_masked_terraform_value(const nlohmann::json& v);

// `projects`: provider configuration ("" the default, "eu" an alias, "module.db") -> project id.
// Throws UsageError naming every Terraform address at fault when a move would be wrong: two
// resources with one id or one dbform address, a name dbform's addresses cannot hold, a VPC whose
// recorded project is not the one given for its provider.
TerraformMapping map_terraform_state(const TerraformState& state, const std::map<std::string, std::string>& projects,
                                     const std::string& file);

// The file of `removed` blocks (Terraform 1.7+) that makes Terraform forget `moves` without
// destroying them.
std::string terraform_removed_blocks(const std::vector<TerraformMove>& moves, const std::string& state_file);

}  // namespace dbform
