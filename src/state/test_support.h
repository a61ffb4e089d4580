#pragma once
// Records the unit tests of the state and of the layers above it build states from.
#include <string>

#include "manifest/model.h"
#include "state/model.h"
#include "state/previews.h"

namespace dbform::test {

// A record of a `kind` named `name` in `project` (and in `parent`, the service or VPC of a read
// replica set or a peering), and nothing else.
inline ResourceRecord record_of(ResourceKind kind, const std::string& project, const std::string& name,
                                const std::string& parent = "") {
  ResourceRecord r;
  r.address = resource_address(project, kind, name, parent);
  r.project_id = project;
  r.kind = kind;
  r.name = name;
  r.parent = parent;
  return r;
}

// A service of `project` recorded with `id` and `status` ("" for either: not known yet).
inline ResourceRecord recorded_service(const std::string& project, const std::string& name, const std::string& id,
                                       const std::string& status) {
  ResourceRecord r = record_of(ResourceKind::Service, project, name);
  r.id = id;
  r.status = status;
  return r;
}

// Service `name` of project p1, created with 1000 millicores, as an apply records it once READY:
// id svc-NAME, endpoint NAME.example:5432, password pw-NAME.
inline ResourceRecord ready_service(const std::string& name) {
  ResourceRecord r = recorded_service("p1", name, "svc-" + name, "READY");
  r.settings = {{"cpu_millis", "1000"}};
  r.endpoint_host = name + ".example";
  r.endpoint_port = 5432;
  r.initial_password = "pw-" + name;
  return r;
}

// The READY fork of `source` that preview `preview` of `project` made at `created`, expiring at
// `expires` (UTC times as the state writes them).
inline ResourceRecord preview_fork(const std::string& project, const std::string& preview, const std::string& source,
                                   const std::string& created, const std::string& expires) {
  ResourceRecord r = recorded_service(project, preview_fork_name(preview, source), "", "READY");
  r.address = preview_address(project, preview, source);
  r.id = "id-" + project + "-" + r.name;
  r.created_at = created;
  r.settings = {{"fork", {{"from", source}, {"strategy", "NOW"}}},
                {"environment_tag", "DEV"},
                {kPreviewKey, {{"name", preview}, {"service", source}, {"expires_at", expires}}}};
  return r;
}

}  // namespace dbform::test
