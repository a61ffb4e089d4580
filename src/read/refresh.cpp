#include "read/refresh.h"

#include <set>
#include <unordered_map>

#include "util/parallel.h"
#include "util/log.h"
#include "util/text.h"

namespace dbform {

namespace {

// What a refresh may change of a record; compared so that an unchanged resource costs no write.
bool same_view(const ResourceRecord& a, const ResourceRecord& b) {
  return a.status == b.status && a.endpoint_host == b.endpoint_host && a.endpoint_port == b.endpoint_port &&
         a.pooler_host == b.pooler_host && a.pooler_port == b.pooler_port && a.observed == b.observed &&
         a.pending_call == b.pending_call && a.deleted_outside == b.deleted_outside &&
         a.last_response == b.last_response;
}

const nlohmann::json& field_or_null(const nlohmann::json& object, const std::string& key) {
  static const nlohmann::json null;
  const auto found = object.find(key);
  return found == object.end() ? null : *found;
}

class Refresher {
 public:
  Refresher(ApiClient& api, Clock& clock, State& state, const std::map<std::string, ProjectKey>& keys,
            Duration settle_window)
      : api_(api), wall_now_(clock.wall_now()), now_(format_utc(wall_now_)), state_(state), keys_(keys),
        settle_window_(settle_window) {}

  // Records what `listing` (and reads by id, for what it lacks) shows of the project's records.
  // Works on copies: nothing of the state changes unless every read succeeded.
  void read_project(const std::string& project, const ProjectListing& listing, const std::vector<size_t>& records,
                    std::vector<ResourceRecord>& seen) {
    std::unordered_map<std::string, const Shown*> listed;  // KIND/ID -> what the listing shows
    for (const auto& [scope, resources] : listing)
      for (const auto& r : resources) listed.emplace(kind_name(scope.first) + ("/" + r.id), &r);
    const VpcNames names = recorded_vpc_names(state_, project);
    const std::string& key = keys_.at(project).key;
    for (size_t i : records) {
      const ResourceRecord& rec = state_.resources[i];
      const Scope scope = scope_of(state_, project, rec.kind, rec.parent);
      if (rec.id.empty() || (parent_kind(rec.kind) && scope.parent_id.empty())) continue;  // nothing to ask by
      if (kind_form(rec.kind).in_database) continue;  // read from its service's catalogs, not the API
      const ResourceType& type = type_of(rec.kind);
      std::optional<Shown> by_id;
      const Shown* read = nullptr;
      if (auto it = listed.find(kind_name(rec.kind) + ("/" + rec.id)); it != listed.end()) read = it->second;
      else if (!type.listed_only && (by_id = type.get(api_, key, scope, rec.id)))
        read = &*by_id;  // not listed (yet?): asked by id (a listed-only kind's read is the list just read)
      if (!read && type.listed_only && made_lately(rec)) continue;  // not listed yet: its list lags
      const bool gone = !read || type.is_gone(*read);
      nlohmann::json observed;
      if (!gone) {
        observed = type.observe(*read, rec.settings, names);
        if (!rec.deleted_outside && rec.pending_call.is_null() && observed == rec.observed &&
            answer_recorded(rec, *read))
          continue;  // shown as recorded: most records, not copied
      }
      ResourceRecord next = rec;
      next.deleted_outside = gone;
      if (!gone) {
        record_answer(next, *read, now_);
        next.observed = std::move(observed);
        next.pending_call = nullptr;  // what the API shows settles it
      }
      if (!same_view(rec, next)) seen.push_back(std::move(next));
    }
  }

 private:
  // Created within the settle window: a lagging list may not show it yet. Within it both ways, so that
  // a clock a little behind the API's still counts, and a created_at edited far into the future does
  // not hide a deletion for ever.
  bool made_lately(const ResourceRecord& rec) const {
    const auto created = parse_utc(rec.created_at);
    if (!created) return false;
    const auto age = utc_time(wall_now_) - *created;  // in seconds: a created_at up to 9999 fits
    return age < settle_window_ && -age < settle_window_;
  }

  ApiClient& api_;
  std::chrono::system_clock::time_point wall_now_;
  std::string now_;
  State& state_;
  const std::map<std::string, ProjectKey>& keys_;
  Duration settle_window_;
};

}  // namespace

RefreshResult refresh_state(ApiClient& api, Clock& clock, State& state, const std::vector<std::string>& projects,
                            const std::map<std::string, ProjectKey>& keys, ProjectListings listings, int parallelism,
                            Duration settle_window) {
  RefreshResult result;
  result.listings = std::move(listings);
  std::vector<std::string> problems;
  for (const auto& [project, why] : result.listings.errors) problems.push_back("project " + project + ": " + why);
  Refresher refresher(api, clock, state, keys, settle_window);
  std::unordered_map<std::string, std::vector<size_t>> records_of;  // project -> its records
  for (size_t i = 0; i < state.resources.size(); ++i) records_of[state.resources[i].project_id].push_back(i);
  struct Read {
    std::vector<ResourceRecord> seen;
    std::string problem;
  };
  // Projects at once: the workers only read the state (its address index built first) and the API.
  state.find("");
  auto read = in_parallel<Read>(projects.size(), static_cast<size_t>(std::max(1, parallelism)), [&](size_t i) {
    Read out;
    auto listing = result.listings.listed.find(projects[i]);
    auto records = records_of.find(projects[i]);
    if (listing == result.listings.listed.end() || records == records_of.end()) return out;
    try {
      refresher.read_project(projects[i], listing->second, records->second, out.seen);
    } catch (const std::exception& e) {
      out.problem = "project " + projects[i] + ": " + describe_exception(e);
    }
    return out;
  });
  std::vector<ResourceRecord> seen;
  for (auto& r : read) {
    if (!r.problem.empty()) problems.push_back(std::move(r.problem));
    std::move(r.seen.begin(), r.seen.end(), std::back_inserter(seen));
  }
  if (!problems.empty())
    throw Error("the refresh could not read what exists, nothing was changed:\n  " + join(problems, "\n  ") +
                "\nFix the problem and run it again. Without a refresh (plan --no-refresh, apply --no-refresh) "
                "apply still checks every name before it creates anything");
  for (auto& rec : seen) {
    const ResourceRecord* before = state.find(rec.address);
    if (rec.deleted_outside && !before->deleted_outside) {
      log::warn(rec.address + ": " + kind_noun(rec.kind) + " " + rec.id + " no longer exists: it was deleted outside dbform");
      result.deleted.push_back(rec.address);
    }
    result.changed.push_back(rec.address);
    state.upsert(rec);
  }
  return result;
}

std::vector<std::string> record_declared_values(State& state, const Plan& plan) {
  std::vector<std::string> changed;
  for (const auto& a : plan.actions) {
    if (!a.after.is_object() || a.action == Action::Create || a.action == Action::Adopt) continue;
    ResourceRecord* rec = state.find(a.address);
    if (!rec || !rec->observed.is_object() || rec->deleted_outside) continue;
    bool changes = false;
    for (auto it = a.after.begin(); it != a.after.end(); ++it) {
      // Looked up, not copied out with value(): this runs for every field of thousands of resources.
      if (field_or_null(rec->observed, it.key()) != it.value() || field_or_null(rec->settings, it.key()) == it.value())
        continue;
      rec->settings[it.key()] = it.value();
      changes = true;
    }
    if (changes) changed.push_back(rec->address);
  }
  return changed;
}

}  // namespace dbform
