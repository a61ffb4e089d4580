#pragma once
// A saved plan in the shape of `terraform show -json PLANFILE` (HashiCorp's JSON output format,
// format_version 1.2), so that what a Terraform team runs on plans (conftest/OPA policies,
// tf-summarize) reads dbform's: each action a resource change of type dbform_service, dbform_vpc,
// dbform_replica_set or dbform_peering, in a module per project.
#include <nlohmann/json.hpp>

#include "plan/plan_file.h"

namespace dbform::cli {

// Addresses: module.PROJECT.dbform_service.NAME, module.PROJECT.dbform_vpc.NAME, and for what
// lives in another, module.PROJECT.dbform_replica_set.SERVICE["NAME"] and
// module.PROJECT.dbform_peering.VPC["PEER_VPC_ID"]. A create's id, endpoints and password are
// unknown until apply (`after_unknown`), and a service's password is sensitive (`after_sensitive`),
// as Terraform marks them; the plan holds no password to mask.
nlohmann::ordered_json terraform_plan_json(const PlanDocument& doc);

}  // namespace dbform::cli
