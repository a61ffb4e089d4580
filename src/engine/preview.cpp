#include "engine/preview.h"

#include <algorithm>

#include "plan/kinds.h"
#include "read/namesakes.h"
#include "engine/jobs.h"
#include "engine/password.h"
#include "plan/differ.h"
#include "util/duration.h"
#include "util/text.h"

namespace dbform {

namespace {

std::string preview_words(const std::string& project_id, const std::string& name) {
  return "preview `" + name + "` of project " + project_id;
}

// The settings a fork is created with: the block's strategy and size, tagged DEV (PROD and
// deletion protection are never copied), no HA or pooler change; the mark that makes it a preview.
nlohmann::json fork_settings(const DesiredPreviews& block, const std::string& name, const std::string& service,
                             const std::string& expires_at) {
  nlohmann::json s = {{"fork", {{"from", service}, {"strategy", block.strategy}}}, {"environment_tag", "DEV"}};
  if (block.cpu_millis) s["cpu_millis"] = *block.cpu_millis;
  if (block.memory_gbs) s["memory_gbs"] = *block.memory_gbs;
  s[kPreviewKey] = {{"name", name}, {"service", service}, {"expires_at", expires_at}};
  return s;
}

// A preview's fork is a service without a parent (the codec refuses any other record under previews/).
PlannedAction fork_action(Action action, const ResourceRecord& rec) {
  PlannedAction a = action_on(rec, action);
  a.after = rec.settings;
  return a;
}

void finish(Plan& plan, const State& state) {
  plan.state_lineage = state.lineage;
  plan.state_serial = state.serial;
  plan.max_deletes = static_cast<int>(plan.actions.size());
  plan.summary = summarize(plan.actions);
}

// A fork whose delete was sent (journaled) or that the API shows on its way out.
bool being_deleted(const ResourceRecord& rec) {
  return rec.delete_pending() || rec.status == "DELETING" || rec.status == "DELETED";
}

// The previews of a project other than `name`, each with its age: for the `max` refusal.
std::string others_with_ages(const State& state, const std::string& project_id, WallTime now) {
  std::vector<std::string> out;
  for (const auto& p : recorded_previews(state, project_id))
    out.push_back(p.name + " (" + preview_age(p.created_at, now) + " old)");
  return join(out, ", ");
}

// What makes room under `max`, as the previews recorded now allow: a sweep only when one has
// expired (else it deletes nothing), `down` of one, or a sweep that keeps the open pull requests'.
std::string what_makes_room(const State& state, const std::string& project_id, WallTime now) {
  std::vector<std::string> expired, open;
  for (const auto& p : recorded_previews(state, project_id)) (preview_expired(p, now) ? expired : open).push_back(p.name);
  if (!expired.empty())
    return "`dbform preview sweep` deletes the expired " + std::string(expired.size() == 1 ? "one" : "ones") + " (" +
           join(expired, ", ") + ")";
  // `down NAME` deletes NAME in every project: named elsewhere too, the suggestion keeps to this one.
  bool elsewhere = false;
  for (const auto& p : recorded_previews(state, "")) elsewhere = elsewhere || (p.project_id != project_id && p.name == open.front());
  return "none has expired yet, so `dbform preview sweep` alone deletes nothing: `dbform preview down " + open.front() +
         (elsewhere ? " --project " + project_id : "") + "` deletes the oldest, or `dbform preview sweep --keep NAME...`, naming the previews of the pull requests "
         "still open, deletes the others";
}

}  // namespace

std::string preview_age(const std::string& created_at, WallTime now) {
  const auto created = parse_utc(created_at);
  if (!created) return "unknown age";
  const auto age = std::chrono::duration_cast<Duration>(utc_time(now) - *created);  // in seconds first: up to 9999
  if (age.count() < 0) return "0s";
  const long long hours = std::chrono::duration_cast<std::chrono::hours>(age).count();
  if (hours >= 48) {
    const std::string rest = std::to_string(hours % 24);
    return std::to_string(hours / 24) + "d" + (rest.size() == 1 ? "0" : "") + rest + "h";
  }
  return format_duration(age);
}

void require_preview_name(const std::string& name) {
  if (!is_valid_preview_name(name))
    throw UsageError("`" + name + "` is not a preview name: 1-" + std::to_string(kMaxPreviewNameLength) +
                     " lowercase letters, digits and '-' (a pull request's number fits: pr-123); nothing was changed");
}

bool PreviewUpPlan::needs_calls(const State& state) const {
  return !reset.actions.empty() || !forks.actions.empty() || !forks_to_rotate(*this, state).empty();
}

std::vector<std::string> forks_to_rotate(const PreviewUpPlan& up, const State& state) {
  std::vector<std::string> out;
  // Every recorded fork of the preview: those of a service since dropped from the block too.
  for (const auto& p : recorded_previews(state, up.project_id))
    if (p.name == up.name)
      for (const ResourceRecord* rec : p.forks)
        if (!rec->id.empty() && rec->is_ready() && !preview_password_rotated(*rec)) out.push_back(rec->address);
  return out;  // one not READY failed in the engine's run: reported there
}

PreviewUpPlan plan_preview_up(const DesiredProject& project, const std::string& name, const State& state,
                              WallTime now, bool reset) {
  require_preview_name(name);
  if (!project.previews)
    throw UsageError("project " + project.id + " has no `previews:` block, so it has no previews to make; declare "
                     "one (see `dbform help manifest`)");
  const DesiredPreviews& block = *project.previews;
  PreviewUpPlan up;
  up.project_id = project.id;
  up.name = name;
  const auto recorded = recorded_previews(state, project.id);
  const bool exists = std::any_of(recorded.begin(), recorded.end(), [&](const RecordedPreview& p) { return p.name == name; });
  const std::string refused = "; nothing was changed";
  if (!exists && static_cast<long long>(recorded.size()) >= block.max)
    throw UsageError("project " + project.id + " has " + std::to_string(recorded.size()) + " previews, the most its " +
                     "`previews:` block allows (max: " + std::to_string(block.max) + "): " +
                     others_with_ages(state, project.id, now) + ". To make room, " +
                     what_makes_room(state, project.id, now) + refused);
  std::vector<std::string> problems;
  for (const auto& service : block.services) {
    const std::string address = preview_address(project.id, name, service);
    const std::string fork_name = preview_fork_name(name, service);
    up.addresses.push_back(address);
    const ResourceRecord* own = state.find(address);
    const ResourceRecord* source = state.find(resource_address(project.id, ResourceKind::Service, service));
    const bool forks_now = !own || reset;
    if (reset && own && own->deletion_protection)
      problems.push_back(own->address + " is protected (deletion_protection: true, recorded), so --reset cannot "
                         "delete it");
    if (forks_now && (!source || source->id.empty()))
      problems.push_back("its service `" + service + "` is not recorded (apply the manifests first)");
    else if (forks_now && !source->is_ready())
      problems.push_back("its service `" + service + "` is not READY (status " +
                         (source->status.empty() ? std::string("unknown") : source->status) + ")");
    for (const auto& s : project.services)
      if (s.name == fork_name)
        problems.push_back("the fork's name `" + fork_name + "` is declared as a service at " + s.location.str());
    for (const auto& rec : state.resources)
      if (rec.project_id == project.id && rec.name == fork_name && rec.address != address && rec.kind == ResourceKind::Service)
        problems.push_back("the fork's name `" + fork_name + "` is recorded as " + rec.address);
  }
  if (!problems.empty())
    throw UsageError(preview_words(project.id, name) + " cannot be made: " + join(problems, "; ") + refused);
  const std::string expires_at = format_utc(now + Duration(block.ttl_ms));
  if (reset && exists) {
    std::vector<const ResourceRecord*> forks;
    for (const auto& p : recorded)
      if (p.name == name) forks = p.forks;
    std::vector<std::string> unsettled;
    up.reset = plan_preview_delete(state, forks, &unsettled);
    if (!unsettled.empty())  // deleting around a create that may exist could leave it behind
      throw UsageError("the create of " + join(unsettled, ", ") + " has an unknown outcome: run `dbform preview up " +
                       name + "` without --reset first (it finds the fork by name), then reset" + refused);
  }
  for (const auto& p : recorded)  // a preview half deleted is not one to report (--reset deletes it all)
    for (const ResourceRecord* rec : p.forks)
      if (p.name == name && !reset && being_deleted(*rec))
        throw UsageError(rec->address + " (" + rec->name + ") is being deleted (status " +
                         (rec->status.empty() ? std::string("unknown") : rec->status) + ", a `preview down` or "
                         "`sweep` stopped half-way?): `dbform preview down " + name + "` finishes it, then `dbform "
                         "preview up " + name + "` makes the preview again" + refused);
  for (size_t i = 0; i < block.services.size(); ++i) {
    const ResourceRecord* rec = reset ? nullptr : state.find(up.addresses[i]);
    if (rec && rec->create_pending) up.forks.actions.push_back(fork_action(Action::Adopt, *rec));
    else if (rec && (!rec->is_ready() || rec->deleted_outside)) {
      if (rec->deleted_outside)
        throw UsageError(rec->address + " (" + rec->name + ") was deleted outside dbform: `dbform preview up " + name +
                         " --reset` makes the preview again" + refused);
      up.forks.actions.push_back(fork_action(Action::Wait, *rec));
    } else if (!rec) {
      ResourceRecord made;
      made.address = up.addresses[i];
      made.project_id = project.id;
      made.name = preview_fork_name(name, block.services[i]);
      made.settings = fork_settings(block, name, block.services[i], expires_at);
      PlannedAction a = fork_action(Action::Create, made);
      a.before = nullptr;
      up.forks.actions.push_back(std::move(a));
    }
  }
  finish(up.reset, state);
  finish(up.forks, state);
  return up;
}

Plan plan_preview_delete(const State& state, const std::vector<const ResourceRecord*>& forks,
                         std::vector<std::string>* unsettled) {
  Plan plan;
  for (const ResourceRecord* rec : forks) {
    if (rec->id.empty()) {
      if (unsettled) unsettled->push_back(rec->address);
      continue;
    }
    plan.actions.push_back(fork_action(Action::Delete, *rec));
    plan.actions.back().after = nullptr;
  }
  finish(plan, state);
  return plan;
}

SweepChoice choose_sweep(const State& state, const std::string& project_id, const std::set<std::string>& keep,
                         WallTime now) {
  SweepChoice choice;
  std::vector<RecordedPreview> previews = recorded_previews(state, project_id);
  std::stable_sort(previews.begin(), previews.end(), [](const RecordedPreview& a, const RecordedPreview& b) {
    return preview_created(a) < preview_created(b);  // oldest first across the projects
  });
  for (const auto& p : previews) {
    const std::string where = p.project_id + "/previews/" + p.name;
    const bool expired = preview_expired(p, now);
    if (!expired && (keep.empty() || keep.count(p.name))) {
      choice.kept.push_back(where + ": " + (keep.count(p.name) ? "kept" : "not expired") + ", expires " + p.expires_at);
      continue;
    }
    SweepItem item{p.project_id, where, expired ? "expired " + p.expires_at : "not kept", {}};
    for (const ResourceRecord* fork : p.forks) item.forks.push_back(fork->address);
    choice.due.push_back(std::move(item));
  }
  return choice;
}

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
    else if (read->status != "READY")
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
