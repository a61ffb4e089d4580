#include "engine/apply.h"

#include <algorithm>
#include <deque>
#include <queue>
#include <set>
#include <spdlog/spdlog.h>
#include <unordered_map>

#include "engine/jobs.h"
#include "engine/namesakes.h"
#include "plan/differ.h"
#include "engine/work_queue.h"
#include "util/duration.h"
#include "util/parallel.h"
#include "util/text.h"

namespace dbform {

namespace {

// SettingPassword: READY, its new password on the way; Calling: READY, an update call queued or
// on the way. Never polled meanwhile.
enum class Phase { Pending, Creating, Watching, SettingPassword, Calling, Done, Failed };

// Hands an event to a renderer, which can never throw into the engine: its output is lost (a closed
// pipe, a full disk), the run goes on recording. False when the renderer failed.
bool deliver(EventSink& sink, const Event& event) {
  try {
    sink.on_event(event);
    return true;
  } catch (const std::exception& e) {
    spdlog::debug("the output failed, recording goes on: {}", e.what());
    return false;
  }
}

struct Item {
  const PlannedAction* action = nullptr;
  Phase phase = Phase::Pending;
  Clock::TimePoint watch_start{}, deadline{};
  int polls = 0;
  int timer_generation = 0;  // a timer of an older generation was cancelled
  bool timer_live = false;   // a timer of the current generation is queued
  bool polling = false;      // a status check of it is in flight
  bool get_next = false;     // the last list did not show it (lists lag): ask for it by id next
  size_t next_call = 0;      // the plan's calls before it are made
  // Watching until READY with the change of calls[next_call] made (an asynchronous call answered).
  bool awaiting_call = false;
  int call_sends = 0;  // sends of calls[next_call]
  bool deleting = false;  // its delete was accepted: watched until it is gone
};

// How often one call is sent when its answers say the service was busy (409) or did not come.
constexpr int kMaxCallSends = 3;

// Polls have their own workers, so that creates, however many, cannot hold them up; and where
// several services of a project are waited for, one list answers for all of them.
constexpr int kPollLane = 4;
constexpr size_t kListAtLeast = 3;

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
      } else if (a.action == Action::Delete) {
        to_delete_.push_back(items_.size());
      } else if (!((a.action == Action::Wait && options_.wait) || a.action == Action::Update)) {
        continue;
      }
      if (a.kind == ResourceKind::Service) services_of_project_[a.project_id].push_back(items_.size());
      items_.push_back({&a});
      ResourceRecord* rec = state_.find(a.address);
      if (a.action == Action::Update && rec && rec->is_ready() && rec->pending_call.is_null()) {
        proceed(items_.size() - 1, *rec);  // its calls, if any (a change of protection makes none)
      } else if (a.action == Action::Wait || a.action == Action::Update) {
        // Not READY, or an update left unanswered by an earlier run: watched until READY first, and
        // a call whose change shows by then is not sent again (proceed).
        start_watch(items_.back(), Phase::Watching, start);
        push_timer(items_.size() - 1, start);
      }
      if (!keys_.count(a.project_id))  // before anything is sent, not as a crash half-way
        throw Error("no API key was resolved for project `" + a.project_id + "`");
    }
    record_protection(plan);  // saved with the first write, before any call
    guard_names(plan);
    guard_deletes(plan);
    WorkQueue<Outcome> workers(options_.parallelism + kPollLane);
    bool stopped = false;
    for (;;) {
      if (stopping()) {
        stopped = true;
        break;
      }
      // The results of the last round are saved with the next batch's intents, in one write, before
      // any of them is reported or any of those creates is sent.
      dispatch_creates(workers);
      save();
      flush_events();
      dispatch_due_polls(workers);
      dispatch_passwords(workers);
      dispatch_calls(workers);
      dispatch_deletes(workers);
      if (workers.in_flight() == 0 && live_timers_ == 0 && to_set_password_.empty() && to_call_.empty() &&
          to_delete_.empty())
        break;
      wait_for_progress(workers);
    }
    // A stop: let what is in flight finish and record it, start nothing new.
    while (workers.in_flight() > 0) apply_outcomes(workers, workers.take(kForever));
    save();
    result_.unsaved_changes = !changed_.empty();
    if (result_.save_error.empty()) compact();
    if (!worker_failure_.empty()) fail_unfinished();
    else if (stopped || stopping()) finish_interrupted();
    else
      for (size_t i : to_create_) fail(items_[i], "internal error: its create was never scheduled");
    flush_events();
    return std::move(result_);
  }

 private:
  // How long the main thread waits before looking at the stop flag again.
  static constexpr Duration kStopCheck{250};
  static constexpr std::optional<Duration> kForever{};

  // Waits until a result arrives or the next poll is due. Results are awaited in real time, polls
  // in the clock's time: when a slice passes with no result the clock is moved to its end (a real
  // clock is there already; a fake one catches up, so tests neither hang nor sleep).
  void wait_for_progress(WorkQueue<Outcome>& workers) {
    drop_stale_timers();
    const auto now = clock_.now();
    const bool can_poll = polls_in_flight_ < kPollLane && !timers_.empty();
    const auto until = can_poll ? std::min(timers_.top().at, now + kStopCheck) : now + kStopCheck;
    if (workers.in_flight() == 0) return clock_.sleep_until(until);
    // No poll can be made: only a result can change anything, so block on it (waiting with a zero
    // timeout here would spin). Creates never wait on time: they go as soon as a worker is free.
    if (!can_poll) return apply_outcomes(workers, workers.take(kForever));
    auto outcomes = workers.take(std::optional<Clock::TimePoint::duration>(until - now));
    if (outcomes.empty()) clock_.sleep_until(until);
    apply_outcomes(workers, std::move(outcomes));
  }

  // Records what the workers learned, in memory: the loop saves it (see execute). A job that
  // failed outright (no memory for its result) stops the run as a signal would.
  void apply_outcomes(WorkQueue<Outcome>& workers, std::vector<Outcome> outcomes) {
    if (std::exception_ptr failure = workers.take_failure(); failure && worker_failure_.empty()) {
      try {
        std::rethrow_exception(failure);
      } catch (const std::exception& e) {
        worker_failure_ = describe_exception(e);
      } catch (...) {
        worker_failure_ = "a worker failed";
      }
    }
    for (const auto& outcome : outcomes) {
      if (outcome.type == JobType::Poll || outcome.type == JobType::PollList) --polls_in_flight_;
      else --creates_in_flight_;
    }
    for (auto& outcome : outcomes) handle(outcome);
  }

  // The name guard: a planned create whose name exists unrecorded in the API is not sent.
  void guard_names(const Plan& plan) {
    if (to_create_.empty() || stopping()) return;
    NamesakeScan scan = scan_namesakes(api_, plan, keys_, options_.parallelism);
    for (auto it = to_create_.begin(); it != to_create_.end();) {
      Item& item = items_[*it];
      const PlannedAction& a = *item.action;
      auto error = scan.errors.find(a.project_id);
      auto found = scan.found.find(a.address);
      if (a.action != Action::Create || (error == scan.errors.end() && found == scan.found.end())) {
        ++it;
        continue;
      }
      if (a.kind == ResourceKind::Vpc) --vpcs_unsettled_[a.project_id];
      fail(item, error != scan.errors.end()
                     ? "not created: could not list project " + a.project_id + " to check that no `" + a.name +
                           "` exists already: " + error->second
                     : "not created: " + namesake_reason(a.kind, a.address, found->second));
      it = to_create_.erase(it);
    }
    flush_events();
  }

  // A delete of an id that a declared resource's record holds too (a hand-edited state) is refused
  // before anything is sent: the state's reader refuses such a state, and this holds whatever
  // state the engine is given.
  void guard_deletes(const Plan& plan) {
    if (to_delete_.empty()) return;
    std::map<std::string, std::string> declared;  // kind/project/id -> address
    for (const auto& a : plan.actions) {
      const ResourceRecord* rec = state_.find(a.address);
      if (a.action != Action::Delete && a.action != Action::Orphan && rec && !rec->id.empty())
        declared.emplace(id_key(*rec), a.address);
    }
    for (auto it = to_delete_.begin(); it != to_delete_.end();) {
      Item& item = items_[*it];
      const ResourceRecord* rec = state_.find(item.action->address);
      auto owner = rec ? declared.find(id_key(*rec)) : declared.end();
      if (owner == declared.end()) {
        ++it;
        continue;
      }
      fail(item, "not deleted: its id " + rec->id + " is also the id of " + owner->second +
                     ", which is declared; the state was edited by hand. `dbform state rm " + item.action->address +
                     "` removes the wrong record");
      it = to_delete_.erase(it);
    }
    flush_events();
  }

  static std::string id_key(const ResourceRecord& r) {
    return std::string(kind_name(r.kind)) + "/" + r.project_id + "/" + r.id;
  }

  // Results reach the renderers only once they are saved (or the save failed and the caller keeps
  // them in a recovery file): a renderer that fails can never cost a record. A renderer's
  // exception never reaches the engine either: the output is lost, the recording goes on.
  void emit(Event event) { unreported_.push_back(std::move(event)); }

  void flush_events() {
    for (const auto& event : unreported_) deliver(events_, event);
    unreported_.clear();
  }

  bool stopping() const {
    return (options_.stop && options_.stop->load()) || !result_.save_error.empty() || !worker_failure_.empty();
  }

  const std::string& key_of(const PlannedAction& a) const { return keys_.at(a.project_id).key; }

  void dispatch_creates(WorkQueue<Outcome>& workers) {
    std::vector<size_t> batch;
    for (auto it = to_create_.begin(); it != to_create_.end();) {
      if (creates_in_flight_ + static_cast<int>(batch.size()) >= options_.parallelism) break;
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
    const auto unsaved_before = changed_;
    for (size_t i : batch) record_intent(items_[i]);
    save();
    if (!result_.save_error.empty()) {
      for (size_t i : batch) forget_unsent_intent(items_[i]);
      changed_ = unsaved_before;  // the memory holds nothing the store lacks but what was unsaved before
      flush_events();
      return;
    }
    for (size_t i : batch) {
      Item& item = items_[i];
      start_watch(item, Phase::Creating, clock_.now());  // a service's wait timeout counts from its create
      const PlannedAction& a = *item.action;
      const bool look_first = a.action == Action::Adopt;
      emit({EventKind::CreateSent, a.address, "", "", Duration(0),
            look_first ? "an earlier create's outcome is unknown: looking it up by name first" : ""});
      ++creates_in_flight_;
      workers.submit([this, i, &a, look_first, key = key_of(a)] {
        Outcome out;
        try {
          out = create_or_adopt(CreateContext{api_, clock_, options_.settle_window, options_.stop}, a, key,
                                look_first);
        } catch (const std::exception& e) {  // e.g. the lookup failed: the outcome is still unknown
          out.error = describe_exception(e) + "; the create's outcome is unknown, so the next apply looks for `" +
                      a.name + "` by name before creating it";
        }
        out.item = i;
        return out;
      });
    }
    flush_events();
  }

  // The due status checks: a list of the project when it answers for several services waited for
  // there (every one of them rides along, due or not), a GET by id otherwise.
  void dispatch_due_polls(WorkQueue<Outcome>& workers) {
    drop_stale_timers();
    while (polls_in_flight_ < kPollLane && !timers_.empty() && timers_.top().at <= clock_.now()) {
      const size_t first = timers_.top().item;
      cancel_timer(first);
      const PlannedAction& a = *items_[first].action;
      std::vector<size_t> round = {first};
      if (!items_[first].get_next)
        for (size_t j : services_of_project_[a.project_id]) {
          const Item& other = items_[j];
          if (j != first && other.phase == Phase::Watching && !other.polling && !other.get_next) round.push_back(j);
        }
      ++polls_in_flight_;
      if (round.size() >= kListAtLeast) {
        for (size_t j : round) {
          cancel_timer(j);
          items_[j].polling = true;
        }
        workers.submit([this, round, project = a.project_id, key = key_of(a)] {
          Outcome out = poll_project(api_, project, key);
          out.items = round;
          return out;
        });
      } else {
        items_[first].polling = true;
        workers.submit([this, first, &a, id = state_.find(a.address)->id, key = key_of(a)] {
          Outcome out = poll_service(api_, a, id, key);
          out.item = first;
          return out;
        });
      }
      drop_stale_timers();
    }
  }

  void push_timer(size_t i, Clock::TimePoint at) {
    Item& item = items_[i];
    cancel_timer(i);
    item.timer_live = true;
    ++live_timers_;
    timers_.push({at, i, item.timer_generation});
  }

  // Its queued timer, if any, no longer counts (it is dropped when it reaches the top).
  void cancel_timer(size_t i) {
    Item& item = items_[i];
    ++item.timer_generation;
    if (item.timer_live) --live_timers_;
    item.timer_live = false;
  }

  void drop_stale_timers() {
    while (!timers_.empty() && timers_.top().generation != items_[timers_.top().item].timer_generation) timers_.pop();
  }

  // New passwords for adopted services, each on disk (as pending) before its call is sent.
  void dispatch_passwords(WorkQueue<Outcome>& workers) {
    if (to_set_password_.empty() || creates_in_flight_ >= options_.parallelism) return;
    save();
    if (!result_.save_error.empty()) return;
    while (!to_set_password_.empty() && creates_in_flight_ < options_.parallelism) {
      const size_t i = to_set_password_.front();
      to_set_password_.pop_front();
      const PlannedAction& a = *items_[i].action;
      const ResourceRecord& rec = *state_.find(a.address);
      ++creates_in_flight_;
      workers.submit([this, i, &a, id = rec.id, password = rec.pending_password, key = key_of(a)] {
        Outcome out = set_password(api_, a, id, key, password);
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
    r.settings = created_with(a.after);  // the fields later calls set are recorded as they succeed
    r.deletion_protection = a.deletion_protection;
    r.create_pending = true;
    r.created_at = r.updated_at = format_utc(clock_.wall_now());
    state_.upsert(r);
    changed_.insert(r.address);
  }

  // The intent of a create that was never sent because it could not be saved: a new record goes
  // (nothing exists), an adopt's record stays (its earlier create may have happened).
  void forget_unsent_intent(const Item& item) {
    if (item.action->action == Action::Create) state_.remove(item.action->address);
  }

  void handle(const Outcome& out) {
    Item& item = items_[out.item];
    switch (out.type) {
      case JobType::Create: return handle_create(item, out);
      case JobType::Poll: return handle_poll(out.item, out);
      case JobType::PollList: return handle_poll_list(out);
      case JobType::Password: return handle_password(item, out);
      case JobType::Call: return handle_call(out.item, out);
      case JobType::Delete: return handle_delete(out.item, out);
    }
  }

  void handle_password(Item& item, const Outcome& out) {
    ResourceRecord& rec = *state_.find(item.action->address);
    if (!out.error.empty())
      return fail(item, "its new password could not be set: " + out.error +
                            ". It stays recorded as pending, and the next apply sets it again");
    rec.initial_password = rec.pending_password;
    rec.pending_password.clear();
    rec.updated_at = format_utc(clock_.wall_now());
    changed_.insert(rec.address);
    proceed(static_cast<size_t>(&item - items_.data()), rec);
  }

  // The answer to an update call: the service is then watched until READY with the change, which
  // settle_call records; or its failure.
  void handle_call(size_t i, const Outcome& out) {
    Item& item = items_[i];
    ResourceRecord& rec = *state_.find(item.action->address);
    const PlannedCall& call = item.action->calls[item.next_call];
    rec.pending_call = nullptr;
    changed_.insert(rec.address);
    if (!out.error.empty()) {
      // Busy (409) or no answer: the call may have been made (a gateway's 504 after it was, then a
      // retry refused as busy). The service tells, once it is READY again.
      if ((out.http_status == 409 || out.transient) && item.call_sends < kMaxCallSends) {
        spdlog::info("{}: {} was not confirmed ({}); checking the service", rec.address, call.call, out.error);
        start_watch(item, Phase::Watching, clock_.now());
        return schedule_poll(i, rec);
      }
      return fail(item, call.call + " failed: " + out.error + ". The next apply plans it again");
    }
    // Its settings are recorded once the service shows the change (settle_call): a refresh while it
    // is being made sees the old values, which are then not taken for a change outside dbform.
    const std::string now = format_utc(clock_.wall_now()), status = rec.status;
    if (out.service) record_service(rec, *out.service, now);
    rec.updated_at = now;
    ++result_.updated;
    emit({EventKind::Updated, rec.address, rec.id, rec.status, Duration(0), call.call});
    if (rec.status != status) emit({EventKind::StatusChanged, rec.address, rec.id, rec.status, Duration(0), ""});
    if (!options_.wait) {  // the rest is planned again by the next apply, once it is READY
      item.phase = Phase::Done;
      return;
    }
    // Watched until READY with its change: an asynchronous call takes a while; a synchronous one is
    // read back at once (a SuccessMessage does not carry what changed, such as a pooler's endpoint).
    item.awaiting_call = true;
    start_watch(item, Phase::Watching, clock_.now());
    if (is_async_call(call.call)) schedule_poll(i, rec);
    else push_timer(i, clock_.now());
  }

  // A call's change is made: the settings it brings about are recorded as set (and as observed),
  // and it is pending no more.
  void record_call(ResourceRecord& rec, const PlannedCall& call, const Item& item) {
    rec.pending_call = nullptr;
    for (auto it = call.sets.begin(); it != call.sets.end(); ++it) {
      if (it.value().is_null()) {
        rec.settings.erase(it.key());
        if (rec.observed.is_object()) rec.observed.erase(it.key());
      } else {
        rec.settings[it.key()] = it.value();
        if (rec.observed.is_object()) rec.observed[it.key()] = it.value();
      }
    }
    if (rec.observed.is_object() && call.call == "detachFromVPC") rec.observed.erase("vpc_id");
    if (rec.observed.is_object() && call.call == "attachToVPC") rec.observed["vpc_id"] = call_body(item, call)["vpc_id"];
    changed_.insert(rec.address);
  }

  // The body as sent: an attachment's VPC id, unknown when the plan was made, is the recorded one.
  nlohmann::json call_body(const Item& item, const PlannedCall& call) const {
    nlohmann::json body = call.body;
    if (body.is_object() && body.contains("vpc_id") && body["vpc_id"].is_null())
      if (const std::string id = recorded_vpc_id(state_, item.action->project_id, call.vpc); !id.empty())
        body["vpc_id"] = id;
    return body;
  }

  // Update calls, one per service at a time, each recorded as pending on disk before it is sent.
  void dispatch_calls(WorkQueue<Outcome>& workers) {
    std::vector<size_t> batch;
    for (auto it = to_call_.begin(); it != to_call_.end();) {
      if (creates_in_flight_ + static_cast<int>(batch.size()) >= options_.parallelism) break;
      const Item& item = items_[*it];
      if (vpcs_unsettled_[item.action->project_id] > 0) {  // an attachment needs its VPC
        ++it;
        continue;
      }
      batch.push_back(*it);
      it = to_call_.erase(it);
    }
    if (batch.empty()) return;
    std::vector<std::pair<size_t, nlohmann::json>> sending;
    for (size_t i : batch) {
      Item& item = items_[i];
      const PlannedCall& call = item.action->calls[item.next_call];
      nlohmann::json body = call_body(item, call);
      if (body.is_object() && body.contains("vpc_id") && body["vpc_id"].is_null()) {
        fail(item, call.call == "attachToVPC"
                       ? "not attached: its VPC `" + call.vpc + "` was not created (see above); the next apply attaches it"
                       : "not detached: the id of VPC `" + call.vpc + "` is not known. Run `dbform plan --refresh` to "
                         "read it, then apply");
        continue;
      }
      ResourceRecord& rec = *state_.find(item.action->address);
      rec.pending_call = {{"call", call.call}, {"body", body}};
      changed_.insert(rec.address);
      sending.emplace_back(i, std::move(body));
    }
    save();
    if (!result_.save_error.empty()) {  // nothing is sent whose intent is not on disk
      for (auto& [i, body] : sending) state_.find(items_[i].action->address)->pending_call = nullptr;
      flush_events();
      return;
    }
    for (auto& [i, body] : sending) {
      Item& item = items_[i];
      const PlannedAction& a = *item.action;
      const PlannedCall& call = a.calls[item.next_call];
      ++item.call_sends;
      emit({EventKind::UpdateSent, a.address, state_.find(a.address)->id, "", Duration(0),
            call.call + (body.is_null() ? "" : " " + body.dump())});
      ++creates_in_flight_;
      workers.submit([this, i, &a, id = state_.find(a.address)->id, key = key_of(a), name = call.call,
                      body = std::move(body)] {
        Outcome out = send_update(api_, a, id, key, name, body);
        out.item = i;
        return out;
      });
    }
    flush_events();
  }

  // Deletes come last (SPEC section 3), each recorded as pending on disk before it is sent: once
  // everything else of the run is finished, and not at all when any of it failed (a rename whose
  // new database did not come up keeps the old one); services first, a VPC once nothing else of
  // its project is under way (its services may still be detaching or deleting).
  void dispatch_deletes(WorkQueue<Outcome>& workers) {
    if (to_delete_.empty() || others_busy()) return;
    if (!result_.failures.empty()) {
      const std::deque<size_t> refused = std::move(to_delete_);
      to_delete_.clear();
      for (size_t i : refused)
        fail(items_[i], "not deleted: other changes of this apply failed (see above), and deletes are made only "
                        "after all of them succeeded. Run apply --prune again once they do");
      return flush_events();
    }
    std::vector<size_t> batch;
    for (auto it = to_delete_.begin(); it != to_delete_.end();) {
      if (creates_in_flight_ + static_cast<int>(batch.size()) >= options_.parallelism) break;
      const PlannedAction& a = *items_[*it].action;
      if (a.kind == ResourceKind::Vpc && project_busy(a.project_id)) {
        ++it;
        continue;
      }
      batch.push_back(*it);
      it = to_delete_.erase(it);
    }
    if (batch.empty()) return;
    for (size_t i : batch) {
      ResourceRecord& rec = *state_.find(items_[i].action->address);
      rec.pending_call = {{"call", "delete"}};
      changed_.insert(rec.address);
    }
    save();
    if (!result_.save_error.empty()) {
      for (size_t i : batch) state_.find(items_[i].action->address)->pending_call = nullptr;
      flush_events();
      return;
    }
    for (size_t i : batch) {
      Item& item = items_[i];
      const PlannedAction& a = *item.action;
      const std::string id = state_.find(a.address)->id;
      start_watch(item, Phase::Calling, clock_.now());  // a delete's time counts from its call
      emit({EventKind::DeleteSent, a.address, id, "", Duration(0), ""});
      ++creates_in_flight_;
      workers.submit([this, i, &a, id, key = key_of(a)] {
        Outcome out = delete_resource(api_, a, id, key);
        out.item = i;
        return out;
      });
    }
    flush_events();
  }

  // Whether anything but deletes is still under way.
  bool others_busy() const {
    for (const auto& item : items_)
      if (item.action->action != Action::Delete && item.phase != Phase::Done && item.phase != Phase::Failed)
        return true;
    return false;
  }

  // Whether anything of the project but its VPC deletes is still under way (VPC deletes do not wait
  // for each other).
  bool project_busy(const std::string& project_id) const {
    for (const auto& item : items_) {
      const PlannedAction& a = *item.action;
      if (a.project_id == project_id && !(a.action == Action::Delete && a.kind == ResourceKind::Vpc) &&
          item.phase != Phase::Done && item.phase != Phase::Failed)
        return true;
    }
    return false;
  }

  void handle_delete(size_t i, const Outcome& out) {
    Item& item = items_[i];
    ResourceRecord& rec = *state_.find(item.action->address);
    rec.pending_call = nullptr;
    changed_.insert(rec.address);
    if (!out.error.empty())
      return fail(item, "not deleted: " + out.error +
                            (out.http_status == 409 && item.action->kind == ResourceKind::Vpc
                                 ? " (is a service still attached to it?)"
                                 : "") +
                            ". It stays recorded; the next apply --prune tries again");
    if (out.gone || item.action->kind == ResourceKind::Vpc) return forget(item);
    item.deleting = true;  // DELETING until it is gone; its wait timeout counts from the call
    item.phase = Phase::Watching;
    schedule_poll(i, rec);
  }

  // Gone: the state forgets it.
  void forget(Item& item) {
    const PlannedAction& a = *item.action;
    const std::string id = state_.find(a.address)->id;
    state_.remove(a.address);
    changed_.insert(a.address);
    item.phase = Phase::Done;
    ++result_.deleted;
    emit({EventKind::Deleted, a.address, id, "", elapsed(item), ""});
  }

  // Declared deletion protection, recorded at every apply (SPEC section 3): whatever else the run
  // did, every declared resource the state records carries it.
  void record_protection(const Plan& plan) {
    for (const auto& a : plan.actions) {
      if (a.action == Action::Orphan || a.action == Action::Delete || a.action == Action::Conflict) continue;
      ResourceRecord* rec = state_.find(a.address);
      if (!rec || rec->deletion_protection == a.deletion_protection) continue;
      rec->deletion_protection = a.deletion_protection;
      changed_.insert(a.address);
    }
  }

  // A READY service goes on: its new password, then its next call, or it is done.
  void proceed(size_t i, ResourceRecord& rec) {
    Item& item = items_[i];
    if (!rec.pending_password.empty()) {
      item.phase = Phase::SettingPassword;
      return to_set_password_.push_back(i);
    }
    const auto& calls = item.action->calls;
    // A call whose change the service shows already (an earlier send whose answer was lost, or a
    // run that stopped before recording it) is recorded, not sent again.
    while (item.next_call < calls.size() && shows_change(item, rec)) {
      record_call(rec, calls[item.next_call], item);
      ++item.next_call;
      item.call_sends = 0;
    }
    if (item.next_call < calls.size() && (options_.wait || item.next_call == 0)) {
      item.phase = Phase::Calling;
      return to_call_.push_back(i);
    }
    ready(item, rec);
  }

  bool shows_change(const Item& item, const ResourceRecord& rec) const {
    const PlannedCall& call = item.action->calls[item.next_call];
    return rec.last_response.is_object() &&
           call_took_effect(call.call, call_body(item, call), parse_service(rec.last_response));
  }

  // READY after an update call: whether its change shows. False: keep watching.
  bool settle_call(Item& item, ResourceRecord& rec) {
    if (!item.awaiting_call) return true;
    if (!shows_change(item, rec)) return false;  // READY before its change shows: a view that lags
    item.awaiting_call = false;
    record_call(rec, item.action->calls[item.next_call], item);
    ++item.next_call;
    item.call_sends = 0;
    return true;
  }

  void handle_create(Item& item, const Outcome& out) {
    const PlannedAction& a = *item.action;
    if (a.kind == ResourceKind::Vpc) --vpcs_unsettled_[a.project_id];
    ResourceRecord& rec = *state_.find(a.address);
    if (out.stopped) {  // unfinished; its intent stays unless this run never sent its create
      if (out.not_sent) {
        forget_unsent_intent(item);
        changed_.insert(a.address);
      }
      item.phase = Phase::Pending;
      return;
    }
    if (!out.error.empty()) {
      if (out.nothing_created) {
        state_.remove(a.address);  // nothing exists: the next run plans a plain create
        changed_.insert(a.address);
      }
      fail(item, out.error);
      return;
    }
    const std::string now = format_utc(clock_.wall_now());
    rec.create_pending = false;
    if (out.service) record_service(rec, *out.service, now);
    if (out.vpc) record_vpc(rec, *out.vpc, now);
    if (out.adopted) rec.observed = out.service ? observe(*out.service, rec.settings, recorded_vpc_names(state_, a.project_id))
                                              : observe(*out.vpc);
    changed_.insert(a.address);
    (out.adopted ? result_.adopted : result_.created)++;
    std::string note;
    if (out.adopted && a.kind == ResourceKind::Service && rec.initial_password.empty()) {
      // Its initial password was in the answer that was lost, so nobody knows it: a new one is
      // chosen now, recorded, and set once the service is READY. One chosen by an earlier run whose
      // answer was lost too is kept: the service may have it already.
      if (rec.pending_password.empty()) rec.pending_password = random_password();
      note = "the create's answer, and the initial password in it, were lost: a new password is recorded and set "
             "once it is READY (`dbform rotate-password " + a.address + "` sets another at any time)";
    }
    if (out.adopted && differs_from_declared(rec))
      note += std::string(note.empty() ? "" : "; ") +
              "its settings differ from the declaration, recorded as found: the next plan shows the difference";
    emit({out.adopted ? EventKind::Adopted : EventKind::Created, a.address, rec.id, rec.status, Duration(0), note});
    if (a.kind == ResourceKind::Vpc || !options_.wait) {
      item.phase = Phase::Done;
      if (a.kind == ResourceKind::Vpc) ready(item, rec);
      return;
    }
    after_status(static_cast<size_t>(&item - items_.data()), rec);
  }

  // Whether what an adoption found differs from the create's declared fields.
  static bool differs_from_declared(const ResourceRecord& rec) {
    for (auto it = rec.settings.begin(); it != rec.settings.end(); ++it)
      if (rec.observed.contains(it.key()) && rec.observed[it.key()] != it.value()) return true;
    return false;
  }

  void handle_poll(size_t i, const Outcome& out) {
    Item& item = items_[i];
    item.polling = false;
    item.get_next = false;  // asked by id: the next rounds may use the list again
    ResourceRecord& rec = *state_.find(item.action->address);
    ++item.polls;
    if (out.gone && item.deleting) return forget(item);
    if (out.gone)
      return fail(item, "the service " + rec.id + " no longer exists (404). Run `dbform state rm " + rec.address +
                            "` to forget it and create it again");
    if (!out.error.empty()) return poll_failed(i, out);
    seen(i, *out.service);
  }

  void handle_poll_list(const Outcome& out) {
    std::unordered_map<std::string, const Service*> by_id;
    for (const auto& s : out.listed) by_id.emplace(s.service_id, &s);
    for (size_t i : out.items) {
      Item& item = items_[i];
      item.polling = false;
      ++item.polls;
      if (!out.error.empty()) {
        poll_failed(i, out);
        continue;
      }
      const ResourceRecord& rec = *state_.find(item.action->address);
      auto found = by_id.find(rec.id);
      if (found == by_id.end()) {
        item.get_next = true;  // not listed (yet: lists lag behind writes); a GET by id tells
        schedule_poll(i, rec);
        continue;
      }
      seen(i, *found->second);
    }
  }

  void poll_failed(size_t i, const Outcome& out) {
    Item& item = items_[i];
    if (!out.transient) return fail(item, out.error);
    spdlog::info("{}: watch request failed, will retry: {}", item.action->address, out.error);
    schedule_poll(i, *state_.find(item.action->address));
  }

  // What a status check saw of a service.
  void seen(size_t i, const Service& service) {
    Item& item = items_[i];
    ResourceRecord& rec = *state_.find(item.action->address);
    const std::string before = rec.status, host = rec.endpoint_host, pooler = rec.pooler_host;
    record_service(rec, service, format_utc(clock_.wall_now()));
    // A poll that saw nothing new costs no write; the end of the run writes the last answers.
    if (rec.status != before || rec.endpoint_host != host || rec.pooler_host != pooler) changed_.insert(rec.address);
    if (rec.status != before)
      emit({EventKind::StatusChanged, rec.address, rec.id, rec.status, elapsed(item), ""});
    after_status(i, rec);
  }

  void after_status(size_t i, ResourceRecord& rec) {
    Item& item = items_[i];
    if (item.deleting) return rec.status == "DELETED" ? forget(item) : schedule_poll(i, rec);
    switch (classify_status(rec.status)) {
      case StatusVerdict::Ready:
        if (rec.pending_call.is_object() && rec.pending_call.value("call", "") == "delete") {  // a stopped prune's delete did not happen
          rec.pending_call = nullptr;
          changed_.insert(rec.address);
        }
        if (!settle_call(item, rec)) return schedule_poll(i, rec);
        return proceed(i, rec);
      case StatusVerdict::Failed:
        return fail(item, "status " + rec.status + ": it will not become READY. After fixing it in the console, " +
                              "run `dbform state rm " + rec.address + "` to create it again");
      case StatusVerdict::KeepWaiting: return schedule_poll(i, rec);
    }
  }

  void schedule_poll(size_t i, const ResourceRecord& rec) {
    Item& item = items_[i];
    auto now = clock_.now();
    const std::string last = rec.status.empty() ? "unknown" : rec.status;
    if (now >= item.deadline && item.deleting)
      return fail(item, "not gone after " + format_duration(options_.wait_timeout) + " (last status " + last +
                            "); it stays recorded, and apply --prune again keeps waiting for it");
    if (now >= item.deadline)
      return fail(item, "not READY after " + format_duration(options_.wait_timeout) + " (last status " + last +
                            "); run apply again to keep waiting, it will not be created again");
    item.phase = Phase::Watching;
    push_timer(i, std::min(now + options_.polls.after(elapsed(item)), item.deadline));
  }

  void start_watch(Item& item, Phase phase, Clock::TimePoint at) {
    item.phase = phase;
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
    emit({EventKind::Ready, rec.address, rec.id, rec.status, elapsed(item), endpoint});
  }

  void fail(Item& item, const std::string& why) {
    item.phase = Phase::Failed;
    result_.failures.push_back(item.action->address + ": " + why);
    const ResourceRecord* rec = state_.find(item.action->address);
    emit({EventKind::Failed, item.action->address, rec ? rec->id : "", rec ? rec->status : "",
          rec ? elapsed(item) : Duration(0), why});
  }

  // After a job failed outright: what is unfinished fails with its reason. What was sent and not
  // recorded is what an interrupted run leaves: the next apply resolves it (creates by name).
  void fail_unfinished() {
    for (auto& item : items_)
      if (item.phase != Phase::Done && item.phase != Phase::Failed)
        fail(item, "not finished: " + worker_failure_ + "; the run stopped, and what it sent is recorded as "
                   "pending for the next apply to resolve");
  }

  // After a stop: lists what is unfinished. A stop that came when nothing was left changes nothing.
  void finish_interrupted() {
    for (const auto& item : items_)
      if (item.phase != Phase::Done && item.phase != Phase::Failed) result_.pending.push_back(item.action->address);
    if (result_.pending.empty()) return;
    result_.interrupted = true;
    emit({EventKind::Interrupted, "", "", "", Duration(0),
          std::to_string(result_.pending.size()) + " resource(s) not finished"});
  }

  // A state that cannot be written stops the run like a signal: nothing new is started (above all
  // no create whose intent is not on disk); what is in flight is recorded in memory for the caller.
  void save() {
    if (changed_.empty()) return;
    try {
      store_.write_changes(state_, std::vector<std::string>(changed_.begin(), changed_.end()));
      changed_.clear();
    } catch (const Error& e) {
      if (result_.save_error.empty())
        emit({EventKind::Failed, "", "", "", Duration(0), std::string("cannot save the state, stopping: ") + e.what()});
      result_.save_error = e.what();
    }
  }

  // Everything journaled so far folded into one document (and the polls' last answers with it).
  void compact() {
    try {
      store_.compact(state_);
    } catch (const Error& e) {  // every change is saved already: the journal keeps it
      spdlog::warn("the state's journal could not be folded in ({}); it is replayed on every read until a later "
                   "run folds it", e.what());
    }
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
  std::deque<size_t> to_set_password_;  // READY services whose pending password is to be set
  std::deque<size_t> to_call_;          // READY services whose next update call is to be sent
  std::string worker_failure_;  // a job that failed outright: the run stops (see apply_outcomes)
  std::deque<size_t> to_delete_;        // resources to delete (--prune)
  std::unordered_map<std::string, int> vpcs_unsettled_;
  struct Timer {
    Clock::TimePoint at;
    size_t item;
    int generation;
    bool operator>(const Timer& other) const { return at > other.at; }
  };
  std::priority_queue<Timer, std::vector<Timer>, std::greater<>> timers_;
  int live_timers_ = 0;
  int creates_in_flight_ = 0;  // creates, update calls and password changes, at most --parallelism
  int polls_in_flight_ = 0;    // status checks, at most kPollLane
  std::unordered_map<std::string, std::vector<size_t>> services_of_project_;
  std::set<std::string> changed_;  // addresses changed in memory since the last save
  std::vector<Event> unreported_;  // waiting for the save that records what they tell
  ApplyResult result_;
};

}  // namespace

std::vector<std::string> projects_with_work(const Plan& plan) {
  std::vector<std::string> out;
  std::set<std::string> seen;
  for (const auto& a : plan.actions)
    if ((a.action == Action::Create || a.action == Action::Adopt || a.action == Action::Wait ||
         a.action == Action::Update || a.action == Action::Delete) &&
        seen.insert(a.project_id).second)
      out.push_back(a.project_id);
  return out;
}

ApplyEngine::ApplyEngine(ApiClient& api, StateStore& store, Clock& clock, EventSink& events, ApplyOptions options)
    : api_(api), store_(store), clock_(clock), events_(events), options_(options) {
  options_.parallelism = std::max(1, options_.parallelism);
}

std::vector<PreflightPass> preflight_keys(ApiClient& api, const std::vector<std::string>& projects,
                                          const std::map<std::string, ProjectKey>& keys, int parallelism) {
  struct Checked {
    std::optional<PreflightPass> pass;
    std::string problem;
  };
  // One call per project, `parallelism` at a time; the passes and problems in the projects' order.
  auto checked = in_parallel<Checked>(projects.size(), static_cast<size_t>(std::max(1, parallelism)), [&](size_t i) {
    const std::string& project = projects[i];
    auto found = keys.find(project);
    if (found == keys.end()) return Checked{std::nullopt, "project `" + project + "`: no API key was resolved"};
    const ProjectKey& key = found->second;
    try {
      AuthInfo info = api.auth_info(key.key);
      if (info.project_id.empty()) {
        spdlog::warn("project {}: GET /auth/info did not say which project the key in {} belongs to", project,
                     key.variable);
      } else if (info.project_id != project) {
        return Checked{std::nullopt, "project `" + project + "`: the API key in " + key.variable + " (key name `" +
                                         info.key_name + "`) belongs to project `" + info.project_id + "`" +
                                         (info.project_name.empty() ? "" : " (" + info.project_name + ")") +
                                         ", not `" + project + "`. Set " + key.variable + " to a key of project `" +
                                         project + "`"};
      }
      return Checked{PreflightPass{project, "project " + project + ": key `" + info.key_name + "` from " + key.variable},
                     ""};
    } catch (const ApiError& e) {
      const bool rejected = e.status() == 401 || e.status() == 403;
      return Checked{std::nullopt, "project `" + project + "`: the API key in " + key.variable +
                                       (rejected ? " was not accepted: " : " could not be checked: ") + e.what()};
    } catch (const Error& e) {
      return Checked{std::nullopt,
                     "project `" + project + "`: the API key in " + key.variable + " could not be checked: " + e.what()};
    }
  });
  std::vector<std::string> problems;
  std::vector<PreflightPass> passed;
  for (auto& c : checked) {
    if (c.pass) passed.push_back(std::move(*c.pass));
    else problems.push_back(std::move(c.problem));
  }
  if (!problems.empty())
    throw Error("preflight failed, nothing was changed:\n  " + join(problems, "\n  "));
  return passed;
}

void ApplyEngine::preflight(const Plan& plan, const std::map<std::string, ProjectKey>& keys) {
  report_preflight(preflight_keys(api_, projects_with_work(plan), keys, options_.parallelism));
}

void ApplyEngine::report_preflight(const std::vector<PreflightPass>& passed) {
  for (const auto& p : passed) deliver(events_, {EventKind::PreflightPassed, p.project, "", "", Duration(0), p.message});
}

ApplyResult ApplyEngine::apply(const Plan& plan, const std::map<std::string, ProjectKey>& keys, State& state) {
  ApplyRun run(api_, store_, clock_, events_, options_, keys, state);
  return run.execute(plan);
}

}  // namespace dbform
