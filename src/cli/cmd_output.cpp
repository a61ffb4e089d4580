// `dbform output`: recorded values for people and pipelines. Secrets only when asked for.
#include <iostream>
#include <optional>

#include <nlohmann/json.hpp>

#include "cli/address.h"
#include "cli/commands.h"
#include "cli/context.h"

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
  return {arg, ""};
}

void print_table(const State& state) {
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
      std::cout << "  password " << (r.initial_password.empty() ? "(unknown)" : "(sensitive)") << "\n";
    }
  }
}

}  // namespace

void add_output_command(CLI::App& app, int& exit_code) {
  struct Options {
    StateOptions state;
    bool json = false;
    bool show_secrets = false;
    std::string target;
  };
  auto opts = std::make_shared<Options>();
  auto* cmd = app.add_subcommand("output", "print recorded ids, endpoints and (when asked) passwords");
  add_state_options(*cmd, opts->state, false);
  cmd->add_flag("--json", opts->json, "JSON instead of text");
  cmd->add_flag("--show-secrets", opts->show_secrets, "include initial passwords");
  cmd->add_option("address", opts->target,
                  "ADDRESS or ADDRESS.FIELD (fields: id, name, project_id, status, host, port, endpoint, pooler, "
                  "pooler_host, pooler_port, password)");
  cmd->callback([opts, &exit_code] {
    auto store = open_state_store(opts->state);
    State state = read_state(*store);
    exit_code = 0;
    if (opts->target.empty()) {
      if (!opts->json) return print_table(state);
      nlohmann::json all = nlohmann::json::object();
      for (const auto& r : state.resources) all[r.address] = record_output(r, opts->show_secrets);
      std::cout << all.dump(2) << "\n";
      return;
    }
    auto [address, field] = split_field(state, opts->target);
    const ResourceRecord& r = resolve_address(state, address);
    if (field.empty()) {
      std::cout << record_output(r, opts->show_secrets).dump(2) << "\n";
      return;
    }
    auto value = field_value(r, field);
    if (!value)
      throw Error(r.address + " has no " + field + " recorded" +
                  (field == "password" ? " (adopted resources have no known initial password)" : " yet"));
    // The raw value, for pipelines: $(dbform output orders.password). Asking by field is asking for it.
    if (opts->json) std::cout << nlohmann::json(*value).dump() << "\n";
    else std::cout << *value << "\n";
  });
}

}  // namespace dbform::cli
