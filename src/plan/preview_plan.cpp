#include "plan/preview_plan.h"

#include <algorithm>

#include "plan/differ.h"
#include "plan/kinds.h"
#include "util/duration.h"
#include "util/text.h"

namespace dbform {

namespace {

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

void finish(Plan& plan, const State& state) {
  plan.state_lineage = state.lineage;
  plan.state_serial = state.serial;
  plan.max_deletes = static_cast<int>(plan.actions.size());
  plan.summary = summarize(plan.actions);
}

// A fork whose delete was sent (journaled) or that the API shows on its way out.
bool being_deleted(const ResourceRecord& rec) {
  return rec.delete_pending() || type_of(rec.kind).leaving(rec.status);
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

std::string preview_words(const std::string& project_id, const std::string& name) {
  return "preview `" + name + "` of project " + project_id;
}

PlannedAction fork_action(Action action, const ResourceRecord& rec) {
  PlannedAction a = action_on(rec, action);
  a.after = rec.settings;
  return a;
}

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

}  // namespace dbform
