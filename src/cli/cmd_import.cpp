// `dbform import`: bring an existing resource (or every unrecorded one of a project) under dbform,
// recording it as it is.
#include <iostream>

#include "cli/commands.h"
#include "cli/context.h"
#include "cli/manual.h"
#include "ops/import.h"
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
  std::string project;   // --project: every unrecorded resource of it
  std::string generate;  // the manifest file --project writes
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
  else if (rec.kind == ResourceKind::ReplicaSet)
    std::cout << "It shares the password of its service, "
              << resource_address(rec.project_id, ResourceKind::Service, rec.parent) << ".\n";
  std::cout << "`dbform plan` now compares its declaration with it.\n";
  return 0;
}

int import_project(const ImportOptions& opts, const Manifest& manifest) {
  if (opts.generate.empty()) throw UsageError("--project needs --generate FILE: the manifest to write");
  if (!opts.address.empty()) throw UsageError("give either ADDRESS ID or --project ID --generate FILE, not both");
  auto store = open_state_store(opts.state);
  std::unique_ptr<ApiSetup> api;
  SystemClock clock;
  const GenerateImportsOutcome out = generate_imports_operation(
      {*store, manifest, api_of(api), clock, process_env(), opts.project, opts.generate, opts.force});
  const std::vector<ResourceRecord>& records = out.records;
  if (records.empty()) {
    std::cout << "Project " << opts.project << " has nothing the state does not record; " << opts.generate
              << " was not written.\n";
    return 0;
  }
  bool services = false;
  std::cout << "Declared " << records.size() << " resource(s) of project " << opts.project << " in " << opts.generate
            << ", each with its import_id:\n";
  for (const auto& r : records) {
    std::cout << "  " << r.address << " (id " << r.id << ")\n";
    services = services || r.kind == ResourceKind::Service;
  }
  std::cout << "Nothing was recorded. Put " << opts.generate << " among the manifests (or copy its declarations into "
            << "them): the plan shows the imports for review, and apply records them.";
  if (services)
    std::cout << " The services' passwords are not known (the API returns one only when it creates a service): "
              << "`dbform rotate-password ADDRESS` sets one.";
  std::cout << "\n";
  return 0;
}

}  // namespace

void add_import_command(CLI::App& app, int& exit_code) {
  auto opts = std::make_shared<ImportOptions>();
  auto* cmd = app.add_subcommand("import", "record an existing resource, or declare a project's unrecorded ones for review");
  set_manual(*cmd, {.text = R"(Brings databases that already exist under dbform without creating anything.

The reviewable way is `import_id: ID` on a declaration (dbform-manifest(5)): the pull request's plan shows the import (and the updates that follow), and apply records it, as Terraform's `import` blocks do. This command stays for one-off work.

`dbform import ADDRESS ID` reads the resource by id with its project's key, takes the state's lock and records it as it is: id, status, endpoints and its settings as observed. The manifests must declare ADDRESS (an undeclared record would be an orphan, and the next `apply --prune` would delete what was just brought in) and are left alone: the next plan compares the declaration with what was imported. A read replica set or a peering is imported through its recorded service or VPC (import that first); a peering's address names its peer VPC. An id the project does not have, an id or an address recorded already, or a service being deleted is an error that changes nothing.

`dbform import --project ID --generate FILE` lists the project and writes FILE: a manifest declaring every service, VPC, read replica set and peering the state does not record, each with its `import_id` and every managed field as it is now, read back before it is written. It records nothing and takes no lock (as Terraform's `-generate-config-out`): a plan with FILE among the manifests shows the imports and nothing else for them, and apply records them, so a FILE written outside the pipeline's manifests is harmless. FILE is never replaced without `--force`. Names that cannot be declared, names recorded under another id, attachments to unlisted VPCs, and a set or peering of a service or VPC the state records already (import it by address) stop it before anything is written, naming each.

Imported services have no known password (the API returns one only to the create): `dbform rotate-password ADDRESS` sets one.)",
                    .environment = kApiEnvironment,
                    .examples = {{"One service, declared in the manifests", "dbform import acme/services/orders kd9w2xp4mz"},
                                 {"A read replica set of a recorded service", "dbform import acme/services/orders/replicas/reporting rs-7h2k"},
                                 {"Everything of a project, declared for review; apply records it", "dbform import --project acme --generate manifests/acme-imported.yaml\ndbform plan -f manifests/"}}});
  add_manifest_options(*cmd, opts->manifests);
  add_state_options(*cmd, opts->state, true);
  cmd->add_option("address", opts->address, "where to record it: PROJECT/services/NAME, PROJECT/vpcs/NAME, "
                                            "PROJECT/services/SERVICE/replicas/NAME, PROJECT/vpcs/VPC/peerings/PEER_VPC_ID, "
                                            "or a declared resource's short address");
  cmd->add_option("id", opts->id, "its id (a read replica set's or a peering's as its service's or VPC's list shows it)");
  cmd->add_option("--project", opts->project, "with --generate: list this project and declare every resource the state "
                                             "does not record, each with its import_id (records nothing: the apply "
                                             "of a plan with FILE does)");
  cmd->add_option("--generate", opts->generate, "with --project: the manifest to write (FILE)");
  cmd->add_flag("--force", opts->force, "with --generate: replace FILE when it exists");
  cmd->callback([opts, cmd, &exit_code] {
    const Manifest manifest = manifests_if_any(opts->manifests, cmd->count("--file") > 0);
    if (!opts->project.empty()) {
      exit_code = import_project(*opts, manifest);
      return;
    }
    if (opts->address.empty() || opts->id.empty())
      throw UsageError("import needs ADDRESS ID (or --project ID --generate FILE)");
    exit_code = import_one(*opts, manifest);
  });
}

}  // namespace dbform::cli
