// `dbform output`: recorded values for people and pipelines. Secrets only when asked for.
#include <cctype>
#include <iostream>
#include <map>
#include <optional>

#include <nlohmann/json.hpp>

#include "cli/address.h"
#include "cli/commands.h"
#include "cli/context.h"
#include "util/json_limits.h"
#include "util/text.h"

namespace dbform::cli {

namespace {

const std::vector<std::string> kFields = {"id", "name", "project_id", "status", "host", "port", "endpoint",
                                          "pooler", "pooler_host", "pooler_port", "password"};

std::string host_port(const std::string& host, const std::optional<int>& port) {
  if (host.empty()) return "";
  return port ? host + ":" + std::to_string(*port) : host;
}

// Every field of a record by name; nullopt for a field the record does not have yet.
std::optional<std::string> field_value(const ResourceRecord& r, const std::string& field) {
  auto opt = [](const std::string& s) -> std::optional<std::string> {
    if (s.empty()) return std::nullopt;
    return s;
  };
  if (field == "id") return opt(r.id);
  if (field == "name") return r.name;
  if (field == "project_id") return r.project_id;
  if (field == "status") return opt(r.status);
  if (field == "host") return opt(r.endpoint_host);
  if (field == "port") return r.endpoint_port ? std::optional(std::to_string(*r.endpoint_port)) : std::nullopt;
  if (field == "endpoint") return opt(host_port(r.endpoint_host, r.endpoint_port));
  if (field == "pooler") return opt(host_port(r.pooler_host, r.pooler_port));
  if (field == "pooler_host") return opt(r.pooler_host);
  if (field == "pooler_port") return r.pooler_port ? std::optional(std::to_string(*r.pooler_port)) : std::nullopt;
  if (field == "password") return opt(r.initial_password);
  return std::nullopt;
}

nlohmann::json record_output(const ResourceRecord& r, bool show_secrets) {
  nlohmann::json j = {{"kind", kind_name(r.kind)}};
  for (const auto& f : kFields) {
    if (f == "password" && !show_secrets) continue;
    if (auto v = field_value(r, f)) j[f] = *v;
  }
  if (r.endpoint_port) j["port"] = *r.endpoint_port;
  if (r.pooler_port) j["pooler_port"] = *r.pooler_port;
  return j;
}

// Splits "ADDRESS.FIELD" where FIELD is a known field and ADDRESS is not itself a record.
std::pair<std::string, std::string> split_field(const State& state, const std::string& arg) {
  auto dot = arg.rfind('.');
  if (dot == std::string::npos || state.find(arg)) return {arg, ""};
  std::string field = arg.substr(dot + 1);
  for (const auto& f : kFields)
    if (f == field) return {arg.substr(0, dot), field};
  // ADDRESS.FIELD whose field is none: name the field, not a missing resource.
  bool names_resource = false;
  try {
    resolve_address(state, arg.substr(0, dot));
    names_resource = true;
  } catch (const UsageError&) {
  }
  if (names_resource) {
    const std::string close = closest_match(field, kFields);
    throw UsageError("`" + field + "` is not an output field" + (close.empty() ? "" : " (did you mean `" + close + "`?)") +
                     "; the fields are " + join(kFields, ", "));
  }
  return {arg, ""};
}

// `export NAME='value'` lines for a shell: DBFORM_<PROJECT>_<NAME>_<FIELD>, upper-cased, with
// every character other than A-Z and 0-9 turned into `_` (acme-prod/services/orders ->
// DBFORM_ACME_PROD_ORDERS_HOST). Values are single-quoted, so nothing in them is expanded.
std::string env_name(const ResourceRecord& r, const std::string& field) {
  std::string name = "DBFORM_" + r.project_id + "_" + r.name + "_" + field;
  for (char& c : name) c = std::isalnum(static_cast<unsigned char>(c)) ? std::toupper(static_cast<unsigned char>(c)) : '_';
  return name;
}

std::string env_line(const ResourceRecord& r, const std::string& field, const std::string& value) {
  return "export " + env_name(r, field) + "=" + shell_quote(value) + "\n";
}

const std::vector<std::string> kEnvFields = {"id", "host", "port", "pooler_host", "pooler_port", "password"};

std::string env_lines(const ResourceRecord& r, bool show_secrets) {
  std::string out;
  for (const auto& field : kEnvFields)
    if (field != "password" || show_secrets)
      if (auto v = field_value(r, field)) out += env_line(r, field, *v);
  return out;
}

// Every service's lines. Two addresses that make the same name (acme-prod/services/orders-pooler
// and acme/services/prod-orders-pooler, or orders' POOLER_HOST and orders-pooler's HOST) would
// overwrite each other's values without anyone noticing, so that is an error naming both.
void print_env(const std::vector<const ResourceRecord*>& records, bool show_secrets) {
  std::map<std::string, std::string> owner;
  for (const auto* r : records)
    for (const auto& field : kEnvFields) {
      auto [it, fresh] = owner.emplace(env_name(*r, field), r->address);
      if (!fresh)
        throw UsageError(it->second + " and " + r->address + " would both set " + it->first +
                         "; print their values one at a time with `dbform output ADDRESS.FIELD`");
    }
  for (const auto* r : records) std::cout << env_lines(*r, show_secrets);
}

void print_table(const State& state, bool show_secrets) {
  if (state.resources.empty()) {
    std::cout << "The state records no resources yet.\n";
    return;
  }
  for (const auto& r : state.resources) {
    std::cout << r.address << "\n";
    std::cout << "  id       " << (r.id.empty() ? "(create outcome unknown)" : r.id) << "\n";
    if (r.kind == ResourceKind::Service) {
      std::cout << "  status   " << (r.status.empty() ? "unknown" : r.status) << "\n";
      std::cout << "  endpoint " << field_value(r, "endpoint").value_or("(not yet known)") << "\n";
      std::cout << "  pooler   " << field_value(r, "pooler").value_or("(none)") << "\n";
      std::cout << "  password "
                << (r.initial_password.empty() ? "(unknown)" : show_secrets ? r.initial_password : "(sensitive)") << "\n";
    }
  }
}

}  // namespace

void add_output_command(CLI::App& app, int& exit_code) {
  struct Options {
    StateOptions state;
    std::string format = "text";
    bool json = false;
    bool show_secrets = false;
    std::string target;
  };
  auto opts = std::make_shared<Options>();
  auto* cmd = app.add_subcommand("output", "print recorded ids, endpoints and (when asked) passwords");
  add_state_options(*cmd, opts->state, false);
  cmd->add_option("--format", opts->format, "text (default), json, or env (`export NAME='value'` lines for a shell)")
      ->check(CLI::IsMember({"text", "json", "env"}));
  cmd->add_flag("--json", opts->json, "the same as --format json");
  cmd->add_flag("--show-secrets", opts->show_secrets, "include initial passwords");
  cmd->add_option("address", opts->target,
                  "ADDRESS or ADDRESS.FIELD (fields: id, name, project_id, status, host, port, endpoint, pooler, "
                  "pooler_host, pooler_port, password)");
  cmd->callback([opts, cmd, &exit_code] {
    if (opts->json) {
      if (cmd->count("--format") && opts->format != "json")
        throw UsageError("--json means --format json; give only one of them");
      opts->format = "json";
    }
    auto store = open_state_store(opts->state);
    State state = read_state(*store);
    exit_code = 0;
    if (opts->target.empty()) {
      if (opts->format == "text") return print_table(state, opts->show_secrets);
      if (opts->format == "env") {
        std::vector<const ResourceRecord*> services;
        for (const auto& r : state.resources)
          if (r.kind == ResourceKind::Service) services.push_back(&r);
        return print_env(services, opts->show_secrets);
      }
      nlohmann::json all = nlohmann::json::object();
      for (const auto& r : state.resources) all[r.address] = record_output(r, opts->show_secrets);
      std::cout << dump_json(all, 2) << "\n";
      return;
    }
    auto [address, field] = split_field(state, opts->target);
    const ResourceRecord& r = resolve_address(state, address);
    if (field.empty()) {
      if (opts->format != "env") std::cout << dump_json(record_output(r, opts->show_secrets), 2) << "\n";
      else if (r.kind == ResourceKind::Service) print_env({&r}, opts->show_secrets);
      else throw UsageError("--format env prints services' endpoints; " + r.address + " is a VPC (its id: dbform output " +
                            r.address + ".id)");
      return;
    }
    auto value = field_value(r, field);
    if (!value)
      throw Error(r.address + " has no " + field + " recorded" +
                  (field == "password" ? " (adopted resources have no known initial password)" : " yet"));
    if (field == "password" && !r.pending_password.empty())
      std::cerr << "warning: a password change of " << r.address
                << " is pending (its answer was lost): the service has this password or the pending one. `dbform "
                   "rotate-password "
                << r.address << "` completes it and sets a new one\n";
    // The raw value, for pipelines: $(dbform output orders.password). Asking by field is asking for it.
    if (opts->format == "json") std::cout << dump_json(nlohmann::json(*value)) << "\n";
    else if (opts->format == "env") std::cout << env_line(r, field, *value);
    else std::cout << *value << "\n";
  });
}

}  // namespace dbform::cli
