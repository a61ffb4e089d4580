// Read replica sets: read-only copies of a service (their parent), reached at their own endpoint
// with their service's password.
#include "manifest/model.h"

namespace dbform {

KindForm replica_set_form() {
  using T = PolicyFieldType;
  return {
      .kind = ResourceKind::ReplicaSet,
      .name = "replica_set",
      .plural = "replicas",
      .noun = "read replica set",
      .parent = ResourceKind::Service,
      .list = "read_replicas",
      .name_key = "name",
      .fields = {"nodes", "cpu_millis", "memory_gbs", "environment_tag", "connection_pooler"},
      .ready_status = "active",
      .settled_status = "",
      .policy_fields = {{"project_id", T::Text},        {"service", T::Text},        {"name", T::Text},
                        {"nodes", T::Number},           {"cpu_millis", T::Number},   {"memory_gbs", T::Number},
                        {"connection_pooler", T::Bool}, {"environment_tag", T::Tag}, {"deletion_protection", T::Bool}},
      .password = PasswordOwner::Parent,
      .connectable = true,
      .has_status = true,
      .refers = std::nullopt,
      .delete_note = " (it holds no data of its own)",
  };
}

}  // namespace dbform
