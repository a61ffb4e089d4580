#include "engine/apply.h"

#include <algorithm>
#include <deque>
#include <queue>
#include <set>
#include <spdlog/spdlog.h>
#include <unordered_map>

#include "engine/work_queue.h"
#include "util/duration.h"
#include "util/text.h"

namespace dbform {

namespace {

constexpr int kMaxCreateAttempts = 3;

enum class JobType { Create, Poll };

// What a worker learned from the API; applied to the state by the main thread.
struct Outcome {
  size_t item = 0;
  JobType type = JobType::Create;
  std::optional<Service> service;
  std::optional<Vpc> vpc;
  bool adopted = false;          // found by name instead of created
  bool gone = false;             // poll: 404
  std::string error;             // non-empty on failure
  bool nothing_created = false;  // create failed in a way that proves nothing was created
  bool transient = false;        // poll failed in a way worth trying again
};

enum class Phase { Pending, Creating, Watching, Done, Failed, Skipped };

struct Item {
  const PlannedAction* action = nullptr;
  Phase phase = Phase::Pending;
  Clock::TimePoint watch_start{}, deadline{};
  int polls = 0;
};

ServiceCreateRequest service_request(const PlannedAction& a) {
  const auto& s = a.after;
  ServiceCreateRequest r;
  r.name = a.name;
  if (s.contains("addons")) r.addons = s["addons"].get<std::vector<std::string>>();
  if (s.contains("cpu_millis")) r.cpu_millis = s["cpu_millis"].get<std::string>();
  if (s.contains("memory_gbs")) r.memory_gbs = s["memory_gbs"].get<std::string>();
  if (s.contains("environment_tag")) r.environment_tag = s["environment_tag"].get<std::string>();
  if (s.contains("region_code")) r.region_code = s["region_code"].get<std::string>();
  if (s.contains("replica_count")) r.replica_count = s["replica_count"].get<long long>();
  return r;
}

VpcCreateRequest vpc_request(const PlannedAction& a) {
  return {a.name, a.after.value("cidr", ""), a.after.value("region_code", "")};
}

// Creates the resource, or adopts the one resource of that name when an earlier attempt's outcome
// is unknown. Never sends a create while a resource of that name may already exist.
Outcome create_or_adopt(ApiClient& api, const PlannedAction& a, const std::string& key, bool look_first) {
  Outcome out;
  for (int attempt = 1; attempt <= kMaxCreateAttempts; ++attempt) {
    if (look_first) {
      std::vector<std::string> ids;
      if (a.kind == ResourceKind::Service) {
        for (auto& s : api.list_services(key, a.project_id))
          if (s.name == a.name) {
            ids.push_back(s.service_id);
            out.service = std::move(s);
          }
      } else {
        for (auto& v : api.list_vpcs(key, a.project_id))
          if (v.name == a.name) {
            ids.push_back(v.id);
            out.vpc = std::move(v);
          }
      }
      if (ids.size() == 1) {
        out.adopted = true;
        return out;
      }
      if (ids.size() > 1) {
        out.service.reset();
        out.vpc.reset();
        out.error = std::to_string(ids.size()) + " " + kind_plural(a.kind) + " named `" + a.name + "` exist (" +
                    join(ids, ", ") + "); dbform cannot tell which one it created. Delete the extra ones, "
                    "then run apply again";
        return out;
      }
    }
    try {
      if (a.kind == ResourceKind::Service) out.service = api.create_service(key, a.project_id, service_request(a));
      else out.vpc = api.create_vpc(key, a.project_id, vpc_request(a));
      return out;
    } catch (const ApiError& e) {
      if (!e.outcome_unknown()) {
        out.error = e.what();
        out.nothing_created = true;
        return out;
      }
      spdlog::warn("{}: create outcome unknown ({}); looking it up by name", a.address, e.what());
      look_first = true;
    }
  }
  out.error = "the create's outcome stayed unknown after " + std::to_string(kMaxCreateAttempts) +
              " attempts; the next apply looks it up by name again";
  return out;
}

Outcome poll(ApiClient& api, const PlannedAction& a, const std::string& key) {
  Outcome out;
  out.type = JobType::Poll;
  try {
    out.service = api.get_service(key, a.project_id, a.resource_id);
    out.gone = !out.service;
  } catch (const ApiError& e) {
    out.error = e.what();
    out.transient = e.status() == 0 || e.status() == 429 || e.status() >= 500;
  } catch (const Error& e) {  // a 2xx that is not a service: the API misbehaved; keep trying
    out.error = e.what();
    out.transient = true;
  }
  return out;
}

void record_service(ResourceRecord& rec, const Service& s, const std::string& now) {
  if (!s.service_id.empty()) rec.id = s.service_id;
  if (!s.status.empty()) rec.status = s.status;
  if (!s.endpoint.empty()) {
    rec.endpoint_host = s.endpoint.host;
    rec.endpoint_port = s.endpoint.port;
  }
  if (!s.pooler_endpoint.empty()) {
    rec.pooler_host = s.pooler_endpoint.host;
    rec.pooler_port = s.pooler_endpoint.port;
  }
  if (!s.initial_password.empty()) rec.initial_password = s.initial_password;  // never overwritten by empty
  rec.last_response = s.raw;
  rec.updated_at = now;
}

void record_vpc(ResourceRecord& rec, const Vpc& v, const std::string& now) {
  if (!v.id.empty()) rec.id = v.id;
  rec.last_response = v.raw;
  rec.updated_at = now;
}

// One execution of a plan: owns the schedule and is the only writer of the state.
class ApplyRun {
 public:
  ApplyRun(ApiClient& api, StateStore& store, Clock& clock, EventSink& events, const ApplyOptions& options,
           const std::map<std::string, ProjectKey>& keys, State& state)
      : api_(api), store_(store), clock_(clock), events_(events), options_(options), keys_(keys), state_(state) {}

