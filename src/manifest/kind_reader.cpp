#include "manifest/kind_reader.h"

#include "util/clock.h"

namespace dbform {

namespace {

const MappingSpec kWaiver{"a policy waiver", {"rule", "reason", "expires"}, {"rule", "reason", "expires"}};

// How to add a missing required key, for the error's hint.
std::string how_to_add(const std::string& key) {
  if (key == "version") return "add `version: 1` at the top";
  if (key == "projects") return "add `projects:` with a list of projects (it may be empty: `projects: []`)";
  if (key == "id") return "add `id: PROJECT_ID`, the project's id as the API knows it";
  if (key == "cidr") return "add an address range, like `cidr: 10.0.0.0/16`";
  if (key == "region_code") return "add a region, like `region_code: us-east-1`";
  return "add `" + key + ": ...`";
}

}  // namespace

std::optional<Fields> KindReader::mapping(const Entry& e, const MappingSpec& spec) {
  return read_mapping(values_, e, spec, how_to_add);
}

// Each waiver exempts its declaration from one rule of the policies (src/policy), which decide
// whether the rule exists and may be waived; here only the form is checked.
std::vector<PolicyWaiver> KindReader::waivers(const Entry& list) {
  std::vector<PolicyWaiver> out;
  items(list, "waivers (rule, reason, expires)", [&](const Entry& e) {
    auto w = mapping(e, kWaiver);
    if (!w) return;
    PolicyWaiver waiver;
    waiver.location = e.where;
    waiver.path = e.path;
    bool usable = true;
    if (const Entry* f = w->find("rule")) {
      auto rule = values_.text(*f, "a rule's id (lowercase letters, digits and '-')");
      if (rule && !is_policy_rule_id(*rule))
        values_.error(f->where, f->path, "expected a rule's id (lowercase letters, digits and '-'), found `" + *rule + "`",
                      "write the `id` of a rule of the policy files");
      if (rule && is_policy_rule_id(*rule)) waiver.rule = *rule;
      else usable = false;
    }
    if (const Entry* f = w->find("reason")) {
      auto reason = values_.text(*f, "text saying why the rule does not hold here");
      if (reason && reason->find_first_not_of(" \t") == std::string::npos) {
        values_.error(f->where, f->path, "a waiver's reason is empty", "say why the rule does not hold here, and until when");
        reason.reset();
      }
      if (reason) waiver.reason = *reason;
      else usable = false;
    }
    if (const Entry* f = w->find("expires")) {
      constexpr std::string_view expected = "a date like 2027-01-31 or a UTC time like 2027-01-31T12:00:00Z (years 1970-9999)";
      auto text = values_.text(*f, expected);
      auto at = text ? parse_expiry(*text) : std::nullopt;
      if (text && !at)
        values_.error(f->where, f->path, "expected " + std::string(expected) + ", found `" + *text + "`",
                      "a date is valid through its last second, UTC");
      if (at) {
        waiver.expires = *text;
        waiver.expires_at = *at;
      } else {
        usable = false;
      }
    }
    if (usable && w->find("rule") && w->find("reason") && w->find("expires")) out.push_back(std::move(waiver));
  });
  return out;
}

nlohmann::ordered_json mapping_schema(const char* description, const std::vector<std::string>& required,
                                      nlohmann::ordered_json properties) {
  nlohmann::ordered_json j = {{"type", "object"}, {"description", description}, {"additionalProperties", false}};
  if (!required.empty()) j["required"] = required;
  j["properties"] = std::move(properties);
  return j;
}

nlohmann::ordered_json interpolable(const char* description, std::string_view form, std::string_view examples) {
  nlohmann::ordered_json j = {{"description", description}};
  if (!examples.empty()) j["examples"] = nlohmann::ordered_json::parse(examples);
  j["if"] = schema_ref("interpolated");
  j["then"] = true;
  j["else"] = nlohmann::ordered_json::parse(form);
  return j;
}

nlohmann::ordered_json schema_ref(const char* def, const char* description) {
  nlohmann::ordered_json j = {{"$ref", std::string("#/$defs/") + def}};
  if (description) j["description"] = description;
  return j;
}

nlohmann::ordered_json list_schema(const KindForm& form) {
  return {{"type", "array"}, {"description", form.list_description}, {"uniqueItems", true},
          {"items", schema_ref(form.name)}};
}

nlohmann::ordered_json deletion_protection_schema() {
  return interpolable("Whether the resource is protected from `--prune`: recorded in the state at every apply, so "
                      "removing the declaration cannot unprotect it. Default false.",
                      R"({"type": "boolean"})");
}

nlohmann::ordered_json import_id_schema() {
  return interpolable("Not recorded yet: the existing resource of this id (it must be of this kind, project and name) "
                      "is read by the plan's refresh and recorded by apply instead of being created; its declared "
                      "settings are then planned against it in the same plan. Ignored once recorded.",
                      R"({"anyOf": [{"type": "string", "pattern": "^[A-Za-z0-9][A-Za-z0-9_-]{0,127}$"},
                                    {"type": "integer", "minimum": 0}]})");
}

nlohmann::ordered_json connection_pooler_schema() {
  return interpolable("Whether the connection pooler is on. Managed only when set.", R"({"type": "boolean"})");
}

nlohmann::ordered_json environment_tag_schema() {
  return interpolable("Environment tag, upper-case: DEV (the API's default) or PROD.", R"({"enum": ["DEV", "PROD"]})");
}

}  // namespace dbform
