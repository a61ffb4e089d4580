#include "manifest/manifest_schema.h"

#include <string>
#include <string_view>

#include "manifest/kind_reader.h"
#include "manifest/model.h"

namespace dbform {

namespace {

// What the kinds do not say. The checks they describe are value_reader.cpp's (names, regions,
// address ranges, ${NAME}), document.cpp's (the top, a project, previews) and kind_reader.cpp's
// (waivers); the project's lists of declarations are added from the kinds. A value that may also
// be ${NAME} is written {"description": ..., "interpolable": FORM}, made what interpolable() makes.
constexpr std::string_view kSharedSchema = R"json({
  "$schema": "https://json-schema.org/draft/2020-12/schema",
  "title": "dbform manifest",
  "description": "Declares, per project, the VPCs and database services dbform creates. Any value may read the environment with ${NAME}, which reads the variable DBFORM_VAR_NAME and no other (`$${` is a literal `${`); dbform checks such values after interpolation, this schema accepts them as they are.",
  "type": "object",
  "additionalProperties": false,
  "required": ["version", "projects"],
  "properties": {
    "version": {"description": "Manifest format version. Must be 1.", "interpolable": {"const": 1}},
    "projects": {
      "type": "array",
      "description": "The projects this manifest declares resources in. May be empty. A project id may appear in several entries and files: their resources merge.",
      "items": {"$ref": "#/$defs/project"}
    }
  },
  "$defs": {
    "interpolated": {
      "type": "string",
      "pattern": "(^|[^$])\\$\\{[A-Za-z_][A-Za-z0-9_]*\\}",
      "description": "A text holding ${NAME}: read from the environment variable DBFORM_VAR_NAME (never from NAME itself); dbform validates the value after interpolation."
    },
    "name": {
      "description": "1-128 letters, digits, '-' and '_', starting with a letter or digit. Names appear in resource addresses (PROJECT/services/NAME) and output paths (NAME.FIELD), so '/', '.' and spaces are not allowed.",
      "interpolable": {"type": "string", "minLength": 1, "maxLength": 128, "pattern": "^[A-Za-z0-9][A-Za-z0-9_-]*$"}
    },
    "region_code": {
      "description": "Cloud region code: lower-case letters, digits and '-', like us-east-1.",
      "examples": ["us-east-1", "eu-central-1"],
      "interpolable": {"type": "string", "minLength": 1, "maxLength": 64, "pattern": "^[a-z0-9][a-z0-9-]*$"}
    },
    "cidr": {
      "description": "Address range in CIDR notation: IPv4 (four octets 0-255 without leading zeros, prefix 0-32) like 10.0.0.0/16, or IPv6 (prefix 0-128) like fd00:10::/48.",
      "examples": ["10.0.0.0/16"],
      "interpolable": {
        "anyOf": [
          {
            "type": "string",
            "pattern": "^(?:(?:25[0-5]|2[0-4][0-9]|1[0-9][0-9]|[1-9]?[0-9])\\.){3}(?:25[0-5]|2[0-4][0-9]|1[0-9][0-9]|[1-9]?[0-9])/(?:3[0-2]|[12]?[0-9])$"
          },
          {
            "type": "string",
            "pattern": "^(?:(?:[0-9a-fA-F]{1,4}:){7}[0-9a-fA-F]{1,4}|::(?:(?:[0-9a-fA-F]{1,4}:){0,6}[0-9a-fA-F]{1,4})?|[0-9a-fA-F]{1,4}::(?:(?:[0-9a-fA-F]{1,4}:){0,5}[0-9a-fA-F]{1,4})?|(?:[0-9a-fA-F]{1,4}:){1}[0-9a-fA-F]{1,4}::(?:(?:[0-9a-fA-F]{1,4}:){0,4}[0-9a-fA-F]{1,4})?|(?:[0-9a-fA-F]{1,4}:){2}[0-9a-fA-F]{1,4}::(?:(?:[0-9a-fA-F]{1,4}:){0,3}[0-9a-fA-F]{1,4})?|(?:[0-9a-fA-F]{1,4}:){3}[0-9a-fA-F]{1,4}::(?:(?:[0-9a-fA-F]{1,4}:){0,2}[0-9a-fA-F]{1,4})?|(?:[0-9a-fA-F]{1,4}:){4}[0-9a-fA-F]{1,4}::(?:(?:[0-9a-fA-F]{1,4}:){0,1}[0-9a-fA-F]{1,4})?|(?:[0-9a-fA-F]{1,4}:){5}[0-9a-fA-F]{1,4}::(?:[0-9a-fA-F]{1,4})?|(?:[0-9a-fA-F]{1,4}:){6}[0-9a-fA-F]{1,4}::|(?:[0-9a-fA-F]{1,4}:){6}(?:(?:25[0-5]|2[0-4][0-9]|1[0-9][0-9]|[1-9]?[0-9])\\.){3}(?:25[0-5]|2[0-4][0-9]|1[0-9][0-9]|[1-9]?[0-9])|::(?:[0-9a-fA-F]{1,4}:){0,5}(?:(?:25[0-5]|2[0-4][0-9]|1[0-9][0-9]|[1-9]?[0-9])\\.){3}(?:25[0-5]|2[0-4][0-9]|1[0-9][0-9]|[1-9]?[0-9])|[0-9a-fA-F]{1,4}::(?:[0-9a-fA-F]{1,4}:){0,4}(?:(?:25[0-5]|2[0-4][0-9]|1[0-9][0-9]|[1-9]?[0-9])\\.){3}(?:25[0-5]|2[0-4][0-9]|1[0-9][0-9]|[1-9]?[0-9])|(?:[0-9a-fA-F]{1,4}:){1}[0-9a-fA-F]{1,4}::(?:[0-9a-fA-F]{1,4}:){0,3}(?:(?:25[0-5]|2[0-4][0-9]|1[0-9][0-9]|[1-9]?[0-9])\\.){3}(?:25[0-5]|2[0-4][0-9]|1[0-9][0-9]|[1-9]?[0-9])|(?:[0-9a-fA-F]{1,4}:){2}[0-9a-fA-F]{1,4}::(?:[0-9a-fA-F]{1,4}:){0,2}(?:(?:25[0-5]|2[0-4][0-9]|1[0-9][0-9]|[1-9]?[0-9])\\.){3}(?:25[0-5]|2[0-4][0-9]|1[0-9][0-9]|[1-9]?[0-9])|(?:[0-9a-fA-F]{1,4}:){3}[0-9a-fA-F]{1,4}::(?:[0-9a-fA-F]{1,4}:){0,1}(?:(?:25[0-5]|2[0-4][0-9]|1[0-9][0-9]|[1-9]?[0-9])\\.){3}(?:25[0-5]|2[0-4][0-9]|1[0-9][0-9]|[1-9]?[0-9])|(?:[0-9a-fA-F]{1,4}:){4}[0-9a-fA-F]{1,4}::(?:(?:25[0-5]|2[0-4][0-9]|1[0-9][0-9]|[1-9]?[0-9])\\.){3}(?:25[0-5]|2[0-4][0-9]|1[0-9][0-9]|[1-9]?[0-9]))/(?:12[0-8]|1[01][0-9]|[1-9]?[0-9])$"
          }
        ]
      }
    },
    "project": {
      "type": "object",
      "description": "A project (the API's project_id) and the resources dbform manages in it.",
      "additionalProperties": false,
      "required": ["id"],
      "properties": {
        "id": {
          "$ref": "#/$defs/name",
          "description": "The project's id as the API knows it (the project_id of its URLs). Often ${PROJECT_ID} (read from DBFORM_VAR_PROJECT_ID)."
        },
        "api_key_env": {
          "description": "The NAME of the environment variable that holds this project's API key (never the key itself): a variable beginning with DBFORM_, other than dbform's own settings. When absent dbform reads DBFORM_API_KEY_<ID>, then DBFORM_API_KEY.",
          "examples": ["DBFORM_PROD_DB_KEY"],
          "interpolable": {
            "type": "string",
            "pattern": "^DBFORM_[A-Za-z0-9_]*$",
            "not": {
              "enum": ["DBFORM_API_URL", "DBFORM_AUTH_SCHEME", "DBFORM_ALLOW_HTTP", "DBFORM_STATE", "DBFORM_WORKSPACE", "DBFORM_STATE_PASSPHRASE", "DBFORM_STATE_KEY_FILE", "DBFORM_STATE_NEW_PASSPHRASE", "DBFORM_STATE_NEW_KEY_FILE", "DBFORM_POLICY", "DBFORM_LOG"]
            }
          }
        },
        "wait_connectable": {
          "description": "true: apply waits, after READY, until each new, resumed, renamed or password-changed service of this project accepts a connection as tsdbadmin with the recorded password (as apply --wait-connectable does for every project). Default false: a pipeline's runner may not reach a VPC-only endpoint.",
          "interpolable": {"type": "boolean"}
        },
        "removed": {
          "type": "array",
          "description": "Addresses of the project to stop managing (Terraform's `removed` block with destroy = false): apply forgets their records (a service's read replica sets and a VPC's peerings with it) and the resources stay in the API untouched. Written as in `dbform state list`, with or without the project. An address both declared and listed here is an error; one not recorded is a no-op, shown.",
          "uniqueItems": true,
          "items": {
            "type": "string",
            "pattern": "^([A-Za-z0-9][A-Za-z0-9_-]{0,127}/)?(services/[A-Za-z0-9][A-Za-z0-9_-]{0,127}(/replicas/[A-Za-z0-9][A-Za-z0-9_-]{0,127})?|vpcs/[A-Za-z0-9][A-Za-z0-9_-]{0,127}(/peerings/[A-Za-z0-9][A-Za-z0-9_-]{0,127})?)$"
          }
        },
        "previews": {"$ref": "#/$defs/previews"}
      }
    },
    "previews": {
      "type": "object",
      "description": "A database per pull request, for reviewing a change against its own data: `dbform preview up NAME` forks each listed service into SERVICE-NAME, tagged DEV, with its own password; `preview down` and `preview sweep` delete them. Previews are not declarations: no plan shows them, `apply --prune` never deletes them.",
      "additionalProperties": false,
      "required": ["services", "ttl", "max"],
      "properties": {
        "services": {
          "type": "array",
          "minItems": 1,
          "uniqueItems": true,
          "items": {"$ref": "#/$defs/name"},
          "description": "Services this project declares; each preview forks every one of them."
        },
        "strategy": {
          "enum": ["LAST_SNAPSHOT", "NOW"],
          "description": "How each fork copies its source: its last snapshot (default) or its data now."
        },
        "ttl": {
          "description": "How long a preview lives: `preview sweep` deletes it once creation + ttl has passed (recorded at creation). A duration with its unit: 72h, 90m, 1h30m, 500ms.",
          "examples": ["72h"],
          "interpolable": {"type": "string", "pattern": "^([0-9]{1,9}(ms|s|m|h))+$"}
        },
        "max": {
          "description": "At most this many previews of the project at once: `preview up` refuses another, naming those that exist.",
          "interpolable": {"type": "integer", "minimum": 1}
        },
        "migrations": {
          "description": "A directory of SQL files (relative to this manifest file) that `preview up` applies to each fork in name order, each in its own transaction, recording each in the table `dbform_migrations` of the fork; `preview diff` shows the fork's schema against its source's.",
          "examples": ["db/migrations"],
          "type": "string",
          "minLength": 1
        },
        "cpu_millis": {"$ref": "#/$defs/service/properties/cpu_millis", "description": "Each fork's CPU (default: its source's)."},
        "memory_gbs": {
          "$ref": "#/$defs/service/properties/memory_gbs",
          "description": "Each fork's memory (default: its source's)."
        }
      }
    },
    "policy_waivers": {
      "description": "Exemptions of this resource from rules of the policy files (`--policy`, docs/policies.md): each names a rule marked `waivable`, says why, and expires. Every plan lists the waivers in force; an expired waiver, or one naming a rule that is not waivable or not defined, is itself a violation. Only checked when rule files are given.",
      "type": "array",
      "items": {
        "type": "object",
        "required": ["rule", "reason", "expires"],
        "additionalProperties": false,
        "properties": {
          "rule": {
            "description": "The id of a rule of the policy files.",
            "interpolable": {"type": "string", "pattern": "^[a-z0-9][a-z0-9-]{0,63}$"}
          },
          "reason": {
            "description": "Why the rule does not hold here, for the reviewer.",
            "interpolable": {"type": "string", "pattern": "\\S"}
          },
          "expires": {
            "description": "A date (valid through that day, UTC) like 2027-01-31, or a UTC time like 2027-01-31T12:00:00Z; years 1970 to 9999.",
            "interpolable": {
              "type": "string",
              "pattern": "^(19[7-9][0-9]|[2-9][0-9]{3})-[0-9]{2}-[0-9]{2}(T[0-9]{2}:[0-9]{2}:[0-9]{2}Z)?$"
            }
          }
        }
      }
    }
  }
})json";

