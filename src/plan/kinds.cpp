#include "plan/kinds.h"

#include <stdexcept>

#include "plan/kind_rows.h"

namespace dbform {

const std::vector<CallType>& call_types() {
  static const std::vector<CallType> all = {
      {.name = "rename", .renames = true, .may_find_paused = true, .reconnects = true},
      {.name = "start", .async = true, .starts = true, .may_find_paused = true, .reconnects = true},
      {.name = "resize", .async = true},
      {.name = "setEnvironment"},
      {.name = "setHA", .async = true},
      {.name = "enablePooler"},
      {.name = "disablePooler"},
      {.name = "attachToVPC", .async = true, .vpc = VpcEffect::Attach},
      {.name = "detachFromVPC", .async = true, .vpc = VpcEffect::Detach},
      {.name = "stop", .async = true, .may_find_paused = true},
  };
  return all;
}

const CallType& call_type(const std::string& call) {
  static const CallType unknown{.name = ""};
  for (const CallType& c : call_types())
    if (call == c.name) return c;
  return unknown;
}

bool is_async_call(const std::string& call) { return call_type(call).async; }

Shown shown_of(Service s) {
  return {std::move(s.service_id), std::move(s.name),  std::move(s.status),          std::move(s.endpoint),
          std::move(s.pooler_endpoint), std::move(s.initial_password), std::move(s.raw)};
}

Shown shown_of(ReplicaSet r) {
  return {std::move(r.id), std::move(r.name), std::move(r.status), std::move(r.endpoint), std::move(r.pooler_endpoint),
          "", std::move(r.raw)};
}

Scope scope_of(const State& state, const std::string& project_id, ResourceKind kind, const std::string& parent) {
  Scope scope{project_id, ""};
  if (auto outer = parent_kind(kind))
    if (const ResourceRecord* rec = state.find(resource_address(project_id, *outer, parent))) scope.parent_id = rec->id;
  return scope;
}

Shown shown_at(const ResourceType& type, ApiObject object) {
  Shown s;
  s.id = std::move(object.id);
  s.name = text_field(object.raw, type.name_field);
  if (*type.status_field) s.status = text_field(object.raw, type.status_field);
  s.raw = std::move(object.raw);
  return s;
}

const ResourceType& type_of(ResourceKind kind) {
  if (kind_form(kind).in_database) return database_object_type(kind);
  for (const ResourceType* type : resource_types())
    if (type->kind == kind) return *type;
  throw std::logic_error(std::string("no row in resource_types() for kind ") + kind_name(kind));
}

const std::vector<const ResourceType*>& resource_types() {
  // A new kind is its file (type_NAME.cpp) and a line here, in the order of kind_forms(). The
  // objects inside a database, which no API call makes, are not among them (type_objects.cpp).
  static const std::vector<const ResourceType*> all = {&vpc_type(), &service_type(), &replica_set_type(),
                                                        &peering_type()};
  return all;
}

nlohmann::json created_with(ResourceKind kind, const nlohmann::json& declared) {
  return type_of(kind).created_with(declared);
}

void record_answer(ResourceRecord& rec, Shown&& shown, const std::string& now) {
  // An id, once recorded, is the resource's: an answer naming another one cannot move it.
  if (rec.id.empty() && !shown.id.empty()) rec.id = shown.id;
  if (!shown.status.empty()) rec.status = shown.status;
  if (!shown.endpoint.empty()) {
    rec.endpoint_host = shown.endpoint.host;
    rec.endpoint_port = shown.endpoint.port;
  }
  // An answer without a pooler has none (any more).
  rec.pooler_host = shown.pooler_endpoint.host;
  rec.pooler_port = shown.pooler_endpoint.port;
  if (!shown.initial_password.empty()) rec.initial_password = shown.initial_password;  // never overwritten by empty
  rec.last_response = std::move(shown.raw);
  rec.updated_at = now;
}

void record_answer(ResourceRecord& rec, const Shown& shown, const std::string& now) {
  record_answer(rec, Shown(shown), now);
}

bool answer_recorded(const ResourceRecord& rec, const Shown& shown) {
  return (!rec.id.empty() || shown.id.empty()) && (shown.status.empty() || shown.status == rec.status) &&
         (shown.endpoint.empty() ||
          (rec.endpoint_host == shown.endpoint.host && rec.endpoint_port == shown.endpoint.port)) &&
         rec.pooler_host == shown.pooler_endpoint.host && rec.pooler_port == shown.pooler_endpoint.port &&
         rec.last_response == shown.raw;
}

bool call_took_effect(const ResourceType& type, const std::string& call, const nlohmann::json& body,
                      const nlohmann::json& shown) {
  if (!shown.is_object()) return false;
  if (call == "rename") return shown.value("name", nlohmann::json()) == body.value("name", nlohmann::json());
  return type.took_effect(call, body, shown);
}

}  // namespace dbform

