// `dbform import`: bring an existing resource (or every unrecorded one of a project) under dbform,
// recording it as it is.
#include <filesystem>
#include <iostream>

#include "cli/commands.h"
#include "cli/context.h"
#include "cli/manual.h"
#include "engine/import.h"
#include "ops/keys.h"
#include "manifest/manifest_writer.h"
#include "ops/address.h"
#include "state/file_store.h"
#include "util/atomic_file.h"
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

// --generate FILE must not be the state, its journal, backup or lock (`--force` or not): the
// manifest would replace what it records.
void refuse_own_file(const StateStore& store, const std::string& file) {
  const auto* files = dynamic_cast<const FileStateStore*>(&store);
  if (!files) return;
  std::error_code ec;
  const auto target = std::filesystem::weakly_canonical(file, ec);
  for (const auto& own : files->own_files()) {
    std::error_code own_ec, same_ec;
    if ((!ec && std::filesystem::weakly_canonical(own, own_ec) == target && !own_ec) ||
        std::filesystem::equivalent(own, file, same_ec))
      throw UsageError("--generate " + file + " is " + own + ", a file of the state " + store.describe() +
                       "; nothing was changed. Write the manifest elsewhere");
  }
}

int import_one(const ImportOptions& opts, const Manifest& manifest) {
  const std::string address = declared_address(manifest, opts.address);
  const std::string project = address.substr(0, address.find('/'));
  auto store = open_state_store(opts.state);
  auto lock = lock_state(*store, "import", opts.state);
  State state = read_state(*store);
  if (const ResourceRecord* rec = state.find(address))
    throw UsageError(address + " is recorded already (id " + (rec->id.empty() ? "unknown" : rec->id) +
                     "); nothing was changed. `dbform state rm " + address + "` forgets it first");
  const std::string key = resolve_keys(manifest, {project}, process_env()).at(project).key;
  auto api = make_api();
  ResourceRecord rec = import_by_id(*api->client, key, address, state, opts.id, format_utc(api->clock.wall_now()));
  state.upsert(rec);
  std::vector<std::string> changed = {address};
  if (rec.kind == ResourceKind::Vpc)  // services recorded as attached to it by id now name it
    for (auto& a : name_attachments(state, project, rec.id, rec.name)) changed.push_back(std::move(a));
  store->write_changes(state, changed);
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
  if (std::filesystem::exists(opts.generate) && !opts.force)
    throw UsageError(opts.generate + " exists; nothing was changed. Choose another file, or --force to replace it");
  auto store = open_state_store(opts.state);
  refuse_own_file(*store, opts.generate);
  // Records nothing (the imports are reviewed as manifest changes and recorded by apply): no lock.
  State state = read_state(*store);
  const auto keys = resolve_keys(manifest, {opts.project}, process_env());
  auto api = make_api();
  ProjectListings listings = list_projects(*api->client, {opts.project}, keys, 1);
  if (!listings.errors.empty())
    throw Error("project " + opts.project + " could not be listed, nothing was changed: " + listings.errors.begin()->second);
  ProjectListing& listing = listings.listed[opts.project];
  try {
    list_children(*api->client, keys.at(opts.project).key, opts.project, listing);
  } catch (const std::exception& e) {
    throw Error("project " + opts.project + " could not be listed, nothing was changed: " + describe_exception(e));
  }
  std::vector<ResourceRecord> records = unrecorded_resources(listing, opts.project, state,
                                                             format_utc(api->clock.wall_now()));
  if (records.empty()) {
    std::cout << "Project " << opts.project << " has nothing the state does not record; " << opts.generate
              << " was not written.\n";
    return 0;
  }
  write_file_atomically(opts.generate, generated_manifest(opts.project, found_resources(records), opts.generate), 0644);
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
              << "`dbform rotate-password ADDRESS` sets one once they are recorded.";
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
