// Services: a project's databases. A create's answer carries the password, which its read replica
// sets share; `vpc` names the project's VPC it is attached to.
#include "manifest/model.h"

namespace dbform {

KindForm service_form() {
  using T = PolicyFieldType;
  return {
      .kind = ResourceKind::Service,
      .name = "service",
      .plural = "services",
      .noun = "service",
      .parent = std::nullopt,
      .list = "services",
      .name_key = "name",
      .fields = {"addons", "cpu_millis", "memory_gbs", "environment_tag", "region_code", "replica_count",
                 "sync_replica_count", "vpc", "connection_pooler", "paused"},
      .ready_status = "READY",
      .settled_status = "PAUSED",
      .policy_fields = {{"project_id", T::Text},       {"name", T::Text},           {"addons", T::TextList},
                        {"cpu_millis", T::Size},       {"memory_gbs", T::Size},     {"environment_tag", T::Tag},
                        {"region_code", T::Text},      {"replica_count", T::Number}, {"sync_replica_count", T::Number},
                        {"paused", T::Bool},           {"vpc", T::Text},            {"connection_pooler", T::Bool},
                        {"deletion_protection", T::Bool}},
      .password = PasswordOwner::Own,
      .connectable = true,
      .has_status = true,
      .refers = KindReference{"vpc", ResourceKind::Vpc},
      .delete_note = ", with its data",
  };
}

}  // namespace dbform
