#include "cli/render_terraform.h"

#include <string>

namespace dbform::cli {

using nlohmann::ordered_json;

namespace {

constexpr const char* kTerraformFormat = "1.2";
constexpr const char* kProviderName = "dbform/dbform";

// Terraform's actions for each of dbform's: a replacement deletes, then creates (what it replaces
// holds no data of its own); an adoption may create; a wait, an orphan kept and a conflict change
// nothing (a saved plan never holds a conflict).
ordered_json actions_of(Action a) {
  switch (a) {
    case Action::Create:
    case Action::Adopt: return {"create"};
    case Action::Update: return {"update"};
    case Action::Delete: return {"delete"};
    case Action::Replace: return {"delete", "create"};
    case Action::Forget: return {"forget"};
    case Action::NoOp:
    case Action::Wait:
    case Action::Conflict:
    case Action::Orphan: break;
  }
  return {"no-op"};
}

struct Place {
  std::string module;   // module.PROJECT
  std::string type;     // dbform_service
  std::string name;     // the resource's, or its parent's for what lives in another
  std::string index;    // its own name then; "" otherwise
  std::string address;  // module.PROJECT.dbform_service.NAME
};

Place place_of(const PlannedAction& a) {
  Place p;
  p.module = "module." + a.project_id;
  p.type = std::string("dbform_") + kind_name(a.kind);
  if (a.parent.empty()) {
    p.name = a.name;
  } else {
    p.name = a.parent;
    p.index = a.name;
  }
  p.address = p.module + "." + p.type + "." + p.name + (p.index.empty() ? "" : "[" + ordered_json(p.index).dump() + "]");
  return p;
}

// Settings as a policy compares them: a size that is a number ("1000", "0.5") as one (in Rego a
// string sorts above every number), "shared" as it is; and deletion_protection, which the plan
// keeps beside the settings.
ordered_json values_of(const nlohmann::json& settings, bool protection) {
  if (settings.is_null()) return ordered_json();
  ordered_json values = ordered_json::parse(settings.dump());
  for (const char* key : {"cpu_millis", "memory_gbs"})
    if (auto it = values.find(key); it != values.end() && it->is_string()) {
      const std::string& text = it->get_ref<const std::string&>();
      ordered_json number = ordered_json::parse(text, nullptr, false);
      if (!number.is_discarded() && number.is_number()) *it = number;
    }
  values["deletion_protection"] = protection;
  return values;
}

// The recorded protection: a change of it says what it was; otherwise as declared.
bool protection_before(const PlannedAction& a) {
  for (const auto& c : a.changes)
    if (c.field == "deletion_protection" && c.before.is_boolean()) return c.before.get<bool>();
  return a.deletion_protection;
}

// What apply learns: the id, and a service's endpoints and password.
ordered_json unknown_after_create(ResourceKind kind) {
  ordered_json unknown = {{"id", true}};
  if (kind_form(kind).password == PasswordOwner::Own) {
    unknown["hostname"] = true;
    unknown["port"] = true;
    unknown["password"] = true;
  }
  return unknown;
}

ordered_json sensitive_of(ResourceKind kind, bool present) {
  if (!present) return false;
  ordered_json marks = ordered_json::object();
  if (kind_form(kind).password == PasswordOwner::Own) marks["password"] = true;
  return marks;
}

void add_resource(ordered_json& modules, const Place& p, const ordered_json& values, ResourceKind kind) {
  ordered_json* module = nullptr;
  for (auto& m : modules)
    if (m["address"] == p.module) module = &m;
  if (!module) {
    modules.push_back({{"address", p.module}, {"resources", ordered_json::array()}});
    module = &modules.back();
  }
  ordered_json r = {{"address", p.address}, {"mode", "managed"}, {"type", p.type}, {"name", p.name}};
  if (!p.index.empty()) r["index"] = p.index;
  r["provider_name"] = kProviderName;
  r["schema_version"] = 0;
  r["values"] = values;
  r["sensitive_values"] = sensitive_of(kind, true);
  (*module)["resources"].push_back(std::move(r));
}

}  // namespace

ordered_json terraform_plan_json(const PlanDocument& doc) {
  ordered_json changes = ordered_json::array();
  ordered_json modules = ordered_json::array();
  for (const PlannedAction& a : doc.plan.actions) {
    const Place p = place_of(a);
    const ordered_json actions = actions_of(a.action);
    const bool gone = a.action == Action::Delete || a.action == Action::Forget || a.action == Action::Orphan;
    const ordered_json before = values_of(a.before, protection_before(a));
    const ordered_json after = gone ? ordered_json() : values_of(a.after, a.deletion_protection);
    const bool creates = actions.back() == "create";
    ordered_json change = {{"actions", actions},
                           {"before", before},
                           {"after", after},
                           {"after_unknown", creates ? unknown_after_create(a.kind) : ordered_json::object()},
                           {"before_sensitive", sensitive_of(a.kind, !before.is_null())},
                           {"after_sensitive", sensitive_of(a.kind, !after.is_null())}};
    if (!a.import_id.empty()) change["importing"] = {{"id", a.import_id}};
    ordered_json rc = {{"address", p.address}, {"module_address", p.module}, {"mode", "managed"}, {"type", p.type},
                       {"name", p.name}};
    if (!p.index.empty()) rc["index"] = p.index;
    rc["provider_name"] = kProviderName;
    rc["change"] = std::move(change);
    if (a.action == Action::Replace) rc["action_reason"] = "replace_because_cannot_update";
    else if (a.action == Action::Delete) rc["action_reason"] = "delete_because_no_resource_config";
    changes.push_back(std::move(rc));
    if (!after.is_null()) add_resource(modules, p, after, a.kind);
  }
  return {{"format_version", kTerraformFormat},
          {"terraform_version", DBFORM_VERSION},
          {"planned_values", {{"root_module", {{"child_modules", std::move(modules)}}}}},
          {"resource_changes", std::move(changes)},
          {"output_changes", ordered_json::object()},
          {"timestamp", doc.created_at},
          {"errored", false},
          {"applyable", !doc.plan.summary.has_conflicts()},
          {"complete", true}};
}

}  // namespace dbform::cli
