// `dbform import`: bring an existing resource (or every unrecorded one of a project) under dbform,
// recording it as it is.
#include <iostream>

#include "cli/commands.h"
#include "cli/context.h"
#include "cli/manual.h"
#include "ops/import.h"
#include "ops/terraform_import.h"
#include "util/env.h"
#include "util/text.h"
#include "util/json_limits.h"

namespace dbform::cli {

namespace {

struct ImportOptions {
  ManifestOptions manifests;
  StateOptions state;
  std::string address;
  std::string id;
  std::vector<std::string> projects;  // --project: every unrecorded resource of it; with --from-terraform, CONFIG=ID
  std::string generate;  // the manifest file --project writes
  std::string terraform;  // --from-terraform FILE
  bool passwords = false;
  bool force = false;
};

// The API, made when the operation first needs it.
ApiSource api_of(std::unique_ptr<ApiSetup>& api) {
  return [&api]() -> ApiClient& {
    if (!api) api = make_api();
    return *api->client;
  };
}

int import_one(const ImportOptions& opts, const Manifest& manifest) {
  auto store = open_state_store(opts.state);
  std::unique_ptr<ApiSetup> api;
  SystemClock clock;
  const ImportOutcome out = import_operation(
      {StateAccess{*store, "import", lock_timeout(opts.state), lock_wait_on_stderr(), process_env()}, manifest,
       api_of(api), clock, opts.address, opts.id});
  const ResourceRecord& rec = out.record;
  const std::string& address = rec.address;
  std::cout << "Imported " << address << " (id " << rec.id << (rec.status.empty() ? "" : ", " + rec.status) << ").\n";
  if (type_of(rec.kind).has_password)
    std::cout << "Its password is not known (the API gives it only to its create): `dbform rotate-password " << address
              << "` sets a new one.\n";
  else if (const KindForm& form = kind_form(rec.kind); form.password == PasswordOwner::Parent)
    std::cout << "It shares the password of its " << kind_noun(*form.parent) << ", "
              << resource_address(rec.project_id, *form.parent, rec.parent) << ".\n";
  std::cout << "`dbform plan` now compares its declaration with it.\n";
  return 0;
}

int import_project(const ImportOptions& opts, const Manifest& manifest) {
  if (opts.generate.empty()) throw UsageError("--project needs --generate FILE: the manifest to write");
  if (!opts.address.empty()) throw UsageError("give either ADDRESS ID or --project ID --generate FILE, not both");
  const std::string& project = opts.projects.front();  // one: the caller checked
  auto store = open_state_store(opts.state);
  std::unique_ptr<ApiSetup> api;
  SystemClock clock;
  const GenerateImportsOutcome out = generate_imports_operation(
      {*store, manifest, api_of(api), clock, process_env(), project, opts.generate, opts.force});
  const std::vector<ResourceRecord>& records = out.records;
  if (records.empty()) {
    std::cout << "Project " << project << " has nothing the state does not record; " << opts.generate
              << " was not written.\n";
    return 0;
  }
  bool services = false;
  std::cout << "Declared " << records.size() << " resource(s) of project " << project << " in " << opts.generate
            << ", each with its import_id:\n";
  for (const auto& r : records) {
    std::cout << "  " << r.address << " (id " << r.id << ")\n";
    services = services || kind_form(r.kind).password == PasswordOwner::Own;
  }
  std::cout << "Nothing was recorded. Put " << opts.generate << " among the manifests (or copy its declarations into "
            << "them): the plan shows the imports for review, and apply records them.";
  if (services)
    std::cout << " The services' passwords are not known (the API returns one only when it creates a service): "
              << "`dbform rotate-password ADDRESS` sets one.";
  std::cout << "\n";
  return 0;
}

// --project ID (the default provider configuration) and --project CONFIG=ID (an alias, or a module's).
std::map<std::string, std::string> terraform_projects(const std::vector<std::string>& given) {
  std::map<std::string, std::string> projects;
  for (const auto& p : given) {
    const size_t eq = p.find('=');
    const std::string config = eq == std::string::npos ? "" : p.substr(0, eq);
    const std::string id = eq == std::string::npos ? p : p.substr(eq + 1);
    if (id.empty() || (eq != std::string::npos && config.empty()))
      throw UsageError("--project " + valid_utf8(p) + ": give ID (the default provider configuration's project) or "
                       "ALIAS=ID (an aliased one's, `provider[\"registry.terraform.io/timescale/timescale\"].ALIAS`)");
    if (!projects.emplace(config, id).second)
      throw UsageError("--project is given twice for " +
                       (config.empty() ? std::string("the default provider configuration") : "`" + valid_utf8(config) + "`"));
  }
  return projects;
}

int import_from_terraform(const ImportOptions& opts) {
  if (opts.passwords) {
    if (!opts.generate.empty() || !opts.projects.empty())
      throw UsageError("--passwords records passwords and takes neither --generate nor --project: run it on its own");
    auto store = open_state_store(opts.state);
    SystemClock clock;
    const TerraformPasswordsOutcome out = terraform_passwords_operation(
        {StateAccess{*store, "import --from-terraform --passwords", lock_timeout(opts.state), lock_wait_on_stderr(),
                     process_env()},
         opts.terraform});
    if (!out.clear_warning.empty()) std::cerr << "Warning: " << out.clear_warning << "\n";
    std::cout << "Recorded the password of " << out.recorded.size() << " service(s) from " << opts.terraform
              << (out.recorded.empty() ? "." : ":") << "\n";
    auto list = [](const char* heading, const std::vector<std::string>& addresses) {
      if (!addresses.empty() && *heading) std::cout << heading << "\n";
      for (const auto& a : addresses) std::cout << "  " << a << "\n";
    };
    list("", out.recorded);
    list("Kept the password the state holds already for:", out.kept);
    list("Terraform's state holds no password for (`dbform rotate-password ADDRESS` sets one once imported):",
         out.without);
    list("Not recorded by dbform yet (apply the generated manifests first, then run this again):", out.unrecorded);
    return 0;
  }
  if (opts.generate.empty())
    throw UsageError("--from-terraform FILE needs --generate MANIFEST (the manifests to write) or --passwords");
  if (!opts.address.empty()) throw UsageError("give either ADDRESS ID or --from-terraform FILE, not both");
  auto store = open_state_store(opts.state);
  const TerraformGenerateOutcome out = terraform_generate_operation(
      {*store, opts.terraform, terraform_projects(opts.projects), opts.generate, opts.force});
  const TerraformMapping& m = out.mapping;
  std::cout << "Read " << opts.terraform << " (" << out.form << ").\n";
  if (!m.moves.empty()) {
    for (const auto& [file, project] : out.manifests) {
      size_t n = 0;
      for (const auto& move : m.moves) n += move.project == project;
      std::cout << "Declared " << n << " resource(s) of project " << project << " in " << file
                << ", each with its import_id:\n";
      for (const auto& move : m.moves)
        if (move.project == project)
          std::cout << "  " << resource_address(project, move.found.kind, move.found.name, move.found.parent) << "  <- "
                    << move.address << "\n";
    }
  }
  bool behind = false;
  for (const auto& move : m.moves)
    if (!move.not_moved.empty()) {
      if (!behind) std::cout << "Left behind on what was moved (dbform does not manage it):\n";
      behind = true;
      std::cout << "  " << move.address << ": " << join(move.not_moved, ", ") << "\n";
    }
  if (!m.left_out.empty()) {
    std::cout << "Not moved (Terraform keeps managing them):\n";
    for (const auto& l : m.left_out) std::cout << "  " << l.address << ": " << l.why << "\n";
  }
  if (m.other_providers > 0)
    std::cout << m.other_providers << " resource(s) of other providers left alone.\n";
  if (m.moves.empty()) {
    std::cout << "Nothing to move; nothing was written.\n";
    return m.left_out.empty() ? 0 : 1;  // everything left behind: the move has not begun
  }
  std::cout << "Wrote " << out.removed_file << ": a removed block for each resource moved.\n"
            << "Nothing was recorded and no API was called. Next, in one pull request:\n"
            << "  1. `dbform plan` with the manifests shows the imports and nothing else; `dbform apply` records them.\n"
            << "  2. `dbform import --from-terraform " << opts.terraform
            << " --passwords` records the passwords Terraform's state holds.\n"
            << "  3. Put " << out.removed_file << " into the Terraform configuration and delete the resource blocks it "
            << "names: `terraform plan` shows each as no longer managed, none destroyed; `terraform apply` forgets them.\n";
  return 0;
}

}  // namespace

void add_import_command(CLI::App& app, int& exit_code) {
  auto opts = std::make_shared<ImportOptions>();
  auto* cmd = add_command(app, "import", "record an existing resource, or declare a project's unrecorded ones for review",
                          {.text = R"(Brings databases that already exist under dbform without creating anything.

The reviewable way is `import_id: ID` on a declaration (dbform-manifest(5)): the pull request's plan shows the import (and the updates that follow), and apply records it, as Terraform's `import` blocks do. This command stays for one-off work.

`dbform import ADDRESS ID` reads the resource by id with its project's key, takes the state's lock and records it as it is: id, status, endpoints and its settings as observed. The manifests must declare ADDRESS (an undeclared record would be an orphan, and the next `apply --prune` would delete what was just brought in) and are left alone: the next plan compares the declaration with what was imported. A read replica set or a peering is imported through its recorded service or VPC (import that first); a peering's address names its peer VPC. An id the project does not have, an id or an address recorded already, or a service being deleted is an error that changes nothing.

`dbform import --project ID --generate FILE` lists the project and writes FILE: a manifest declaring every service, VPC, read replica set and peering the state does not record, each with its `import_id` and every managed field as it is now, read back before it is written. It records nothing and takes no lock (as Terraform's `-generate-config-out`): a plan with FILE among the manifests shows the imports and nothing else for them, and apply records them, so a FILE written outside the pipeline's manifests is harmless. FILE is never replaced without `--force`. Names that cannot be declared, names recorded under another id, attachments to unlisted VPCs, and a set or peering of a service or VPC the state records already (import it by address) stop it before anything is written, naming each.

Imported services have no known password (the API returns one only to the create): `dbform rotate-password ADDRESS` sets one.

`dbform import --from-terraform FILE --generate MANIFEST` moves what the vendor's Terraform provider (timescale/timescale) manages. FILE is what `terraform state pull` writes (format version 4) or `terraform show -json`'s output. Every `timescale_vpcs`, `timescale_service` (a read replica, one with `read_replica_source`, becomes a read replica set of its service) and `timescale_peering_connection` is declared with its `import_id` and each field the provider recorded, in MANIFEST (a file, or a directory with one PROJECT.yaml per project), with a comment beside each naming its Terraform address and what was not moved. A service's project is not in Terraform's state: `--project ID` gives the default provider configuration's, `--project ALIAS=ID` an aliased one's (`module.db=ID` one configured in a module); a VPC's recorded project must agree. What cannot be moved (a resource whose provider has no project given, an instance of count or for_each, a type dbform does not manage, a Transit Gateway peering, a service in a VPC not moved with it) is listed and left to Terraform. It also writes removed-from-terraform.tf beside the manifests: a `removed` block with `lifecycle { destroy = false }` for each resource moved, so that Terraform forgets them without destroying them. It calls no API and records nothing; two resources naming one id, a name dbform's addresses cannot hold, and files that exist (without `--force`) stop it before anything is written.

`dbform import --from-terraform FILE --passwords` records the password Terraform's state holds for each service the state records with the same id (in the lock; sealed when the state is; refused without its key), so nobody has to rotate on the day of the move; it says which services Terraform held no password for and which dbform does not record yet.)",
                           .environment = kApiEnvironment,
                           .examples = {{"One service, declared in the manifests", "dbform import acme/services/orders kd9w2xp4mz"},
                                        {"A read replica set of a recorded service", "dbform import acme/services/orders/replicas/reporting rs-7h2k"},
                                        {"Everything of a project, declared for review; apply records it", "dbform import --project acme --generate manifests/acme-imported.yaml\ndbform plan -f manifests/"},
                                        {"Moving from Terraform: the manifests, then the passwords", "terraform state pull > terraform.tfstate\ndbform import --from-terraform terraform.tfstate --project acme --generate manifests/\ndbform apply -f manifests/\ndbform import --from-terraform terraform.tfstate --passwords"}}});
  add_manifest_and_state_options(*cmd, opts->manifests, opts->state, true);
  cmd->add_option("address", opts->address, "where to record it: PROJECT/services/NAME, PROJECT/vpcs/NAME, "
                                            "PROJECT/services/SERVICE/replicas/NAME, PROJECT/vpcs/VPC/peerings/PEER_VPC_ID, "
                                            "or a declared resource's short address");
  cmd->add_option("id", opts->id, "its id (a read replica set's or a peering's as its service's or VPC's list shows it)");
  one_value_per_use(cmd->add_option("--project", opts->projects, "with --generate: list this project and declare every resource the state "
                                              "does not record, each with its import_id (records nothing: the apply "
                                              "of a plan with FILE does); with --from-terraform: ID, or ALIAS=ID for "
                                              "an aliased provider configuration (repeatable)"));
  cmd->add_option("--from-terraform", opts->terraform, "a Terraform state (`terraform state pull`, or `terraform show "
                                                       "-json`): with --generate, declare what it holds; with "
                                                       "--passwords, record its passwords");
  cmd->add_flag("--passwords", opts->passwords, "with --from-terraform: record the password Terraform's state holds "
                                                "for each service dbform records with the same id");
  cmd->add_option("--generate", opts->generate, "with --project: the manifest to write (FILE); with --from-terraform: "
                                               "a manifest file, or a directory (one manifest per project)");
  cmd->add_flag("--force", opts->force, "with --generate: replace FILE when it exists");
  cmd->callback([opts, cmd, &exit_code] {
    if (!opts->terraform.empty()) {
      exit_code = import_from_terraform(*opts);
      return;
    }
    if (opts->passwords) throw UsageError("--passwords needs --from-terraform FILE: the Terraform state that holds them");
    if (opts->projects.size() > 1) throw UsageError("--project is given " + std::to_string(opts->projects.size()) +
                                                    " times: --generate declares one project (with --from-terraform, each "
                                                    "provider configuration's)");
    const Manifest manifest = manifests_if_any(opts->manifests, cmd->count("--file") > 0);
    if (!opts->projects.empty()) {
      exit_code = import_project(*opts, manifest);
      return;
    }
    if (opts->address.empty() || opts->id.empty())
      throw UsageError("import needs ADDRESS ID (or --project ID --generate FILE)");
    exit_code = import_one(*opts, manifest);
  });
}

}  // namespace dbform::cli
