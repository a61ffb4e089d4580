// Read replica sets: read-only copies of a service (their parent), reached at their own endpoint
// with their service's password.
#include "manifest/kind_reader.h"

namespace dbform {

namespace {

// Its sizes are positive whole numbers: a set has no "shared".
auto at_least(long long least, const char* expected) {
  return [least, expected](ValueReader& values, const Entry& f) { return values.whole_number(f, least, expected); };
}

}  // namespace

template <> const FieldTable<DesiredReplicaSet>& field_table<DesiredReplicaSet>() {
  using R = DesiredReplicaSet;
  constexpr std::string_view positive = R"json({"type": "integer", "minimum": 1})json";
  static const FieldTable<R> table{
      "a read replica set",
      "A read replica set of the service. Its name must be unique among the service's read replica sets.",
      {name_row<R>(),
       value_row("nodes", Presence::Required, &R::nodes, at_least(1, "a whole number of nodes, 1 or more"),
                 interpolable("Number of nodes, 1 or more; a change replaces the set with --prune.", positive)),
       value_row("cpu_millis", Presence::Required, &R::cpu_millis,
                 at_least(1, "a whole number of millicores, 1 or more (a read replica set has no \"shared\")"),
                 interpolable("CPU in millicores: a whole number, 1 or more (no \"shared\").", positive)),
       value_row("memory_gbs", Presence::Required, &R::memory_gbs,
                 at_least(1, "a whole number of GB, 1 or more (a read replica set has no \"shared\")"),
                 interpolable("Memory in GB: a whole number, 1 or more (no \"shared\").", positive)),
       value_row("connection_pooler", Presence::Optional, &R::connection_pooler, &ValueReader::boolean,
                 connection_pooler_schema()),
       value_row("environment_tag", Presence::Optional, &R::environment_tag, &ValueReader::environment_tag,
                 environment_tag_schema()),
       deletion_protection_row<R>(), import_id_row<R>(), policy_waivers_row<R>()}};
  return table;
}

nlohmann::json replica_set_settings(const DesiredReplicaSet& r) {
  nlohmann::json j = {{"nodes", r.nodes}, {"cpu_millis", r.cpu_millis}, {"memory_gbs", r.memory_gbs}};
  if (r.connection_pooler) j["connection_pooler"] = *r.connection_pooler;
  if (r.environment_tag) j["environment_tag"] = *r.environment_tag;
  return j;
}

KindForm replica_set_form() {
  using T = PolicyFieldType;
  return {
      .kind = ResourceKind::ReplicaSet,
      .name = "replica_set",
      .plural = "replicas",
      .noun = "read replica set",
      .parent = ResourceKind::Service,
      .list = "read_replicas",
      .fields = {"nodes", "cpu_millis", "memory_gbs", "environment_tag", "connection_pooler"},
      .ready_status = "active",
      .policy_fields = {{"project_id", T::Text},        {"service", T::Text},        {"name", T::Text},
                        {"nodes", T::Number},           {"cpu_millis", T::Number},   {"memory_gbs", T::Number},
                        {"connection_pooler", T::Bool}, {"environment_tag", T::Tag}, {"deletion_protection", T::Bool}},
      .password = PasswordOwner::Parent,
      .connectable = true,
      .has_status = true,
      .delete_note = " (it holds no data of its own)",
      .list_description = "Read replica sets of this service, created once it is READY.",
      .schema = declaration_schema<DesiredReplicaSet>,
  };
}

}  // namespace dbform
