#pragma once
// A Terraform state as `dbform import --from-terraform` reads it: the file `terraform
// state pull` writes (format version 4) or `terraform show -json`'s output (format_version 1.x),
// each resource instance with its address, type, provider configuration and recorded attributes.
// A state holds passwords: no message quotes a value read from it, only paths, types and names.
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

namespace dbform {

struct TerraformInstance {
  std::string address;   // module.db.timescale_service.orders["eu"], as Terraform names it
  std::string resource;  // the resource's address without an instance key: a `removed` block's `from`
  std::string type;      // "timescale_service"
  // The provider's source ("registry.terraform.io/timescale/timescale") and its configuration as
  // `--project CONFIG=ID` names it: "" the root module's default, "eu" an alias, "module.db" or
  // "module.db.eu" one configured in a module. None: the file does not say (show -json names no
  // configuration).
  std::string provider;
  std::optional<std::string> configuration;
  bool keyed = false;             // an instance of `count` or `for_each`
  bool in_module_instance = false;  // in an instance of a module with `count` or `for_each`
  bool tainted = false;  // marked for replacement (`status: tainted`)
  bool deposed = false;  // a replacement's old object, to be deleted
  nlohmann::json attributes;      // an object: what the provider recorded
  std::set<std::string> sensitive;  // top-level attributes Terraform marks sensitive
  std::string where;  // its place in the file, for messages: "resources[3].instances[0]"
};

struct TerraformState {
  std::string form;  // "a Terraform state (version 4)" or "`terraform show -json` output"
  std::vector<TerraformInstance> instances;  // managed resources only: data sources are read, not owned
};

// Reads `text` (the contents of `file`). Throws UsageError naming the file and the place (line and
// column of a syntax error, the path of a misshapen field) for anything else: another format
// version, a truncated file, a resource without its type or name; nothing in it is quoted.
TerraformState parse_terraform_state(std::string_view text, const std::string& file);

// The vendor's provider: any registry's timescale/timescale.
bool is_timescale_provider(std::string_view source);

}  // namespace dbform
