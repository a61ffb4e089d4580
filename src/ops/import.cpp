#include "ops/import.h"

#include <filesystem>

#include "read/import.h"
#include "ops/keys.h"
#include "manifest/manifest_writer.h"
#include "read/namesakes.h"
#include "ops/address.h"
#include "state/file_store.h"
#include "util/atomic_file.h"

namespace dbform {

void refuse_state_file(const StateStore& store, const std::string& file) {
  const auto* files = dynamic_cast<const FileStateStore*>(&store);
  if (!files) return;
  std::error_code ec;
  const auto target = std::filesystem::weakly_canonical(file, ec);
  for (const auto& own : files->own_files()) {
    std::error_code own_ec, same_ec;
    if ((!ec && std::filesystem::weakly_canonical(own, own_ec) == target && !own_ec) ||
        std::filesystem::equivalent(own, file, same_ec))
      throw UsageError("--generate would write " + file + ", which is " + own + ", a file of the state " +
                       store.describe() + "; nothing was changed. Write the manifest elsewhere");
  }
}

ImportOutcome import_operation(const ImportRequest& r) {
  const std::string address = declared_address(r.manifest, r.address);
  const std::string project = address.substr(0, address.find('/'));
  ImportOutcome out;
  with_locked_state(r.access, [&](State& state) {
    if (const ResourceRecord* rec = state.find(address))
      throw UsageError(address + " is recorded already (id " + (rec->id.empty() ? "unknown" : rec->id) +
                       "); nothing was changed. `dbform state rm " + address + "` forgets it first");
    const std::string key = resolve_keys(r.manifest, {project}, r.access.env).at(project).key;
    ApiClient& api = r.api();
    out.record = import_by_id(api, key, address, state, r.id, format_utc(r.clock.wall_now()));
    state.upsert(out.record);
    Changes changes;
    changes.save = Changes::Save::Journal;
    changes.changed = {address};
    for (auto& a : name_attachments(state, out.record)) changes.changed.push_back(std::move(a));
    return changes;
  });
  return out;
}

GenerateImportsOutcome generate_imports_operation(const GenerateImportsRequest& r) {
  if (std::filesystem::exists(r.file) && !r.force)
    throw UsageError(r.file + " exists; nothing was changed. Choose another file, or --force to replace it");
  refuse_state_file(r.store, r.file);
  // Records nothing (the imports are reviewed as manifest changes and recorded by apply): no lock.
  State state = stored_or_new(r.store);
  const auto keys = resolve_keys(r.manifest, {r.project}, r.env);
  ApiClient& api = r.api();
  ProjectListings listings = list_projects(api, {r.project}, keys, 1);
  if (!listings.errors.empty())
    throw Error("project " + r.project + " could not be listed, nothing was changed: " + listings.errors.begin()->second);
  ProjectListing& listing = listings.listed[r.project];
  try {
    list_children(api, keys.at(r.project).key, r.project, listing);
  } catch (const std::exception& e) {
    throw Error("project " + r.project + " could not be listed, nothing was changed: " + describe_exception(e));
  }
  GenerateImportsOutcome out;
  out.records = unrecorded_resources(listing, r.project, state, format_utc(r.clock.wall_now()));
  if (!out.records.empty()) write_file_atomically(r.file, generated_manifest(r.project, found_resources(out.records), r.file), 0644);
  return out;
}

}  // namespace dbform
