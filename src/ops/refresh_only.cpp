#include "ops/refresh_only.h"

#include <algorithm>
#include <set>

#include "engine/apply.h"
#include "read/catalogs.h"
#include "read/namesakes.h"
#include "read/refresh.h"
#include "ops/address.h"
#include "ops/keys.h"
#include "ops/locked_state.h"

namespace dbform {

using nlohmann::json;

int RefreshReport::gone() const {
  return static_cast<int>(std::count_if(changes.begin(), changes.end(), [](const OutsideChange& c) { return c.gone; }));
}

namespace {

std::string endpoint_text(const std::string& host, const std::optional<int>& port) {
  if (host.empty() && !port) return "";
  return host + (port ? ":" + std::to_string(*port) : "");
}

// The settings that differ between what the state held and what the refresh read. A record never
// read before is compared on the settings dbform set only: what the API adds (a region it chose)
// is not a change anyone made.
std::vector<FieldChange> field_changes(const ResourceRecord& before, const ResourceRecord& after) {
  std::vector<FieldChange> out;
  if (after.deleted_outside || !after.observed.is_object()) return out;
  const bool read_before = before.observed.is_object();
  const json& was = read_before ? before.observed : before.settings;
  std::set<std::string> fields;
  for (auto it = was.begin(); it != was.end(); ++it)
    if (read_before || after.observed.contains(it.key())) fields.insert(it.key());
  if (read_before)
    for (auto it = after.observed.begin(); it != after.observed.end(); ++it) fields.insert(it.key());
  for (const auto& f : fields) {
    json then = was.is_object() && was.contains(f) ? was.at(f) : json();
    json now = after.observed.contains(f) ? after.observed.at(f) : json();
    if (then != now) out.push_back({f, std::move(then), std::move(now), true});
  }
  return out;
}

// What a person would call a change between the record and what the refresh read; nullopt when the
// refresh changed only what nobody reads (the API's last answer).
std::optional<OutsideChange> outside_change(const ResourceRecord& before, const ResourceRecord& after) {
  OutsideChange c;
  c.address = before.address;
  c.kind = before.kind;
  c.resource_id = before.id;
  c.gone = after.deleted_outside && !before.deleted_outside;
  c.fields = field_changes(before, after);
  c.status_before = before.status;
  c.status_after = after.status;
  c.endpoint_before = endpoint_text(before.endpoint_host, before.endpoint_port);
  c.endpoint_after = endpoint_text(after.endpoint_host, after.endpoint_port);
  c.pooler_before = endpoint_text(before.pooler_host, before.pooler_port);
  c.pooler_after = endpoint_text(after.pooler_host, after.pooler_port);
  c.settled = !before.pending_call.is_null() && after.pending_call.is_null();
  const bool moved = c.status_before != c.status_after || c.endpoint_before != c.endpoint_after ||
                     c.pooler_before != c.pooler_after;
  if (!c.gone && c.fields.empty() && !moved && !c.settled) return std::nullopt;
  return c;
}

// The addresses --target names among the records, and those of what is in them (a service's read
// replica sets, a VPC's peerings); empty for no targets.
std::set<std::string> targeted(const State& state, const std::vector<std::string>& targets) {
  std::set<std::string> out;
  for (const auto& text : targets) {
    try {
      out.insert(resolve_address(state, text).address);
    } catch (const UsageError& e) {
      throw UsageError("--target `" + text + "`: " + e.what() + "; nothing was read");
    }
  }
  for (const auto& rec : state.resources)
    if (auto outer = parent_kind(rec.kind); outer && out.count(resource_address(rec.project_id, *outer, rec.parent)))
      out.insert(rec.address);
  return out;
}

// Reads every record (or the targeted ones) from the API, takes what it shows into `state`, and
// reports what differs. Returns the addresses whose record changed.
std::vector<std::string> refresh_records(const RefreshOnlyRequest& r, State& state, RefreshReport& report) {
  report.last = state.refreshed;
  report.lineage = state.lineage;
  report.serial = state.serial;
  report.targets = r.targets;
  report.last_age_seconds = freshness_of(state, r.clock).age_seconds;
  const std::set<std::string> wanted = targeted(state, r.targets);
  std::set<std::string> projects;
  for (const auto& rec : state.resources)
    if (!rec.id.empty() && (wanted.empty() || wanted.count(rec.address))) {
      projects.insert(rec.project_id);
      ++report.records;
    }
  report.projects.assign(projects.begin(), projects.end());
  if (projects.empty()) return {};
  const auto keys = resolve_keys(r.manifest, report.projects, r.env);
  preflight_keys(r.api, report.projects, keys, r.parallelism);
  // Read into a copy: the report compares each record before and after, and with --target only the
  // targeted records are taken from it.
  State read = state;
  const Manifest none{};  // only the kinds the state records are listed: nothing declared is looked for
  ProjectListings listed = list_projects(r.api, report.projects, keys, r.parallelism, child_scopes(read, Plan{}), {},
                                         kinds_in(none, read));
  RefreshResult result = refresh_state(r.api, r.clock, read, report.projects, keys, std::move(listed),
                                       r.parallelism, r.settle_window);
  CatalogRefresh catalogs = refresh_catalogs(read, Plan{}, report.projects, r.catalogs, r.clock, r.parallelism);
  result.changed.insert(result.changed.end(), catalogs.changed.begin(), catalogs.changed.end());
  for (auto& unread : catalogs.unread)
    if (wanted.empty() || wanted.count(unread.service)) report.catalogs_unread.push_back(std::move(unread));
  for (auto& [service, at] : catalogs.read_at)
    if (wanted.empty() || wanted.count(service)) report.catalogs_read.emplace(service, at);
  std::vector<std::string> changed;
  std::sort(result.changed.begin(), result.changed.end());
  for (const auto& address : result.changed) {
    if (!wanted.empty() && !wanted.count(address)) continue;
    const ResourceRecord& after = *read.find(address);
    if (auto c = outside_change(*state.find(address), after)) report.changes.push_back(std::move(*c));
    state.upsert(after);
    changed.push_back(address);
  }
  return changed;
}

}  // namespace

RefreshOnlyOutcome plan_refresh_only(const RefreshOnlyRequest& request) {
  RefreshOnlyOutcome out;
  auto stored = request.store.read();
  if (!stored) {
    out.end = RefreshOnlyOutcome::End::NoState;
    return out;
  }
  out.state = std::move(*stored);
  refresh_records(request, out.state, out.report);
  return out;
}

RefreshOnlyOutcome apply_refresh_only(const RefreshOnlyRequest& request, const RefreshApplySettings& settings,
                                      RefreshReporter& reporter, const Approver& approve) {
  RefreshOnlyOutcome out;
  bool missing = false;
  const LockedRead read = stored_or_new_noting(missing);
  const StateAccess access{request.store, "apply --refresh-only", settings.lock_timeout, settings.lock_wait,
                           settings.env};
  out.state = with_locked_state(
      access,
      [&](State& state) {
        if (missing) {  // a state is made by what creates something, never by a refresh
          out.end = RefreshOnlyOutcome::End::NoState;
          return Changes{};
        }
        const std::vector<std::string> changed = refresh_records(request, state, out.report);
        reporter.report(out.report);
        if (out.report.has_changes() && !settings.auto_approve && !approve()) {
          out.end = RefreshOnlyOutcome::End::Cancelled;
          return Changes{};
        }
        out.end = RefreshOnlyOutcome::End::Recorded;
        // A targeted refresh read part of the state: it records what it read, but the state as a
        // whole is no more current than before. So is one of a state holding creates whose outcome
        // is unknown (no id: not read here; the next apply looks them up by name).
        const bool whole = request.targets.empty() &&
                           std::none_of(state.resources.begin(), state.resources.end(),
                                        [](const ResourceRecord& rec) { return rec.id.empty(); });
        if (whole)
          stamp_refresh(state, "apply --refresh-only", request.clock, !changed.empty(), out.report.catalogs_read);
        else if (changed.empty()) return Changes{};
        return refresh_changes(changed, state);
      },
      read);
  return out;
}

void stamp_refresh(State& state, const std::string& by, const Clock& clock, bool records_changed,
                   const std::map<std::string, std::string>& catalogs_read) {
  std::map<std::string, std::string> catalogs;
  if (state.refreshed)
    for (const auto& [service, at] : state.refreshed->catalogs)
      if (state.find(service)) catalogs.emplace(service, at);
  for (const auto& [service, at] : catalogs_read) catalogs[service] = at;
  std::optional<long long> unchanged_since;
  if (!records_changed) {
    const auto& last = state.refreshed;
    // Stamps that changed nothing, one after another, all speak of the records of the first's serial.
    unchanged_since = last && last->serial == state.serial && last->unchanged_since ? *last->unchanged_since
                                                                                    : state.serial;
  }
  state.refreshed = RefreshStamp{format_utc(clock.wall_now()), by, state.serial + 1, unchanged_since, std::move(catalogs)};
}

StateFreshness freshness_of(const State& state, const Clock& clock) {
  StateFreshness out;
  out.refreshed = state.refreshed;
  if (state.refreshed)
    if (auto at = parse_utc(state.refreshed->at)) out.age_seconds = (utc_time(clock.wall_now()) - *at).count();
  return out;
}

}  // namespace dbform