void expand_interpolable(nlohmann::ordered_json& j) {
  if (!j.is_structured()) return;
  for (auto& item : j) expand_interpolable(item);
  if (!j.is_object() || !j.contains("interpolable")) return;
  const std::string description = j["description"].get<std::string>();
  j = interpolable(description.c_str(), j["interpolable"].dump(), j.contains("examples") ? j["examples"].dump() : "");
}

}  // namespace

nlohmann::ordered_json manifest_schema() {
  nlohmann::ordered_json schema = nlohmann::ordered_json::parse(kSharedSchema);
  expand_interpolable(schema);
  nlohmann::ordered_json& defs = schema["$defs"];
  // A project's own kinds' lists go before `removed`, in the order of kind_forms(), as a project's
  // keys are listed in messages.
  nlohmann::ordered_json& project = defs["project"]["properties"];
  nlohmann::ordered_json properties = nlohmann::ordered_json::object();
  for (auto it = project.begin(); it != project.end(); ++it) {
    if (it.key() == "removed")
      for (const KindForm& form : kind_forms())
        if (!form.parent) properties[form.list] = list_schema(form);
    properties[it.key()] = std::move(it.value());
  }
  project = std::move(properties);
  for (const KindForm& form : kind_forms()) defs[form.name] = form.schema();
  return schema;
}

}  // namespace dbform
