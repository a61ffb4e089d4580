#include "ops/preview_runner.h"

#include <algorithm>

#include "api/client.h"
#include "api/project_key.h"
#include "engine/apply.h"
#include "engine/jobs.h"
#include "engine/password.h"
#include "plan/kinds.h"
#include "read/namesakes.h"
#include "util/duration.h"
#include "util/text.h"

namespace dbform {

void PreviewRunner::check_live(const PreviewUpPlan& up, const std::map<std::string, ProjectKey>& keys,
                               const State& state) {
  if (std::none_of(up.forks.actions.begin(), up.forks.actions.end(),
                   [](const PlannedAction& a) { return a.action == Action::Create; }))
    return;
  std::set<std::string> own;  // the preview's recorded forks: --reset deletes them before forking
  for (const auto& a : up.reset.actions) own.insert(a.resource_id);
  ProjectListings listings = list_projects(api_, {up.project_id}, keys, options_.parallelism);
  if (auto error = listings.errors.find(up.project_id); error != listings.errors.end())
    throw Error("could not list project " + up.project_id + " to check that the fork names are free: " + error->second +
                "; nothing was created");
  const auto& services = listings.listed[up.project_id][{ResourceKind::Service, ""}];
  std::vector<std::string> problems;
  for (const auto& a : up.forks.actions) {
    if (a.action != Action::Create) continue;
    for (const auto& s : services)
      if (s.name == a.name && type_of(ResourceKind::Service).is_live(s) && !own.count(s.id))
        problems.push_back("a service named `" + a.name + "` exists already (id " + s.id + "), unrecorded");
    const std::string source_name = a.after["fork"]["from"].get<std::string>();
    const ResourceRecord* source = state.find(resource_address(up.project_id, ResourceKind::Service, source_name));
    auto listed = std::find_if(services.begin(), services.end(), [&](const Shown& s) { return source && s.id == source->id; });
    std::optional<Shown> read;
    if (listed != services.end()) read = *listed;
    else if (source && !source->id.empty())  // lists lag behind writes: one just made may be missing for a while
      read = type_of(ResourceKind::Service).get(api_, keys.at(up.project_id).key, Scope{up.project_id, ""}, source->id);
    if (!read || !type_of(ResourceKind::Service).is_live(*read))
      problems.push_back("its service `" + source_name + "` no longer exists (" +
                         (source ? source->id : std::string("unrecorded")) +
                         ": deleted outside dbform? `dbform plan` shows it)");
    else if (type_of(ResourceKind::Service).verdict(read->status) != StatusVerdict::Ready)
      problems.push_back("its service `" + source_name + "` is " + read->status + " now, not READY");
  }
  if (!problems.empty())
    throw UsageError(preview_words(up.project_id, up.name) + " cannot be made: " + join(problems, "; ") +
                     "; nothing was " + (up.reset.actions.empty() ? "created" : "deleted or created"));
}

ApplyResult PreviewRunner::up(const PreviewUpPlan& up, const std::map<std::string, ProjectKey>& keys, State& state) {
  ApplyResult result;
  if (!up.needs_calls(state)) return result;
  ApplyEngine engine(api_, store_, clock_, events_, [&] {
    ApplyOptions o = options_;
    o.names_checked = true;  // check_live listed the project under this run's lock, before any change
    return o;
  }());
  engine.report_preflight(preflight_keys(api_, {up.project_id}, keys, options_.parallelism));
  if (!up.reset.actions.empty()) {
    result = engine.apply(up.reset, keys, state);
    if (!result.failures.empty() || result.interrupted || !result.save_error.empty()) return result;
  }
  if (!up.forks.actions.empty()) {
    ApplyResult made = engine.apply(up.forks, keys, state);
    made.deleted += result.deleted;
    result = std::move(made);
    if (result.interrupted || !result.save_error.empty()) return result;
  }
  // A snapshot carries its source's credentials: each READY fork gets its own, even when another
  // fork of the preview failed (it is never left usable with production's password).
  const std::string& key = keys.at(up.project_id).key;
  for (const auto& address : forks_to_rotate(up, state)) {
    if (options_.stop && options_.stop->load()) {
      result.interrupted = true;
      return result;
    }
    ResourceRecord& rec = *state.find(address);
    rec.settings[kPreviewKey]["password_rotated"] = true;  // saved with the pending password, before the call
    const std::string password = rec.pending_password.empty() ? random_password() : rec.pending_password.text();
    try {
      rotate_password(api_, store_, state, address, key, password, clock_);
      events_.on_event({EventKind::Updated, address, rec.id, rec.status, Duration(0), "updatePassword"});
    } catch (const Error& e) {
      result.failures.push_back(address + ": " + e.what());
    }
  }
  return result;
}

namespace {

// Why `found`, which has the fork's name, is not provably the fork the record's intent made: forked
// from another service than the recorded source, or created before the intent (where the API shows
// either); "" when it may be the fork.
std::string not_the_fork(const ResourceRecord& rec, const Shown& found, const State& state) {
  const auto mark = preview_mark(rec);
  const ResourceRecord* source =
      mark ? state.find(resource_address(rec.project_id, ResourceKind::Service, mark->service)) : nullptr;
  const nlohmann::json& raw = found.raw;
  if (!raw.is_object()) return "";
  if (auto from = raw.find("forked_from"); from != raw.end() && from->is_object()) {
    const auto id = from->find("service_id");
    const std::string from_id = id != from->end() && id->is_string() ? id->get<std::string>() : "";
    if (!source || source->id.empty() || from_id != source->id)
      return "the API shows it forked from service `" + valid_utf8(from_id) + "`, not from " +
             (source && !source->id.empty() ? source->address + " (" + source->id + ")" : "a recorded source");
  } else if (raw.contains("forked_from") && !raw["forked_from"].is_null()) {
    return "the API shows no service it was forked from";
  }
  if (auto created = raw.find("created"); created != raw.end() && created->is_string()) {
    const auto made = parse_utc(created->get<std::string>());
    const auto intent = parse_utc(rec.created_at);
    if (!made || !intent) return "its creation time `" + valid_utf8(created->get<std::string>()) + "` cannot be compared";
    if (*made < *intent)
      return "it was created at " + created->get<std::string>() + ", before this fork's intent (" + rec.created_at + ")";
  }
  return "";
}

}  // namespace

// A fork whose create's outcome is unknown has no id: it is looked up by name over the settle
// window as the engine does before a create is sent again (lists lag behind writes), adopted when
// found and provably the fork, forgotten only when every lookup found nothing. Only in memory: the
// addresses it changed go to `settled`, which the engine's run saves with its first write.
void PreviewRunner::settle_unknown(const std::vector<std::string>& addresses,
                                   const std::map<std::string, ProjectKey>& keys, State& state, ApplyResult& result,
                                   std::vector<std::string>& settled) {
  const CreateContext ctx{api_, clock_, options_.settle_window, options_.stop};
  for (const auto& address : addresses) {
    ResourceRecord& rec = *state.find(address);
    const std::string kept = "; nothing was deleted, and " + address + " stays recorded";
    const auto key = keys.find(rec.project_id);
    if (key == keys.end()) {
      result.failures.push_back(address + ": no key for project " + rec.project_id + kept);
      continue;
    }
    Outcome out;
    try {
      out = look_up_unknown_create(ctx, fork_action(Action::Adopt, rec), Scope{rec.project_id, ""}, key->second.key);
    } catch (const std::exception& e) {
      result.failures.push_back(address + ": its create's outcome is unknown and the lookup by name failed: " +
                                describe_exception(e) + kept);
      continue;
    }
    if (out.stopped) {
      result.interrupted = true;
      return;
    }
    if (!out.error.empty()) {
      result.failures.push_back(address + ": " + out.error + ", then run it again" + kept);
    } else if (!out.adopted) {  // every lookup of the settle window found nothing: it was never made
      state.remove(address);
      settled.push_back(address);
      ++result.forgotten;
    } else if (const std::string why = not_the_fork(rec, *out.shown, state); !why.empty()) {
      result.failures.push_back(address + ": a service named `" + rec.name + "` exists (id " + out.shown->id +
                                ") but is not provably this preview's fork: " + why + kept +
                                ". If the fork was never made, `dbform state rm " + address + "` forgets the record");
    } else {
      record_answer(rec, *out.shown, format_utc(clock_.wall_now()));
      rec.create_pending = false;
      settled.push_back(address);
    }
  }
}

namespace {

std::vector<std::string> projects_of(const std::vector<std::string>& forks, const State& state) {
  std::vector<std::string> projects;
  for (const auto& address : forks)
    if (const ResourceRecord* rec = state.find(address);
        rec && std::find(projects.begin(), projects.end(), rec->project_id) == projects.end())
      projects.push_back(rec->project_id);
  return projects;
}

void add_up(ApplyResult& into, const ApplyResult& r) {
  into.deleted += r.deleted;
  into.forgotten += r.forgotten;
  into.failures.insert(into.failures.end(), r.failures.begin(), r.failures.end());
  into.interrupted = into.interrupted || r.interrupted;
  if (into.save_error.empty()) {
    into.save_error = r.save_error;
    into.unsaved_changes = r.unsaved_changes;
  }
}

}  // namespace

ApplyResult PreviewRunner::remove(const std::vector<std::string>& forks, const std::map<std::string, ProjectKey>& keys,
                                  State& state) {
  if (forks.empty()) return {};
  ApplyEngine(api_, store_, clock_, events_, options_)
      .report_preflight(preflight_keys(api_, projects_of(forks, state), keys, options_.parallelism));
  return delete_forks(forks, keys, state);
}

ApplyResult PreviewRunner::delete_forks(const std::vector<std::string>& forks,
                                        const std::map<std::string, ProjectKey>& keys, State& state) {
  ApplyResult result;
  std::vector<std::string> unsettled, settled;
  for (const auto& address : forks)
    if (const ResourceRecord* rec = state.find(address); rec && rec->id.empty()) unsettled.push_back(address);
  if (!unsettled.empty()) settle_unknown(unsettled, keys, state, result, settled);
  std::vector<const ResourceRecord*> now;
  if (!result.interrupted)  // stopped while settling: what was settled is saved, nothing is deleted
    for (const auto& address : forks)
      if (const ResourceRecord* rec = state.find(address); rec && !rec->id.empty()) now.push_back(rec);
  Plan plan = plan_preview_delete(state, now);
  if (plan.actions.empty() && settled.empty()) return result;
  // One run saves the settling (with its first write, before any call) and makes the deletes.
  ApplyResult deleted = ApplyEngine(api_, store_, clock_, events_, options_).apply(plan, keys, state, settled);
  deleted.interrupted = deleted.interrupted || result.interrupted;
  deleted.forgotten += result.forgotten;
  deleted.failures.insert(deleted.failures.begin(), result.failures.begin(), result.failures.end());
  return deleted;
}

SweepReport PreviewRunner::sweep(const SweepChoice& choice, int max_deletes,
                                 const std::map<std::string, ProjectKey>& keys,
                                 const std::map<std::string, std::string>& key_problems, State& state) {
  SweepReport report;
  std::map<std::string, std::string> skipped = key_problems;
  std::vector<std::string> projects;
  for (const auto& item : choice.due)
    if (!skipped.count(item.project_id) && std::find(projects.begin(), projects.end(), item.project_id) == projects.end())
      projects.push_back(item.project_id);
  ApplyEngine reporter(api_, store_, clock_, events_, options_);
  for (const auto& project : projects) {  // one rejected key skips its project, not the sweep
    try {
      reporter.report_preflight(preflight_keys(api_, {project}, keys, 1));
    } catch (const Error& e) {
      skipped[project] = e.what();
    }
  }
  int budget = std::max(0, max_deletes);
  const std::string limit = " (--max-deletes " + std::to_string(max_deletes) + ")";
  for (const auto& item : choice.due) {
    std::vector<std::string> forks;
    for (const auto& address : item.forks)
      if (state.find(address)) forks.push_back(address);
    if (auto skip = skipped.find(item.project_id); skip != skipped.end()) {
      report.left.push_back(item.where + ": " + item.why + "; skipped: " + skip->second);
      continue;
    }
    if (report.result.interrupted || !report.result.save_error.empty() || budget == 0) {
      report.left.push_back(item.where + ": " + item.why + "; " + std::to_string(forks.size()) +
                            " of its services left for the next sweep" + (budget == 0 ? limit : ""));
      continue;
    }
    forks.resize(std::min(forks.size(), static_cast<size_t>(budget)));
    const ApplyResult r = delete_forks(forks, keys, state);
    report.tried.insert(report.tried.end(), forks.begin(), forks.end());
    budget -= std::min(budget, r.deleted);  // a delete that failed costs nothing: the next preview is tried
    add_up(report.result, r);
    size_t still = 0;
    for (const auto& address : item.forks) still += state.find(address) ? 1 : 0;
    if (still > 0)
      report.left.push_back(item.where + ": " + item.why + "; " + std::to_string(still) +
                            " of its services left for the next sweep" + (budget == 0 ? limit : ""));
  }
  return report;
}

}  // namespace dbform