  ApplyResult execute(const Plan& plan) {
    const auto start = clock_.now();
    for (const auto& a : plan.actions) {
      if (a.action == Action::Create || a.action == Action::Adopt) {
        to_create_.push_back(items_.size());
        if (a.kind == ResourceKind::Vpc) ++vpcs_unsettled_[a.project_id];
      } else if (a.action == Action::Wait && options_.wait) {
        timers_.push({start, items_.size()});
      } else {
        continue;
      }
      items_.push_back({&a});
      if (a.action == Action::Wait) start_watch(items_.back(), start);
    }
    WorkQueue<Outcome> workers(options_.parallelism);
    for (;;) {
      if (stopping()) break;
      dispatch_creates(workers);
      dispatch_due_polls(workers);
      if (workers.in_flight() == 0) {
        if (timers_.empty()) break;
        clock_.sleep_until(timers_.top().first);
        continue;
      }
      std::optional<std::chrono::steady_clock::duration> timeout;
      if (!timers_.empty()) timeout = std::max(Clock::TimePoint::duration(0), timers_.top().first - clock_.now());
      for (auto& outcome : workers.take(timeout)) handle(outcome);
      save();
    }
    // A stop: let what is in flight finish and record it, start nothing new.
    while (workers.in_flight() > 0) {
      for (auto& outcome : workers.take(std::optional<std::chrono::seconds>())) handle(outcome);
      save();
    }
    if (stopping()) finish_interrupted();
    return std::move(result_);
  }

 private:
  bool stopping() const { return options_.stop && options_.stop->load(); }

  const std::string& key_of(const PlannedAction& a) const { return keys_.at(a.project_id).key; }

  void dispatch_creates(WorkQueue<Outcome>& workers) {
    std::vector<size_t> batch;
    for (auto it = to_create_.begin(); it != to_create_.end();) {
      if (workers.in_flight() + static_cast<int>(batch.size()) >= options_.parallelism) break;
      const PlannedAction& a = *items_[*it].action;
      if (a.kind == ResourceKind::Service && vpcs_unsettled_[a.project_id] > 0) {
        ++it;
        continue;
      }
      batch.push_back(*it);
      it = to_create_.erase(it);
    }
    if (batch.empty()) return;
    // The intents are on disk before any of these creates is sent.
    for (size_t i : batch) record_intent(items_[i]);
    save();
    for (size_t i : batch) {
      Item& item = items_[i];
      item.phase = Phase::Creating;
      start_watch(item, clock_.now());  // a service's wait timeout counts from its create
      const PlannedAction& a = *item.action;
      events_.on_event({EventKind::CreateSent, a.address, "", "", Duration(0), ""});
      bool look_first = a.action == Action::Adopt;
      workers.submit([this, i, &a, look_first, key = key_of(a)] {
        Outcome out;
        try {
          out = create_or_adopt(api_, a, key, look_first);
        } catch (const Error& e) {  // the lookup failed: the outcome is still unknown
          out.error = e.what();
        }
        out.item = i;
        return out;
      });
    }
  }

