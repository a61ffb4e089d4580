// `dbform output`: recorded values for people and pipelines. Secrets only when asked for.
#include <cctype>
#include <iostream>
#include <map>
#include <optional>

#include <nlohmann/json.hpp>

#include "cli/commands.h"
#include "cli/context.h"
#include "state/previews.h"
#include "cli/manual.h"
#include "ops/connections.h"
#include "ops/address.h"
#include "ops/sealed.h"
#include "util/json_limits.h"
#include "util/text.h"

namespace dbform::cli {

namespace {

const std::vector<std::string> kFields = {
    "id",          "name",      "project_id",        "status",   "host",
    "port",        "endpoint",  "pooler",            "pooler_host", "pooler_port",
    "vpc_endpoint", "password", "connection_string", "pooler_connection_string"};

}  // namespace

const std::vector<std::string>& output_fields() { return kFields; }

namespace {

// Fields that hold a password: printed when asked for by name, with --show-secrets, or in the
// env and pgpass formats (which exist to connect).
bool is_secret(const std::string& field) {
  return field == "password" || field == "connection_string" || field == "pooler_connection_string";
}

std::string host_port(const std::string& host, const std::optional<int>& port) {
  if (host.empty()) return "";
  return port ? host + ":" + std::to_string(*port) : host;
}

// Whose password a record's connections use: its own, or (a read replica set) its service's.
const ResourceRecord& password_owner(const State& state, const ResourceRecord& r) {
  const ResourceRecord* owner = password_record(state, r);
  return owner ? *owner : r;
}

// The record whose endpoints a record's connections reach: its own, or a login role's service.
const ResourceRecord& endpoint_owner(const State& state, const ResourceRecord& r) {
  if (!is_login_role(r)) return r;
  const ResourceRecord* service = state.find(resource_address(r.project_id, ResourceKind::Service, r.parent));
  return service ? *service : r;
}

// Who its connections log in as: tsdbadmin, or the login role itself.
std::string user_of(const ResourceRecord& r) { return is_login_role(r) ? r.name : "tsdbadmin"; }

// The endpoint inside the VPC the service is attached to, as the API last showed it.
std::optional<std::pair<std::string, int>> vpc_endpoint(const ResourceRecord& r) {
  if (!r.last_response.is_object()) return std::nullopt;
  for (const char* key : {"vpc_endpoint", "vpcEndpoint"}) {
    const nlohmann::json e = r.last_response.value(key, nlohmann::json());
    if (e.is_object() && e.value("host", nlohmann::json()).is_string() && !e["host"].get<std::string>().empty())
      return std::pair(scrub(e["host"].get<std::string>()), e.value("port", nlohmann::json()).is_number_integer()
                                                         ? e["port"].get<int>()
                                                         : 0);
  }
  return std::nullopt;
}

std::string connection_string(const State& state, const ResourceRecord& r, const std::string& host,
                              const std::optional<int>& port) {
  return connection_uri_as(user_of(r), password_owner(state, r).initial_password.text(), host, port.value_or(0));
}

bool connectable(const ResourceRecord& r) { return kind_form(r.kind).connectable || is_login_role(r); }

// What to do about a password the state does not know: that of an imported or adopted service.
std::string unknown_password(const ResourceRecord& owner) {
  return owner.address + " has no known password (imported or adopted): `dbform rotate-password " + owner.address +
         "` sets one";
}

// Every field of a record by name; nullopt for a field the record does not have (yet).
std::optional<std::string> field_value(const State& state, const ResourceRecord& record, const std::string& field) {
  auto opt = [](const std::string& s) -> std::optional<std::string> {
    if (s.empty()) return std::nullopt;
    return s;
  };
  if (field == "id") return opt(record.id);
  if (field == "name") return record.name;
  if (field == "project_id") return record.project_id;
  if (field == "status") return opt(record.status);
  if (is_login_role(record) && !is_secret(field) && field != "vpc_endpoint" && &endpoint_owner(state, record) != &record)
    return field_value(state, endpoint_owner(state, record), field);  // its service's endpoints
  const ResourceRecord& r = record;
  if (field == "host") return opt(r.endpoint_host);
  if (field == "port") return r.endpoint_port ? std::optional(std::to_string(*r.endpoint_port)) : std::nullopt;
  if (field == "endpoint") return opt(host_port(r.endpoint_host, r.endpoint_port));
  if (field == "pooler") return opt(host_port(r.pooler_host, r.pooler_port));
  if (field == "pooler_host") return opt(r.pooler_host);
  if (field == "pooler_port") return r.pooler_port ? std::optional(std::to_string(*r.pooler_port)) : std::nullopt;
  if (field == "vpc_endpoint") {
    auto e = vpc_endpoint(r);
    return e ? opt(host_port(e->first, e->second ? std::optional(e->second) : std::nullopt)) : std::nullopt;
  }
  if (!connectable(r)) return std::nullopt;
  if (is_secret(field))
    if (const std::string problem = unrotated_fork_problem(password_owner(state, r)); !problem.empty()) throw Error(problem);
  if (field == "password") return opt(password_owner(state, r).initial_password.text());
  const ResourceRecord& at = endpoint_owner(state, r);
  if (field == "connection_string" && !at.endpoint_host.empty())
    return connection_string(state, r, at.endpoint_host, at.endpoint_port);
  if (field == "pooler_connection_string" && !at.pooler_host.empty())
    return connection_string(state, r, at.pooler_host, at.pooler_port);
  return std::nullopt;
}

// field_value for listings: a value that cannot be made (a host from the API that no URI can hold)
// is left out with a note, and does not cost the other records their lines.
std::optional<std::string> listed_value(const State& state, const ResourceRecord& r, const std::string& field) {
  try {
    return field_value(state, r, field);
  } catch (const Error& e) {
    std::cerr << "note: " << r.address << ": no " << field << ": " << e.what() << "\n";
    return std::nullopt;
  }
}

nlohmann::json record_output(const State& state, const ResourceRecord& r, bool show_secrets) {
  nlohmann::json j = {{"kind", kind_name(r.kind)}};
  if (!r.parent.empty()) j["parent"] = r.parent;
  for (const auto& f : kFields) {
    if (is_secret(f) && !show_secrets) continue;
    if (auto v = listed_value(state, r, f)) j[f] = *v;
  }
  if (r.endpoint_port) j["port"] = *r.endpoint_port;
  if (r.pooler_port) j["pooler_port"] = *r.pooler_port;
  return j;
}

// Said on stderr whenever a password goes out: which one it is, when it may not work.
void password_notes(const State& state, const ResourceRecord& r) {
  const ResourceRecord& owner = password_owner(state, r);
  if (&owner != &r)
    std::cerr << "note: " << r.address << " shares the password of its service " << owner.address
              << " (the state records it once)\n";
  if (owner.initial_password.empty())
    std::cerr << "note: " << unknown_password(owner) << "\n";
  if (!owner.pending_password.empty())
    std::cerr << "warning: a password change of " << owner.address
              << " is pending (its answer was lost): the service has this password or the pending one. `dbform "
                 "rotate-password "
              << owner.address << "` completes it and sets a new one\n";
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

// `export NAME='value'` lines for a shell: DBFORM_<PROJECT>_<NAME>_<FIELD> (a read replica set:
// DBFORM_<PROJECT>_<SERVICE>_<SET>_<FIELD>), upper-cased, with every character other than A-Z and
// 0-9 turned into `_` (acme-prod/services/orders -> DBFORM_ACME_PROD_ORDERS_HOST). Values are
// single-quoted, so nothing in them is expanded, and a newline survives `source`.
std::string env_name(const ResourceRecord& r, const std::string& field) {
  std::string name = "DBFORM_" + r.project_id + "_" + (r.parent.empty() ? "" : r.parent + "_") + r.name + "_" + field;
  for (char& c : name) c = std::isalnum(static_cast<unsigned char>(c)) ? std::toupper(static_cast<unsigned char>(c)) : '_';
  return name;
}

std::string env_line(const ResourceRecord& r, const std::string& field, const std::string& value) {
  return "export " + env_name(r, field) + "=" + shell_quote(value) + "\n";
}

const std::vector<std::string> kEnvFields = {"id",          "host",     "port",
                                             "pooler_host", "pooler_port", "password",
                                             "connection_string", "pooler_connection_string"};

// Every service's and read replica set's lines. Two addresses that make the same name
// (acme-prod/services/orders-pooler and acme/services/prod-orders-pooler, or orders' POOLER_HOST and
// orders-pooler's HOST) would overwrite each other's values without anyone noticing, so that is an
// error naming both.
void print_env(const State& state, const std::vector<const ResourceRecord*>& records) {
  std::map<std::string, std::string> owner;
  for (const auto* r : records)
    for (const auto& field : kEnvFields) {
      auto [it, fresh] = owner.emplace(env_name(*r, field), r->address);
      if (!fresh)
        throw UsageError(it->second + " and " + r->address + " would both set " + it->first +
                         "; print their values one at a time with `dbform output ADDRESS.FIELD`");
    }
  for (const auto* r : records)
    for (const auto& field : kEnvFields)
      if (auto v = listed_value(state, *r, field)) std::cout << env_line(*r, field, *v);
}

// One `hostname:port:database:username:password` line per endpoint that has a known password, with
// `\`, `:` and `*` escaped by a backslash as libpq reads ~/.pgpass: a field that is `*` matches
// every value there, so a host (or password) `*` from the API is written `\*`, which matches only `*`.
void print_pgpass(const State& state, const std::vector<const ResourceRecord*>& records) {
  for (const auto* r : records) {
    const std::string& password = password_owner(state, *r).initial_password.text();
    if (const std::string problem = unrotated_fork_problem(password_owner(state, *r)); !problem.empty()) {
      std::cerr << "note: " << problem << "\n";
      continue;
    }
    if (password.empty()) {
      std::cerr << "note: " << unknown_password(password_owner(state, *r)) << "\n";
      continue;
    }
    if (password.find('\n') != std::string::npos || password.find('\r') != std::string::npos)
      throw Error(r->address + ": its password holds a line break, which a pgpass file cannot hold; use "
                  "`dbform output " + r->address + ".connection_string` instead");
    const ResourceRecord& at = endpoint_owner(state, *r);
    for (const auto& [host, port] : {std::pair(at.endpoint_host, at.endpoint_port), std::pair(at.pooler_host, at.pooler_port)})
      if (host.find_first_of("\r\n") != std::string::npos)
        throw Error(r->address + ": its host holds a line break, which a pgpass file cannot hold");
      else if (!host.empty())
        std::cout << pgpass_field(host) << ":" << (port ? std::to_string(*port) : "*") << ":tsdb:"
                  << pgpass_field(user_of(*r)) << ":" << pgpass_field(password) << "\n";
  }
}

void print_record(const State& state, const ResourceRecord& r, bool show_secrets) {
  std::cout << r.address << "\n";
  std::cout << "  id       " << (r.id.empty() ? "(create outcome unknown)" : r.id) << "\n";
  if (kind_form(r.kind).has_status) std::cout << "  status   " << (r.status.empty() ? "unknown" : r.status) << "\n";
  if (!connectable(r)) return;
  std::cout << "  endpoint " << field_value(state, r, "endpoint").value_or("(not yet known)") << "\n";
  std::cout << "  pooler   " << field_value(state, r, "pooler").value_or("(none)") << "\n";
  if (auto vpc = field_value(state, r, "vpc_endpoint")) std::cout << "  in VPC   " << *vpc << "\n";
  const ResourceRecord& owner = password_owner(state, r);
  const bool unrotated = !unrotated_fork_problem(owner).empty();
  std::cout << "  password "
            << (owner.initial_password.empty()       ? "(unknown)"
                : unrotated                          ? "(its source's, not rotated yet: dbform preview up)"
                : owner.initial_password.is_sealed() ? "(sealed)"
                : show_secrets                       ? owner.initial_password.text()
                : owner.initial_password.is_unreadable() ? "(not readable here)"
                                                     : "(sensitive)")
            << (&owner != &r ? " (its service's: " + owner.address + ")" : "") << "\n";
}

void print_table(const State& state, bool show_secrets) {
  if (state.resources.empty()) {
    std::cout << "The state records no resources yet.\n";
    return;
  }
  for (const ResourceRecord* r : records_by_address(state)) print_record(state, *r, show_secrets);
}

// Why ADDRESS.FIELD has no value: said as precisely as the record allows.
std::string missing_field(const State& state, const ResourceRecord& r, const std::string& field) {
  const bool pooler = field.rfind("pooler", 0) == 0;
  if (connectable(r) && (field == "password" || is_secret(field)) && password_owner(state, r).initial_password.empty() &&
      (field == "password" || !(pooler ? r.pooler_host : r.endpoint_host).empty()))
    return unknown_password(password_owner(state, r));
  if (connectable(r) && pooler && r.pooler_host.empty() && !r.endpoint_host.empty())
    return r.address + " has no connection pooler (its pooler is off): declare `connection_pooler: true` for it and "
           "apply, then ask again";
  return r.address + " has no " + field + " recorded yet";
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
  auto* cmd = add_command(app, "output", "print recorded ids, endpoints and (when asked) passwords",
                          {.text = R"(Prints what the state records, with no API call. Without ADDRESS: every resource, sorted by address (a project's resources together), as a table (text), as JSON, as `export` lines for a shell (`env`: one block per service and read replica set, named `DBFORM_<PROJECT>_<NAME>_<FIELD>` upper-cased, every character other than A-Z and 0-9 turned into `_`; two resources that would set the same name are an error) or as lines of a pgpass file. `ADDRESS` prints one resource in the format asked for (text by default, or JSON); `ADDRESS.FIELD` prints one raw value, for pipelines: `$(dbform output orders.host)`. With no state at the path (a mistyped `--state` or `DBFORM_STATE`), a listing warns on stderr and prints nothing, and an ADDRESS is an error, as plan warns.

A password or a connection string (which holds the password, percent-encoded) is printed only when asked for by field, with `--format env` or `pgpass`, or with `--show-secrets`; text and JSON show `(sensitive)` otherwise. A read replica set shares its service's password, and an imported or adopted service has none known until `dbform rotate-password` sets one: a listing notes it on stderr, and `.password`, `.connection_string` and `.pooler_connection_string` of such a service exit 1 saying so (a connection string without its password would not log in). A preview's fork whose password is not its own yet (a fork starts with its source's) is refused the same way, and left out of listings with a note: `dbform preview up NAME` finishes it. A pooler field of a service whose pooler is off exits 1 naming `connection_pooler`. Connection strings are `postgres://tsdbadmin:PASSWORD@HOST:PORT/tsdb?sslmode=require`. A login role of a service's database (`PROJECT/services/S/roles/NAME`, docs/database-objects.md) has its own password and connects at its service's endpoints as itself: `postgres://NAME:PASSWORD@HOST:PORT/tsdb?sslmode=require`; its env lines are `DBFORM_<PROJECT>_<SERVICE>_<ROLE>_<FIELD>`.

When the state's passwords are sealed (docs/state.md), ids, endpoints and statuses print without the key, and a sealed password shows as `(sealed)`; a password or connection string asked for by field, `--format env`, `--format pgpass` and `--show-secrets` need the key (`DBFORM_STATE_PASSPHRASE` or `DBFORM_STATE_KEY_FILE`) and exit 1 saying so without it. The same commands exit 1, naming the table, for a PostgreSQL role that may not read dbform_secrets.)",
                           .examples = {{"Every recorded resource", "dbform output"},
                                        {"Connect with psql", "psql \"$(dbform output acme/services/orders.connection_string)\""},
                                        {"Endpoints and passwords for the next step of a pipeline", "eval \"$(dbform output --format env)\""},
                                        {"A pgpass file", "(umask 077; dbform output --format pgpass > ~/.pgpass)"}}});
  add_state_options(*cmd, opts->state, false);
  cmd->add_option("--format", opts->format,
                  "text (default), json, env (`export NAME='value'` lines for a shell, passwords and connection "
                  "strings included) or pgpass (host:port:tsdb:tsdbadmin:password lines for ~/.pgpass)")
      ->check(CLI::IsMember({"text", "json", "env", "pgpass"}));
  cmd->add_flag("--json", opts->json, "the same as --format json");
  cmd->add_flag("--show-secrets", opts->show_secrets, "include passwords and connection strings in text and json");
  cmd->add_option("address", opts->target, "ADDRESS or ADDRESS.FIELD (fields: " + join(kFields, ", ") + ")");
  cmd->callback([opts, cmd, &exit_code] {
    if (opts->json) {
      if (cmd->count("--format") && opts->format != "json")
        throw UsageError("--json means --format json; give only one of them");
      opts->format = "json";
    }
    auto store = open_state_store(opts->state);
    State state = read_recorded_state(*store, false);
    exit_code = 0;
    // As plan says it: a mistyped --state or DBFORM_STATE must not look like an empty project.
    const bool no_state = state.serial == 0 && state.resources.empty();
    const std::string no_state_at = "No state at " + store->describe();
    const std::string point_it = "If the resources exist already, point --state (or DBFORM_STATE) at their state";
    if (no_state && !opts->target.empty())
      throw Error(no_state_at + ", so `" + opts->target + "` is not recorded. " + point_it);
    if (no_state) std::cerr << "warning: " << no_state_at << ": nothing is recorded. " << point_it << ".\n";
    const bool lines = opts->format == "env" || opts->format == "pgpass";
    // Whatever prints a password needs the key of a state whose passwords are sealed; the other
    // fields (ids, endpoints, statuses) read without it.
    if (lines) require_state_key(*store, state, "output --format " + opts->format);
    if (opts->show_secrets) require_state_key(*store, state, "output --show-secrets");
    if (lines) require_readable_secrets(state, "output --format " + opts->format);
    if (opts->show_secrets) require_readable_secrets(state, "output --show-secrets");
    auto print_lines = [&](const std::vector<const ResourceRecord*>& records) {
      if (opts->format == "env") return print_env(state, records);
      print_pgpass(state, records);
    };
    if (opts->target.empty()) {
      if (opts->format == "text") return no_state ? void() : print_table(state, opts->show_secrets);
      if (lines) {
        std::vector<const ResourceRecord*> records;
        for (const ResourceRecord* r : records_by_address(state))
          if (connectable(*r)) records.push_back(r);
        return print_lines(records);
      }
      nlohmann::ordered_json all = nlohmann::ordered_json::object();
      for (const ResourceRecord* r : records_by_address(state)) all[r->address] = record_output(state, *r, opts->show_secrets);
      std::cout << dump_json(all, 2) << "\n";
      return;
    }
    auto [address, field] = split_field(state, opts->target);
    const ResourceRecord& r = resolve_address(state, address);
    if (is_secret(field) && connectable(r)) require_state_key(*store, state, "output " + r.address + "." + field);
    if (field.empty()) {
      if (opts->format == "text") print_record(state, r, opts->show_secrets);
      else if (!lines) std::cout << dump_json(record_output(state, r, opts->show_secrets), 2) << "\n";
      else if (const std::string problem = unrotated_fork_problem(password_owner(state, r)); !problem.empty())
        throw Error(problem);
      else if (connectable(r)) print_lines({&r});
      else throw UsageError("--format " + opts->format + " prints the endpoints of services and read replica sets; " +
                            r.address + " is a " + kind_noun(r.kind) + " (its id: dbform output " + r.address + ".id)");
      return;
    }
    if (opts->format == "pgpass") throw UsageError("--format pgpass prints whole records: give ADDRESS, not ADDRESS.FIELD");
    auto value = field_value(state, r, field);
    // A connection string without its password would not log in: asked for by field, it is refused
    // as the password is.
    if (value && is_secret(field) && connectable(r) && password_owner(state, r).initial_password.empty())
      value.reset();
    if (!value) throw Error(missing_field(state, r, field));
    if (is_secret(field)) password_notes(state, r);
    // The raw value, for pipelines: $(dbform output orders.password). Asking by field is asking for it.
    if (opts->format == "json") std::cout << dump_json(nlohmann::json(*value)) << "\n";
    else if (opts->format == "env") std::cout << env_line(r, field, *value);
    else std::cout << *value << "\n";
  });
}

}  // namespace dbform::cli