  void dispatch_due_polls(WorkQueue<Outcome>& workers) {
    while (!timers_.empty() && timers_.top().first <= clock_.now() && workers.in_flight() < options_.parallelism) {
      size_t i = timers_.top().second;
      timers_.pop();
      const PlannedAction& a = *items_[i].action;
      std::string id = state_.find(a.address)->id;
      workers.submit([this, i, &a, id, key = key_of(a)] {
        PlannedAction target = a;
        target.resource_id = id;
        Outcome out = poll(api_, target, key);
        out.item = i;
        return out;
      });
    }
  }

  void record_intent(const Item& item) {
    const PlannedAction& a = *item.action;
    ResourceRecord* rec = state_.find(a.address);
    if (rec && rec->create_pending) return;  // an adopt: the intent is already recorded
    ResourceRecord r;
    r.address = a.address;
    r.project_id = a.project_id;
    r.kind = a.kind;
    r.name = a.name;
    r.settings = a.after;
    r.create_pending = true;
    r.created_at = r.updated_at = format_utc(clock_.wall_now());
    state_.upsert(r);
    dirty_ = true;
  }

  void handle(const Outcome& out) {
    Item& item = items_[out.item];
    if (out.type == JobType::Create) handle_create(item, out);
    else handle_poll(out.item, out);
  }

  void handle_create(Item& item, const Outcome& out) {
    const PlannedAction& a = *item.action;
    if (a.kind == ResourceKind::Vpc) --vpcs_unsettled_[a.project_id];
    ResourceRecord& rec = *state_.find(a.address);
    if (!out.error.empty()) {
      if (out.nothing_created) {
        state_.remove(a.address);  // nothing exists: the next run plans a plain create
        dirty_ = true;
      }
      fail(item, out.error);
      return;
    }
    const std::string now = format_utc(clock_.wall_now());
    rec.create_pending = false;
    if (out.service) record_service(rec, *out.service, now);
    if (out.vpc) record_vpc(rec, *out.vpc, now);
    dirty_ = true;
    (out.adopted ? result_.adopted : result_.created)++;
    std::string note;
    if (out.adopted && a.kind == ResourceKind::Service && rec.initial_password.empty())
      note = "adopted an existing service of this name; its initial password cannot be recovered: set a new one "
             "in the console or with `ALTER ROLE tsdbadmin PASSWORD ...`";
    events_.on_event({out.adopted ? EventKind::Adopted : EventKind::Created, a.address, rec.id, rec.status,
                      Duration(0), note});
    if (a.kind == ResourceKind::Vpc || !options_.wait) {
      item.phase = Phase::Done;
      if (a.kind == ResourceKind::Vpc) ready(item, rec);
      return;
    }
    after_status(static_cast<size_t>(&item - items_.data()), rec);
  }

  void handle_poll(size_t i, const Outcome& out) {
    Item& item = items_[i];
    ResourceRecord& rec = *state_.find(item.action->address);
    ++item.polls;
    if (out.gone) return fail(item, "the service " + rec.id + " no longer exists (404)");
    if (!out.error.empty()) {
      if (!out.transient) return fail(item, out.error);
      spdlog::info("{}: watch request failed, will retry: {}", item.action->address, out.error);
      return schedule_poll(i, rec);
    }
    std::string before = rec.status;
    record_service(rec, *out.service, format_utc(clock_.wall_now()));
    dirty_ = true;
    if (rec.status != before)
      events_.on_event({EventKind::StatusChanged, rec.address, rec.id, rec.status, elapsed(item), ""});
    after_status(i, rec);
  }

  void after_status(size_t i, const ResourceRecord& rec) {
    Item& item = items_[i];
    switch (classify_status(rec.status)) {
      case StatusVerdict::Ready: return ready(item, rec);
      case StatusVerdict::Failed:
        return fail(item, "status " + rec.status + ": it will not become READY. After fixing it in the console, " +
                              "run `dbform state rm " + rec.address + "` to create it again");
      case StatusVerdict::KeepWaiting: return schedule_poll(i, rec);
    }
  }

  void schedule_poll(size_t i, const ResourceRecord& rec) {
    Item& item = items_[i];
    auto now = clock_.now();
    if (now >= item.deadline)
      return fail(item, "not READY after " + format_duration(options_.wait_timeout) + " (last status " +
                            (rec.status.empty() ? "unknown" : rec.status) +
                            "); run apply again to keep waiting, it will not be created again");
    timers_.push({std::min(now + options_.polls.after(item.polls), item.deadline), i});
  }

  void start_watch(Item& item, Clock::TimePoint at) {
    item.phase = Phase::Watching;
    item.watch_start = at;
    item.deadline = at + options_.wait_timeout;
  }

  Duration elapsed(const Item& item) const {
    return std::chrono::duration_cast<Duration>(clock_.now() - item.watch_start);
  }

  void ready(Item& item, const ResourceRecord& rec) {
    item.phase = Phase::Done;
    ++result_.ready;
    std::string endpoint = rec.endpoint_host.empty() ? "" : rec.endpoint_host;
    if (rec.endpoint_port) endpoint += ":" + std::to_string(*rec.endpoint_port);
    events_.on_event({EventKind::Ready, rec.address, rec.id, rec.status, elapsed(item), endpoint});
  }

  void fail(Item& item, const std::string& why) {
    item.phase = Phase::Failed;
    result_.failures.push_back(item.action->address + ": " + why);
    events_.on_event({EventKind::Failed, item.action->address, "", "", Duration(0), why});
  }

  void finish_interrupted() {
    result_.interrupted = true;
    for (const auto& item : items_)
      if (item.phase != Phase::Done && item.phase != Phase::Failed) result_.pending.push_back(item.action->address);
    events_.on_event({EventKind::Interrupted, "", "", "", Duration(0),
                      std::to_string(result_.pending.size()) + " resource(s) not finished"});
  }

  void save() {
    if (!dirty_) return;
    store_.write(state_);
    dirty_ = false;
  }

  ApiClient& api_;
  StateStore& store_;
  Clock& clock_;
  EventSink& events_;
  const ApplyOptions& options_;
  const std::map<std::string, ProjectKey>& keys_;
  State& state_;

  std::vector<Item> items_;
  std::deque<size_t> to_create_;
  std::unordered_map<std::string, int> vpcs_unsettled_;
  using Timer = std::pair<Clock::TimePoint, size_t>;
  std::priority_queue<Timer, std::vector<Timer>, std::greater<>> timers_;
  bool dirty_ = false;
  ApplyResult result_;
};

}  // namespace

std::vector<std::string> projects_with_work(const Plan& plan) {
  std::vector<std::string> out;
  std::set<std::string> seen;
  for (const auto& a : plan.actions)
    if ((a.action == Action::Create || a.action == Action::Adopt || a.action == Action::Wait) &&
        seen.insert(a.project_id).second)
      out.push_back(a.project_id);
  return out;
}

ApplyEngine::ApplyEngine(ApiClient& api, StateStore& store, Clock& clock, EventSink& events, ApplyOptions options)
    : api_(api), store_(store), clock_(clock), events_(events), options_(options) {
  options_.parallelism = std::max(1, options_.parallelism);
}

void ApplyEngine::preflight(const Plan& plan, const std::map<std::string, ProjectKey>& keys) {
  std::vector<std::string> problems;
  for (const auto& project : projects_with_work(plan)) {
    const ProjectKey& key = keys.at(project);
    try {
      AuthInfo info = api_.auth_info(key.key);
      if (info.project_id != project) {
        problems.push_back("project `" + project + "`: the API key in " + key.variable + " (key name `" +
                           info.key_name + "`) belongs to project `" + info.project_id + "`" +
                           (info.project_name.empty() ? "" : " (" + info.project_name + ")") + ", not `" + project +
                           "`. Set " + key.variable + " to a key of project `" + project + "`");
        continue;
      }
      events_.on_event({EventKind::PreflightPassed, project, "", "", Duration(0),
                        "project " + project + ": key `" + info.key_name + "` from " + key.variable});
    } catch (const ApiError& e) {
      problems.push_back("project `" + project + "`: the API key in " + key.variable + " was not accepted: " +
                         e.what());
    }
  }
  if (!problems.empty())
    throw Error("preflight failed, nothing was created:\n  " + join(problems, "\n  "));
}

ApplyResult ApplyEngine::apply(const Plan& plan, const std::map<std::string, ProjectKey>& keys, State& state) {
  ApplyRun run(api_, store_, clock_, events_, options_, keys, state);
  return run.execute(plan);
}

}  // namespace dbform
