#include "engine/apply.h"

#include <algorithm>
#include <deque>
#include <limits>
#include <queue>
#include <set>
#include <unordered_map>

#include "engine/jobs.h"
#include "plan/kinds.h"
#include "engine/namesakes.h"
#include "engine/operations.h"
#include "engine/work_queue.h"
#include "plan/differ.h"
#include "util/log.h"
#include "util/duration.h"
#include "util/parallel.h"
#include "util/text.h"
#include "util/json_limits.h"

namespace dbform {

namespace {

// Hands an event to a renderer, which can never throw into the engine: its output is lost (a closed
// pipe, a full disk), the run goes on recording. False when the renderer failed.
bool deliver(EventSink& sink, const Event& event) {
  try {
    sink.on_event(event);
    return true;
  } catch (const std::exception& e) {
    log::debug(std::string("the output failed, recording goes on: ") + e.what());
    return false;
  }
}

constexpr size_t kNone = std::numeric_limits<size_t>::max();

// One resource of the plan: its operations run one after another and share its watch.
struct Item {
  const PlannedAction* action = nullptr;
  std::vector<size_t> ops;  // its operations, in the order they run
  size_t watched = kNone;   // the operation its status checks answer to
  Clock::TimePoint watch_start{}, deadline{};
  std::optional<Clock::TimePoint> first_call;  // when this run sent its first call for it
  bool counted_update = false;                 // counted once in ApplyResult::updated, however many calls
  int polls = 0;
  int timer_generation = 0;  // a timer of an older generation was cancelled
  bool timer_live = false;   // a timer of the current generation is queued
  bool polling = false;      // a status check of it is in flight
  bool get_next = false;     // the last list did not show it (lists lag): ask for it by id next
  bool failed = false;       // an operation of it failed (reported)
  // --no-wait: its last call was answered, not watched, or it was left for the next apply: no READY
  // to report.
  bool unconfirmed = false;
  bool password_set = false;  // this run set a new password on it
  // READY, and waited for until it accepts connections (engine/connectable.h): its timer's checks
  // are connection attempts until `connect_deadline`; `connected` once one was accepted.
  bool connecting = false, connected = false;
  Clock::TimePoint connect_deadline{};
};

// Blocked: something it needs is not done. Ready: queued. Sent: its call is on the way. Watching:
// its resource is watched until it shows the operation's effect. Left: not sent, for the next apply
// (--no-wait did not wait for what it needs).
enum class OpStep { Blocked, Ready, Sent, Watching, Done, Failed, Left };

struct Op {
  Operation what;
  size_t item = kNone;  // kNone for a barrier
  OpStep step = OpStep::Blocked;
  size_t unmet = 0;  // needs not done yet
  std::vector<size_t> dependants;
  int sends = 0;  // a call's sends
  // A call answered with success: watched until its change shows. Unset while a call whose answer
  // did not come (or said busy) is checked: its change, once READY, decides whether it goes again.
  bool awaiting = false;
  bool deleting = false;  // a delete accepted: watched until gone
};

bool over(const Op& op) { return op.step == OpStep::Done || op.step == OpStep::Failed || op.step == OpStep::Left; }

// How often one call is sent when its answers say the service was busy (409) or did not come.
constexpr int kMaxCallSends = 3;

// Polls have their own workers, so that creates, however many, cannot hold them up; and where
// several services of a project are waited for, one list answers for all of them.
constexpr int kPollLane = 4;
constexpr size_t kListAtLeast = 3;

// One execution of a plan: one ready queue over its operations (engine/operations.h), one
// dispatch that journals every call before it is sent, one handler per answer, one failure rule (a
// failed operation fails what depends on it and nothing else). The only writer of the state.
class ApplyRun {
 public:
  ApplyRun(ApiClient& api, StateStore& store, Clock& clock, EventSink& events, const ApplyOptions& options,
           const std::map<std::string, ProjectKey>& keys, State& state)
      : api_(api), store_(store), clock_(clock), events_(events), options_(options), keys_(keys), state_(state) {}

  ApplyResult execute(const Plan& plan) {
    move_renamed(plan);
    record_imports_and_forgets(plan);
    build(plan);
    record_protection(plan);  // saved with the first write, before any call
    guard_names(plan);
    guard_deletes(plan);
    for (size_t o = 0; o < ops_.size(); ++o)
      if (ops_[o].step == OpStep::Blocked && ops_[o].unmet == 0) make_ready(o);
    for (auto& item : items_)  // nothing to call (a change of protection): done at once
      if (item.ops.empty()) ready(item, *state_.find(item.action->address));
    WorkQueue<Outcome> workers(options_.parallelism + kPollLane);
    bool stopped = false;
    for (;;) {
      if (stopping()) {
        stopped = true;
        if (options_.stop && options_.stop->load()) {  // said at once: what is in flight may take a while
          emit({EventKind::StopRequested, "", "", "", Duration(0),
                "finishing what was sent and saving the state"});
          flush_events();
        }
        break;
      }
      // The results of the last round are saved with the next batch's journal, in one write, before
      // any of them is reported or any of those calls is sent.
      dispatch(workers);
      save();
      flush_events();
      dispatch_due_polls(workers);
      if (workers.in_flight() == 0 && live_timers_ == 0 && ready_.empty()) break;
      wait_for_progress(workers);
    }
    // A stop: let what is in flight finish and record it, start nothing new.
    while (workers.in_flight() > 0) apply_outcomes(workers, workers.take(kForever));
    dispatch(workers, /*may_start=*/false);  // what needs neither a call nor a watch is done
    save();
    result_.unsaved_changes = !changed_.empty();
    if (result_.save_error.empty()) compact();
    if (!worker_failure_.empty()) fail_unfinished();
    else if (stopped || stopping()) finish_interrupted();
    else
      for (size_t o = 0; o < ops_.size(); ++o)
        if (!over(ops_[o])) fail_op(o, "internal error: it was never scheduled");
    flush_events();
    return std::move(result_);
  }

 private:
  // How long the main thread waits before looking at the stop flag again.
  static constexpr Duration kStopCheck{250};
  static constexpr std::optional<Duration> kForever{};

  // The records of renames move to their new addresses, as the plan was made (saved with the first
  // write, before any call).
  void move_renamed(const Plan& plan) {
    for (const auto& a : plan.actions)
      if (!a.renamed_from.empty() && state_.find(a.renamed_from) && !state_.find(a.address))
        for (const auto& address : move_record(state_, a.renamed_from, a.address, a.name)) changed_.insert(address);
  }

  // Imports (their records put in the state by the caller from what its refresh read) and records
  // forgotten (`removed:`) are saved with the first write, before any call; neither calls the API.
  void record_imports_and_forgets(const Plan& plan) {
    for (const auto& a : plan.actions) {
      if (!a.import_id.empty() && a.action != Action::Conflict && state_.find(a.address)) {
        changed_.insert(a.address);
        ++result_.imported;
        emit({EventKind::Imported, a.address, a.import_id, state_.find(a.address)->status, Duration(0), ""});
      } else if (a.action == Action::Forget && state_.remove(a.address)) {
        changed_.insert(a.address);
        ++result_.forgotten;
        emit({EventKind::Forgotten, a.address, a.resource_id, "", Duration(0), ""});
      }
    }
  }

  // The plan's operations, and the resources they act on.
  void build(const Plan& plan) {
    OperationGraph graph = operations_of(plan, state_, options_.wait);
    std::unordered_map<size_t, size_t> item_of;  // action -> item
    items_.reserve(graph.actions.size());
    for (size_t i : graph.actions) {
      const PlannedAction& a = plan.actions[i];
      if (!keys_.count(a.project_id))  // before anything is sent, not as a crash half-way
        throw Error("no API key was resolved for project `" + a.project_id + "`");
      item_of[i] = items_.size();
      if (type_of(a.kind).watched) watched_together_[together(a)].push_back(items_.size());
      items_.emplace_back().action = &a;
    }
    ops_.reserve(graph.ops.size());
    for (auto& operation : graph.ops) {
      const size_t o = ops_.size();
      Op op;
      op.what = std::move(operation);
      if (op.what.action != kNoAction) {
        op.item = item_of.at(op.what.action);
        items_[op.item].ops.push_back(o);
      }
      op.unmet = op.what.needs.size();
      for (size_t need : op.what.needs) ops_[need].dependants.push_back(o);
      ops_.push_back(std::move(op));
    }
  }

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
    // timeout here would spin). Calls never wait on time: they go as soon as a worker is free.
    // A stop is looked for every kStopCheck even then, so that it is said at once.
    if (!can_poll) return apply_outcomes(workers, workers.take(options_.stop ? std::optional(kStopCheck) : kForever));
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
      if (outcome.type == JobType::Poll || outcome.type == JobType::PollList || outcome.type == JobType::Connect)
        --polls_in_flight_;
      else --sends_in_flight_;
    }
    for (auto& outcome : outcomes) handle(outcome);
  }

  // The name guard: a planned create or rename whose name exists unrecorded in the API is not sent.
  void guard_names(const Plan& plan) {
    auto is_create = [&](const Op& op) {
      const Action action = op.what.type == OpType::Create ? items_[op.item].action->action : Action::NoOp;
      return action == Action::Create || action == Action::Replace;
    };
    auto is_rename = [&](const Op& op) {
      return op.what.type == OpType::Call && items_[op.item].action->calls[op.what.call].call == "rename";
    };
    auto claims = [&](const Op& op) { return is_create(op) || is_rename(op); };
    if (options_.names_checked || stopping() || std::none_of(ops_.begin(), ops_.end(), claims)) return;
    NamesakeScan scan = scan_namesakes(api_, plan, state_, keys_, options_.parallelism);
    // A project where a declared name exists unrecorded has another writer (another state, or an
    // apply of one still running) or a stale plan: none of its creates go, not only the namesakes'.
    std::map<std::string, std::vector<std::string>> taken;  // project -> its creates' addresses with a namesake
    for (const auto& op : ops_)
      if (const PlannedAction& a = *items_[op.item].action; is_create(op) && scan.found.count(a.address))
        taken[a.project_id].push_back(a.address);
    for (size_t o = 0; o < ops_.size(); ++o) {
      if (is_rename(ops_[o])) {
        const PlannedAction& a = *items_[ops_[o].item].action;
        auto error = scan.errors.find(a.project_id);
        auto found = scan.found.find(a.address);
        if (error != scan.errors.end())
          fail_op(o, "not renamed: could not list project " + a.project_id + " to check that no `" + a.name +
                         "` exists already: " + error->second);
        else if (found != scan.found.end())
          fail_op(o, "not renamed to `" + a.name + "`: " + kind_plural(a.kind) + " " + join(found->second, ", ") +
                         " of that name exist already without being recorded, and names are not unique in the "
                         "API (a rename would make two of one name). Rename or delete that one first, or declare "
                         "another name");
        continue;
      }
      if (!is_create(ops_[o])) continue;
      const PlannedAction& a = *items_[ops_[o].item].action;
      auto error = scan.errors.find(a.project_id);
      auto found = scan.found.find(a.address);
      auto others = taken.find(a.project_id);
      if (error != scan.errors.end())
        fail_op(o, "not created: could not list project " + a.project_id + " to check that no `" + a.name +
                       "` exists already: " + error->second);
      else if (found != scan.found.end())
        fail_op(o, "not created: " + namesake_reason(a.kind, a.address, found->second));
      else if (others != taken.end())
        fail_op(o, "not created: in project " + a.project_id + ", " + join(others->second, ", ") +
                       " exist(s) already without being recorded, so another state or a running apply may be "
                       "creating there. Run `dbform plan` again: it shows them as conflicts");
    }
    flush_events();
  }

  // A delete of an id that a declared resource's record holds too (a hand-edited state) is refused
  // before anything is sent: the state's reader refuses such a state, and this holds whatever
  // state the engine is given.
  void guard_deletes(const Plan& plan) {
    std::map<std::string, std::string> declared;  // kind/project/id -> address
    for (const auto& a : plan.actions) {
      const ResourceRecord* rec = state_.find(a.address);
      const bool leaving = a.action == Action::Delete || a.action == Action::Orphan || a.action == Action::Replace;
      if (!leaving && rec && !rec->id.empty())
        declared.emplace(id_key(*rec), a.address);
    }
    for (size_t o = 0; o < ops_.size(); ++o) {
      if (ops_[o].what.type != OpType::Delete) continue;
      const std::string& address = items_[ops_[o].item].action->address;
      const ResourceRecord* rec = state_.find(address);
      auto owner = rec ? declared.find(id_key(*rec)) : declared.end();
      // The plan refuses these; an engine given another plan (or a state edited since) does too.
      if (const std::string holds = protected_in(*items_[ops_[o].item].action); !holds.empty())
        fail_op(o, "not deleted: " + holds + " is protected (deletion_protection: true, declared or recorded)");
      else if (owner != declared.end())
        fail_op(o, "not deleted: its id " + rec->id + " is also the id of " + owner->second +
                       ", which is declared; the state was edited by hand. `dbform state rm " + address +
                       "` removes the wrong record");
    }
    flush_events();
  }

  // The address of what a delete of `a` would take with it that is protected: the resource itself
  // (its record, or its declaration in a replacement) or a resource living in it; "" for none.
  std::string protected_in(const PlannedAction& a) const {
    const ResourceRecord* rec = state_.find(a.address);
    if ((rec && rec->deletion_protection) || (a.action == Action::Replace && a.deletion_protection)) return a.address;
    for (const auto& r : state_.resources)
      if (r.deletion_protection && !r.deleted_outside && r.project_id == a.project_id && r.parent == a.name &&
          parent_kind(r.kind) == a.kind)
        return r.address;
    return "";
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

  // The resources one list answers for: one kind in one project (in one parent, for the kinds that
  // live in another).
  static std::string together(const PlannedAction& a) {
    return a.project_id + "/" + kind_name(a.kind) + "/" + a.parent;
  }

  // Where the action's resource lives, as its calls name it (its parent's id, once recorded).
  Scope scope_of(const PlannedAction& a) const { return dbform::scope_of(state_, a.project_id, a.kind, a.parent); }

  const std::string& key_of(const PlannedAction& a) const { return keys_.at(a.project_id).key; }
  Item& item_of(size_t o) { return items_[ops_[o].item]; }
  ResourceRecord& record_of(size_t o) { return *state_.find(item_of(o).action->address); }
  const PlannedCall& call_of(size_t o) { return item_of(o).action->calls[ops_[o].what.call]; }

  void make_ready(size_t o) {
    ops_[o].step = OpStep::Ready;
    ready_.push_back(o);
  }

  // The one dispatch: starts every ready operation it can. One that needs no call starts at once
  // (a watch, a call whose change shows already); the calls, as many as workers are free for, are
  // journaled (a create's intent, a call or a delete as pending) in one write before any of them is
  // sent, and none is sent when that write fails. Unless `may_start` (a stop), only what needs
  // neither a call nor a watch is done.
  void dispatch(WorkQueue<Outcome>& workers, bool may_start = true) {
    std::vector<size_t> batch;
    std::deque<size_t> later;  // ready, but no worker is free for their calls
    while (!ready_.empty()) {
      const size_t o = ready_.front();
      ready_.pop_front();
      if (ops_[o].step != OpStep::Ready) continue;  // failed since it was queued
      if (!needs_call(o) && (may_start || ops_[o].what.type != OpType::Settle)) start_without_call(o);
      else if (may_start && sends_in_flight_ + batch.size() < static_cast<size_t>(options_.parallelism))
        batch.push_back(o);
      else later.push_back(o);
    }
    ready_ = std::move(later);
    if (batch.empty()) return;
    const auto unsaved_before = changed_;
    std::vector<size_t> sending;
    for (size_t o : batch)
      if (journal(o)) sending.push_back(o);
    save();
    if (!result_.save_error.empty()) {
      for (size_t o : sending) unjournal(o);
      changed_ = unsaved_before;  // the memory holds nothing the store lacks but what was unsaved before
      return flush_events();
    }
    for (size_t o : sending) send(workers, o);
    flush_events();
  }

  bool needs_call(size_t o) {
    switch (ops_[o].what.type) {
      case OpType::Create:
      case OpType::Delete: return true;
      case OpType::Password: return !record_of(o).pending_password.empty();
      case OpType::Call: return !shows_change(o, record_of(o));
      case OpType::Settle:
      case OpType::Barrier: return false;
    }
    return false;
  }

  void start_without_call(size_t o) {
    Op& op = ops_[o];
    if (op.what.type == OpType::Settle) {  // watched until READY from now
      start_watch(o, clock_.now());
      return watch_now(op.item);
    }
    // A call whose change the service shows already (an earlier send whose answer was lost, or a
    // run that stopped before recording it) is recorded, not sent again.
    if (op.what.type == OpType::Call) record_call(o);
    complete(o);
  }

  // Recorded before the call is sent. False: it cannot be sent (and failed).
  bool journal(size_t o) {
    const PlannedAction& a = *item_of(o).action;
    switch (ops_[o].what.type) {
      case OpType::Create:
        for (const Dependency& d : type_of(a.kind).needs(a)) {
          const ResourceRecord* needed = state_.find(d.address);
          if (a.action != Action::Adopt && d.settled && (!needed || needed->id.empty() || !needed->is_ready())) {
            if (!options_.wait) {  // it was not waited for
              leave(o, "not created: its " + d.role + " `" + d.address + "` was not waited for (--no-wait)");
              return false;
            }
            fail_op(o, "not created: its " + d.role + " `" + d.address + "` is not READY (" +
                           (needed && !needed->status.empty() ? "status " + needed->status : "not created yet") +
                           "); the next apply creates it once it is");
            return false;
          }
        }
        record_intent(a);
        return true;
      case OpType::Password: return true;  // the pending password is recorded already
      case OpType::Delete: record_of(o).pending_call = {{"call", "delete"}}; break;
      case OpType::Call: {
        const PlannedCall& call = call_of(o);
        nlohmann::json body = call_body(a, call);
        if (body.is_object() && body.contains("vpc_id") && body["vpc_id"].is_null()) {
          fail_op(o, call.call == "attachToVPC"
                         ? "not attached: its VPC `" + call.vpc + "` was not created (see above); the next apply "
                           "attaches it"
                         : "not detached: the id of VPC `" + call.vpc + "` is not known. Apply without "
                           "--no-refresh: its refresh reads it");
          return false;
        }
        record_of(o).pending_call = {{"call", call.call}, {"body", std::move(body)}};
        break;
      }
      case OpType::Settle:
      case OpType::Barrier: return false;
    }
    changed_.insert(a.address);
    return true;
  }

  // The journal of a call that was never sent because it could not be saved.
  void unjournal(size_t o) {
    if (ops_[o].what.type == OpType::Create) return forget_unsent_intent(*item_of(o).action);
    if (ops_[o].what.type != OpType::Password) record_of(o).pending_call = nullptr;
  }

  void send(WorkQueue<Outcome>& workers, size_t o) {
    Op& op = ops_[o];
    const PlannedAction& a = *item_of(o).action;
    const ResourceRecord& rec = record_of(o);
    const std::string key = key_of(a);
    op.step = OpStep::Sent;
    ++sends_in_flight_;
    if (!item_of(o).first_call) item_of(o).first_call = clock_.now();
    auto submit = [&](auto job) {
      workers.submit([o, job = std::move(job)] {
        Outcome out = job();
        out.item = o;
        return out;
      });
    };
    switch (op.what.type) {
      case OpType::Create: {
        start_watch(o, clock_.now());  // a service's wait timeout counts from its create
        // A read replica set or peering recorded but missing from a list may only be missing from
        // that list (a lagging or flaky one): its absence is confirmed over the settle window first.
        const bool look_first = a.action == Action::Adopt || (a.action == Action::Create && !a.resource_id.empty() &&
                                                              parent_kind(a.kind).has_value());
        const ResourceRecord* source = nullptr;
        std::string made_from;
        for (const Dependency& d : type_of(a.kind).needs(a))
          if (d.source && (source = state_.find(d.address))) made_from = "from its " + d.role + " " + d.address + " (" + source->id + ")";
        emit({EventKind::CreateSent, a.address, "", "", Duration(0),
              look_first ? (a.action == Action::Adopt ? "an earlier create's outcome is unknown: looking it up by name first"
                                                      : "missing from a list: looking it up by name again first")
                         : made_from});
        return submit([this, &a, look_first, key, scope = scope_of(a), from = source ? source->id : std::string()] {
          try {
            return create_or_adopt(CreateContext{api_, clock_, options_.settle_window, options_.stop}, a, scope, key,
                                   look_first, from);
          } catch (const std::exception& e) {  // e.g. the lookup failed: the outcome is still unknown
            Outcome out;
            out.error = describe_exception(e) + "; the create's outcome is unknown, so the next apply looks for `" +
                        a.name + "` by name before creating it";
            return out;
          }
        });
      }
      case OpType::Password:
        return submit([this, &a, id = rec.id, password = rec.pending_password, key] {
          return set_password(api_, a, id, key, password);
        });
      case OpType::Call: {
        ++op.sends;
        const std::string& name = rec.pending_call["call"].get_ref<const std::string&>();
        const nlohmann::json& body = rec.pending_call["body"];
        emit({EventKind::UpdateSent, a.address, rec.id, "", Duration(0), name + (body.is_null() ? "" : " " + dump_json(body))});
        return submit([this, &a, scope = scope_of(a), id = rec.id, key, name, body] {
          return send_update(api_, a, scope, id, key, name, body);
        });
      }
      case OpType::Delete:
        start_watch(o, clock_.now());  // a delete's time counts from its call
        emit({EventKind::DeleteSent, a.address, rec.id, "", Duration(0), ""});
        return submit([this, &a, scope = scope_of(a), id = rec.id, key] {
          return delete_resource(api_, a, scope, id, key);
        });
      case OpType::Settle:
      case OpType::Barrier: return;
    }
  }

  void record_intent(const PlannedAction& a) {
    ResourceRecord* rec = state_.find(a.address);
    if (rec && rec->create_pending) return;  // an adopt: the intent is already recorded
    ResourceRecord r;
    r.address = a.address;
    r.project_id = a.project_id;
    r.kind = a.kind;
    r.parent = a.parent;
    r.name = a.name;
    r.settings = created_with(a.kind, a.after);  // the fields later calls set are recorded as they succeed
    r.deletion_protection = a.deletion_protection;
    r.create_pending = true;
    r.created_at = r.updated_at = format_utc(clock_.wall_now());
    state_.upsert(r);
    changed_.insert(r.address);
  }

  // The intent of a create that was never sent: a new record goes (nothing exists; a replaced one
  // is deleted by then), an adopt's record stays (its earlier create may have happened).
  void forget_unsent_intent(const PlannedAction& a) {
    if (a.action != Action::Adopt) state_.remove(a.address);
  }

  // The due status checks: a list of the project when it answers for several services waited for
  // there (every one of them rides along, due or not), a GET by id otherwise.
  void dispatch_due_polls(WorkQueue<Outcome>& workers) {
    drop_stale_timers();
    while (polls_in_flight_ < kPollLane && !timers_.empty() && timers_.top().at <= clock_.now()) {
      const size_t first = timers_.top().item;
      cancel_timer(first);
      if (items_[first].connecting) {
        submit_connection_check(workers, first);
        drop_stale_timers();
        continue;
      }
      const PlannedAction& a = *items_[first].action;
      std::vector<size_t> round = {first};
      if (!items_[first].get_next)
        for (size_t j : watched_together_[together(a)]) {
          const Item& other = items_[j];
          if (j != first && watching(other) && !other.polling && !other.get_next) round.push_back(j);
        }
      ++polls_in_flight_;
      if (round.size() >= kListAtLeast) {
        for (size_t j : round) {
          cancel_timer(j);
          items_[j].polling = true;
        }
        workers.submit([this, round, &a, scope = scope_of(a), key = key_of(a)] {
          Outcome out = poll_list(api_, type_of(a.kind), scope, key);
          out.items = round;
          return out;
        });
      } else {
        items_[first].polling = true;
        workers.submit([this, first, &a, scope = scope_of(a), id = state_.find(a.address)->id, key = key_of(a)] {
          Outcome out = poll_resource(api_, a, scope, id, key);
          out.item = first;
          return out;
        });
      }
      drop_stale_timers();
    }
  }

  bool watching(const Item& item) const { return item.watched != kNone && ops_[item.watched].step == OpStep::Watching; }

  void submit_connection_check(WorkQueue<Outcome>& workers, size_t i) {
    ++polls_in_flight_;
    items_[i].polling = true;
    workers.submit([check = options_.connectable.check, target = connect_target(*state_.find(items_[i].action->address)),
                    i] {
      Outcome out = check_connection(*check, target);
      out.item = i;
      return out;
    });
  }

  // READY, and now to be waited for until it accepts connections: checked at once, then again
  // after each refusal until the service's wait timeout.
  void start_connection_wait(Item& item, const ResourceRecord& rec) {
    if (auto problem = connection_problem(rec)) return report_failure(item, *problem);
    item.connecting = true;
    const auto now = clock_.now();
    item.connect_deadline = item.deadline > now ? item.deadline : now + options_.wait_timeout;
    emit({EventKind::StatusChanged, rec.address, rec.id, rec.status, since_first_call(item), kCheckingConnections});
    push_timer(static_cast<size_t>(&item - items_.data()), now);
  }

  void handle_connection(size_t i, const Outcome& out) {
    Item& item = items_[i];
    item.polling = false;
    const ResourceRecord& rec = *state_.find(item.action->address);
    const auto now = clock_.now();
    if (out.error.empty() || !out.transient || now >= item.connect_deadline) item.connecting = false;
    if (out.error.empty()) {
      item.connected = true;
      return ready(item, rec);
    }
    if (!out.transient) return report_failure(item, login_refused_message(out.error));
    if (now >= item.connect_deadline) return report_failure(item, not_connectable_message(options_.wait_timeout, out.error));
    push_timer(i, std::min(now + connection_retry_pause(options_.polls.interval), item.connect_deadline));
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

  void handle(const Outcome& out) {
    switch (out.type) {
      case JobType::Poll: return handle_poll(out.item, out);
      case JobType::PollList: return handle_poll_list(out);
      case JobType::Create: return handle_create(out.item, out);
      case JobType::Password: return handle_password(out.item, out);
      case JobType::Call: return handle_call(out.item, out);
      case JobType::Delete: return handle_delete(out.item, out);
      case JobType::Connect: return handle_connection(out.item, out);
    }
  }

  void handle_create(size_t o, const Outcome& out) {
    const PlannedAction& a = *item_of(o).action;
    if (out.stopped) {  // unfinished; its intent stays unless this run never sent its create
      if (out.not_sent) {
        forget_unsent_intent(a);
        changed_.insert(a.address);
      }
      ops_[o].step = OpStep::Ready;
      return;
    }
    if (!out.error.empty()) {
      if (out.nothing_created) {
        state_.remove(a.address);  // nothing exists: the next run plans a plain create
        changed_.insert(a.address);
      }
      return fail_op(o, out.error);
    }
    ResourceRecord& rec = record_of(o);
    const std::string now = format_utc(clock_.wall_now());
    rec.create_pending = false;
    const ResourceType& type = type_of(a.kind);
    if (out.shown) record_answer(rec, *out.shown, now);
    if (out.adopted && out.shown)
      rec.observed = type.observe(*out.shown, rec.settings, recorded_vpc_names(state_, a.project_id));
    changed_.insert(a.address);
    (out.adopted ? result_.adopted : result_.created)++;
    std::string note;
    if (out.adopted && type.has_password && rec.initial_password.empty()) {
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
    if (!type.watched) return complete(o);
    if (!options_.wait) return end_unconfirmed(o);
    after_status(ops_[o].item, rec);
  }

  // Whether what an adoption found differs from the create's declared fields.
  static bool differs_from_declared(const ResourceRecord& rec) {
    for (auto it = rec.settings.begin(); it != rec.settings.end(); ++it)
      if (rec.observed.contains(it.key()) && rec.observed[it.key()] != it.value()) return true;
    return false;
  }

  void handle_password(size_t o, const Outcome& out) {
    if (!out.error.empty())
      return fail_op(o, "its new password could not be set: " + out.error +
                            ". It stays recorded as pending, and the next apply sets it again");
    ResourceRecord& rec = record_of(o);
    rec.initial_password = rec.pending_password;
    rec.pending_password.clear();
    item_of(o).password_set = true;
    rec.updated_at = format_utc(clock_.wall_now());
    changed_.insert(rec.address);
    complete(o);
  }

  // The answer to an update call: the service is then watched until READY with the change, which
  // after_status records; or its failure.
  void handle_call(size_t o, const Outcome& out) {
    Op& op = ops_[o];
    ResourceRecord& rec = record_of(o);
    const PlannedCall& call = call_of(o);
    // Busy (409) or no answer: the call may have been made (a gateway's 504 after it was, then a
    // retry refused as busy). It stays pending until the resource tells, so that a run stopped
    // before then has the next one check before sending it again.
    const bool unknown = !out.error.empty() && (out.http_status == 409 || out.transient);
    if (!unknown) rec.pending_call = nullptr;
    changed_.insert(rec.address);
    const bool watched = type_of(item_of(o).action->kind).watched;
    if (!out.error.empty()) {
      if (unknown && op.sends < kMaxCallSends && watched) {
        log::info(rec.address + ": " + call.call + " was not confirmed (" + out.error + "); checking the service");
        op.awaiting = false;
        start_watch(o, clock_.now());
        return schedule_poll(op.item, rec);
      }
      return fail_op(o, call.call + " failed: " + out.error +
                            (unknown ? ". The next apply checks whether it was made before sending it again"
                                     : ". The next apply plans it again"));
    }
    // Its settings are recorded once the service shows the change: a refresh while it is being
    // made sees the old values, which are then not taken for a change outside dbform.
    const std::string now = format_utc(clock_.wall_now()), status = rec.status;
    if (out.shown) record_answer(rec, *out.shown, now);
    rec.updated_at = now;
    if (!std::exchange(item_of(o).counted_update, true)) ++result_.updated;
    emit({EventKind::Updated, rec.address, rec.id, rec.status, Duration(0), call.call});
    if (rec.status != status) emit({EventKind::StatusChanged, rec.address, rec.id, rec.status, Duration(0), ""});
    if (!watched) {  // made when it is answered: nothing to watch
      record_call(o);
      return complete(o);
    }
    if (!options_.wait) return end_unconfirmed(o);
    // Watched until READY with its change: an asynchronous call takes a while; a synchronous one is
    // read back at once (a SuccessMessage does not carry what changed, such as a pooler's endpoint).
    op.awaiting = true;
    start_watch(o, clock_.now());
    if (is_async_call(call.call)) schedule_poll(op.item, rec);
    else watch_now(op.item);
  }

  void handle_delete(size_t o, const Outcome& out) {
    const ResourceType& type = type_of(item_of(o).action->kind);
    ResourceRecord& rec = record_of(o);
    if (!out.transient) rec.pending_call = nullptr;  // no answer: the next apply checks whether it went
    changed_.insert(rec.address);
    if (!out.error.empty())
      return fail_op(o, "not deleted: " + out.error + (out.http_status == 409 ? type.busy_delete_hint : "") +
                            ". It stays recorded; the next apply --prune tries again");
    if (out.gone || !type.watched) return forget(o);
    ops_[o].deleting = true;  // DELETING until it is gone
    schedule_poll(ops_[o].item, rec);
  }

  void handle_poll(size_t i, const Outcome& out) {
    Item& item = items_[i];
    item.polling = false;
    item.get_next = false;  // asked by id: the next rounds may use the list again
    ++item.polls;
    if (!watching(item)) return;
    const ResourceRecord& rec = *state_.find(item.action->address);
    if (out.gone && ops_[item.watched].deleting) return forget(item.watched);
    if (out.gone && type_of(rec.kind).listed_only && elapsed(item) < options_.settle_window)
      return schedule_poll(i, rec);  // not listed yet: its list lags behind its create
    if (out.gone)
      return fail_op(item.watched, "the " + std::string(kind_noun(rec.kind)) + " " + rec.id + " no longer exists (404). Run `dbform state rm " +
                                       rec.address + "` to forget it and create it again");
    if (!out.error.empty()) return poll_failed(i, out);
    seen(i, *out.shown);
  }

  void handle_poll_list(const Outcome& out) {
    std::unordered_map<std::string, const Shown*> by_id;
    for (const auto& s : out.listed) by_id.emplace(s.id, &s);
    if (out.error.empty() && !out.items.empty()) back_off_if_quiet(out.items, by_id);
    for (size_t i : out.items) {
      Item& item = items_[i];
      item.polling = false;
      ++item.polls;
      if (!watching(item)) continue;
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

  // Polling that scales with the projects (and parents) watched: with a few, each resource is
  // checked every interval, so READY is seen within one. With more, every 25 of them allow one more
  // interval between a project's rounds (up to 4): its first round comes after 2 intervals, and each
  // round that shows no resource of it in a new status doubles the pause (a round that shows a
  // change keeps it). Most rounds of many projects whose resources are still being made see
  // nothing new, and each costs a call. PollSchedule's pause wins when it is longer.
  Duration::rep spread() const {
    return std::clamp<Duration::rep>(static_cast<Duration::rep>(watched_together_.size() / 25), 1, 4);
  }

  Duration quiet_pause(const PlannedAction& a) const {
    if (spread() == 1) return Duration(0);
    auto quiet = quiet_for_.find(together(a));
    return quiet == quiet_for_.end() ? 2 * options_.polls.interval : quiet->second;
  }

  void back_off_if_quiet(const std::vector<size_t>& round,
                         const std::unordered_map<std::string, const Shown*>& listed) {
    bool changed = false;
    for (size_t i : round) {
      const ResourceRecord& rec = *state_.find(items_[i].action->address);
      auto found = listed.find(rec.id);
      changed = changed || found == listed.end() || found->second->status != rec.status;
    }
    const PlannedAction& a = *items_[round.front()].action;
    if (!changed && spread() > 1)
      quiet_for_[together(a)] = std::min(2 * quiet_pause(a), spread() * options_.polls.interval);
  }

  void poll_failed(size_t i, const Outcome& out) {
    Item& item = items_[i];
    if (!out.transient) return fail_op(item.watched, out.error);
    log::info(item.action->address + ": watch request failed, will retry: " + out.error);
    schedule_poll(i, *state_.find(item.action->address));
  }

  // What a status check saw of the resource.
  void seen(size_t i, const Shown& shown) {
    Item& item = items_[i];
    ResourceRecord& rec = *state_.find(item.action->address);
    const std::string before = rec.status, host = rec.endpoint_host, pooler = rec.pooler_host;
    record_answer(rec, shown, format_utc(clock_.wall_now()));
    // A poll that saw nothing new costs no write; the end of the run writes the last answers.
    if (rec.status != before || rec.endpoint_host != host || rec.pooler_host != pooler) changed_.insert(rec.address);
    if (rec.status != before)
      emit({EventKind::StatusChanged, rec.address, rec.id, rec.status, since_first_call(item), ""});
    after_status(i, rec);
  }

  // What the status of the watched resource means for the operation it is watched for.
  void after_status(size_t i, ResourceRecord& rec) {
    const size_t o = items_[i].watched;
    Op& op = ops_[o];
    if (op.deleting) return rec.status == "DELETED" ? forget(o) : schedule_poll(i, rec);
    switch (type_of(rec.kind).verdict(rec.status)) {
      case StatusVerdict::Paused:
        if (!expects_pause(o))
          return fail_op(o, "status PAUSED: it was paused outside dbform. Declare `paused: true` to keep it paused, "
                            "or `paused: false` to have dbform start it");
        [[fallthrough]];
      case StatusVerdict::Ready:
        if (rec.pending_call.is_object() && rec.pending_call.value("call", "") == "delete") {  // a stopped prune's delete did not happen
          rec.pending_call = nullptr;
          changed_.insert(rec.address);
        }
        if (op.what.type != OpType::Call) return complete(o);
        if (!shows_change(o, rec)) {
          if (op.awaiting) return schedule_poll(i, rec);  // READY before its change shows: a view that lags
          return make_ready(o);                           // not made: sent again
        }
        record_call(o);
        return complete(o);
      case StatusVerdict::Failed:
        return fail_op(o, "status " + rec.status + ": it will not become READY. After fixing it in the console, " +
                              "run `dbform state rm " + rec.address + "` to create it again");
      case StatusVerdict::KeepWaiting: return schedule_poll(i, rec);
    }
  }

  // Whether PAUSED is what the operation may find (SPEC section 6): the service is declared paused,
  // or the plan starts it (a start, and the watch before it), or this is its stop.
  bool expects_pause(size_t o) {
    const PlannedAction& a = *item_of(o).action;
    if (a.after.value("paused", false)) return true;
    const auto& calls = a.calls;
    if (ops_[o].what.type == OpType::Call)
      return call_of(o).call == "stop" || call_of(o).call == "start" || call_of(o).call == "rename";
    return is_paused_status(a.status) ||
           std::any_of(calls.begin(), calls.end(), [](const PlannedCall& c) { return c.call == "start"; });
  }

  void schedule_poll(size_t i, const ResourceRecord& rec) {
    Item& item = items_[i];
    auto now = clock_.now();
    const std::string last = rec.status.empty() ? "unknown" : rec.status;
    if (now >= item.deadline && ops_[item.watched].deleting)
      return fail_op(item.watched, "not gone after " + format_duration(options_.wait_timeout) + " (last status " +
                                       last + "); it stays recorded, and apply --prune again keeps waiting for it");
    if (now >= item.deadline)
      return fail_op(item.watched, "not READY after " + format_duration(options_.wait_timeout) + " (last status " +
                                       last + "); run apply again to keep waiting, it will not be created again");
    ops_[item.watched].step = OpStep::Watching;
    const Duration pause = std::max(options_.polls.after(elapsed(item)), quiet_pause(*item.action));
    push_timer(i, std::min(now + pause, item.deadline));
  }

  void watch_now(size_t i) {
    ops_[items_[i].watched].step = OpStep::Watching;
    push_timer(i, clock_.now());
  }

  void start_watch(size_t o, Clock::TimePoint at) {
    Item& item = item_of(o);
    item.watched = o;
    item.watch_start = at;
    item.deadline = at + options_.wait_timeout;
  }

  // What events report: the time since this run's first call for the resource (0 without one).
  Duration since_first_call(const Item& item) const {
    return item.first_call ? std::chrono::duration_cast<Duration>(clock_.now() - *item.first_call) : Duration(0);
  }

  Duration elapsed(const Item& item) const {
    return std::chrono::duration_cast<Duration>(clock_.now() - item.watch_start);
  }

  // A call's change is made: the settings it brings about are recorded as set (and as observed),
  // and it is pending no more.
  void record_call(size_t o) {
    ResourceRecord& rec = record_of(o);
    const PlannedCall& call = call_of(o);
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
    if (call.call == "rename" && rec.last_response.is_object()) rec.last_response["name"] = call.body["name"];
    if (rec.observed.is_object() && call.call == "detachFromVPC") rec.observed.erase("vpc_id");
    if (rec.observed.is_object() && call.call == "attachToVPC")
      rec.observed["vpc_id"] = call_body(*item_of(o).action, call)["vpc_id"];
    changed_.insert(rec.address);
  }

  // The body as sent: an attachment's VPC id, unknown when the plan was made, is the recorded one.
  nlohmann::json call_body(const PlannedAction& a, const PlannedCall& call) const {
    nlohmann::json body = call.body;
    if (body.is_object() && body.contains("vpc_id") && body["vpc_id"].is_null())
      if (const std::string id = recorded_vpc_id(state_, a.project_id, call.vpc); !id.empty()) body["vpc_id"] = id;
    return body;
  }

  bool shows_change(size_t o, const ResourceRecord& rec) {
    const PlannedCall& call = call_of(o);
    const PlannedAction& a = *item_of(o).action;
    return call_took_effect(type_of(a.kind), call.call, call_body(a, call), rec.last_response);
  }

  // Done: what waited for it may go; a resource whose every operation is done is READY.
  void complete(size_t o) {
    Op& op = ops_[o];
    op.step = OpStep::Done;
    for (size_t d : op.dependants)
      if (ops_[d].step == OpStep::Blocked && --ops_[d].unmet == 0) make_ready(d);
    if (op.item == kNone) return;
    Item& item = items_[op.item];
    if (item.watched == o) item.watched = kNone;
    if (op.what.type == OpType::Delete || item.failed || item.unconfirmed) return;
    if (std::all_of(item.ops.begin(), item.ops.end(), [&](size_t other) { return over(ops_[other]); }))
      ready(item, *state_.find(item.action->address));
  }

  // --no-wait: an answered call ends its resource's part of the run. The rest of its chain needs it
  // READY, so it is left for the next apply, with what waits for it (the deletes, a fork of it).
  void end_unconfirmed(size_t o) {
    Item& item = item_of(o);
    item.unconfirmed = true;
    complete(o);
    for (size_t later : item.ops) {
      if (later < o || over(ops_[later])) continue;
      if (ops_[later].what.type == OpType::Password && !needs_call(later)) {
        complete(later);
        continue;
      }
      return leave(later, (ops_[later].what.type == OpType::Call ? "`" + call_of(later).call + "`" : "its password") +
                              " and what follows need it READY, which --no-wait does not wait for");
    }
  }

  // Not sent, and not failed: left for the next apply, with what depends on it. `why` is reported
  // when not empty.
  void leave(size_t o, const std::string& why) {
    Op& op = ops_[o];
    if (over(op)) return;
    op.step = OpStep::Left;
    if (op.item != kNone && !why.empty()) {
      Item& item = items_[op.item];
      item.unconfirmed = true;
      result_.left.push_back(item.action->address + ": " + why);
      const ResourceRecord* rec = state_.find(item.action->address);
      emit({EventKind::Left, item.action->address, rec ? rec->id : "", "", Duration(0), why});
    }
    for (size_t d : op.dependants)
      leave(d, ops_[d].item == op.item ? ""
               : ops_[d].what.type == OpType::Delete
                   ? "not deleted: deletes go after every other change, and --no-wait left some for the next apply"
               : ops_[d].what.type == OpType::Barrier ? ""
                   : "waits for `" + item_of(o).action->address + "` (--no-wait)");
  }

  // The one failure rule: a failed operation fails what depends on it (the rest of its resource's
  // chain, and what waited for it elsewhere), and nothing else. `why` is reported when not empty.
  void fail_op(size_t o, const std::string& why) {
    Op& op = ops_[o];
    if (over(op)) return;
    op.step = OpStep::Failed;
    if (op.item != kNone) {
      Item& item = items_[op.item];
      if (item.watched == o) cancel_timer(op.item);
      if (!why.empty()) report_failure(item, why);
    }
    for (size_t d : op.dependants)
      fail_op(d, op.item != kNone && ops_[d].item == op.item ? "" : blocked_reason(d, o));
  }

  // Why an operation cannot go: `need` failed.
  std::string blocked_reason(size_t o, size_t need) {
    if (ops_[o].what.type == OpType::Delete)
      return "not deleted: other changes of this apply failed (see above), and deletes are made only after all of "
             "them succeeded. Run apply --prune again once they do";
    if (ops_[o].what.type == OpType::Barrier) return "";
    const PlannedAction& a = *item_of(o).action;
    const PlannedAction& needed = *item_of(need).action;
    std::string role = kind_noun(needed.kind);
    for (const Dependency& d : type_of(a.kind).needs(a))
      if (d.address == needed.address) role = d.role;
    const bool call = ops_[o].what.type == OpType::Call;
    return (call ? "`" + call_of(o).call + "` not sent" : std::string("not created")) + ": its " + role + " `" +
           needed.name + "` " + (ops_[need].what.type == OpType::Create ? "was not created" : "is not as declared") +
           " (see above); the next apply " + (call ? "sends it" : "creates it");
  }

  void report_failure(Item& item, const std::string& why) {
    item.failed = true;
    result_.failures.push_back(item.action->address + ": " + why);
    const ResourceRecord* rec = state_.find(item.action->address);
    emit({EventKind::Failed, item.action->address, rec ? rec->id : "", rec ? rec->status : "",
          rec ? since_first_call(item) : Duration(0), why});
  }

  bool unfinished(const Item& item) const {
    return std::any_of(item.ops.begin(), item.ops.end(), [&](size_t o) { return !over(ops_[o]); });
  }

  void ready(Item& item, const ResourceRecord& rec) {
    if (!item.connected && wants_connection(options_.connectable, *item.action, rec, item.password_set))
      return start_connection_wait(item, rec);
    ++result_.ready;
    if (rec.status == "PAUSED") ++result_.paused;
    std::string endpoint = rec.endpoint_host.empty() ? "" : rec.endpoint_host;
    if (rec.endpoint_port) endpoint += ":" + std::to_string(*rec.endpoint_port);
    emit({EventKind::Ready, rec.address, rec.id, rec.status, since_first_call(item), endpoint});
  }

  // Gone: the state forgets it.
  void forget(size_t o) {
    const Item& item = item_of(o);
    const PlannedAction& a = *item.action;
    const std::string id = state_.find(a.address)->id;
    state_.remove(a.address);
    changed_.insert(a.address);
    ++result_.deleted;
    emit({EventKind::Deleted, a.address, id, "", since_first_call(item), ""});
    complete(o);
  }

  // After a job failed outright: what is unfinished fails with its reason. What was sent and not
  // recorded is what an interrupted run leaves: the next apply resolves it (creates by name).
  void fail_unfinished() {
    for (auto& item : items_)
      if (unfinished(item))
        report_failure(item, "not finished: " + worker_failure_ + "; the run stopped, and what it sent is recorded "
                             "as pending for the next apply to resolve");
  }

  // After a stop: lists what is unfinished. A stop that came when nothing was left changes nothing.
  void finish_interrupted() {
    for (const auto& item : items_)
      if (unfinished(item) || item.connecting) result_.pending.push_back(item.action->address);
    if (result_.pending.empty()) return;
    result_.interrupted = true;
    emit({EventKind::Interrupted, "", "", "", Duration(0),
          std::to_string(result_.pending.size()) + " resource(s) not finished"});
  }

  // A state that cannot be written stops the run like a signal: nothing new is started (above all
  // no call whose journal is not on disk); what is in flight is recorded in memory for the caller.
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
      log::warn(std::string("the state's journal could not be folded in (") + e.what() +
                "); it is replayed on every read until a later run folds it");
    }
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

  ApiClient& api_;
  StateStore& store_;
  Clock& clock_;
  EventSink& events_;
  const ApplyOptions& options_;
  const std::map<std::string, ProjectKey>& keys_;
  State& state_;

  std::vector<Item> items_;
  std::vector<Op> ops_;
  std::deque<size_t> ready_;    // operations whose needs are done, in the order they became so
  std::string worker_failure_;  // a job that failed outright: the run stops (see apply_outcomes)
  struct Timer {
    Clock::TimePoint at;
    size_t item;
    int generation;
    bool operator>(const Timer& other) const { return at > other.at; }
  };
  std::priority_queue<Timer, std::vector<Timer>, std::greater<>> timers_;
  int live_timers_ = 0;
  size_t sends_in_flight_ = 0;  // calls on the way (creates, updates, passwords, deletes), at most --parallelism
  int polls_in_flight_ = 0;     // status checks, at most kPollLane
  // Resources of one kind in one project, watched by one list when several are (see together()).
  std::unordered_map<std::string, std::vector<size_t>> watched_together_;
  std::unordered_map<std::string, Duration> quiet_for_;  // together() -> the pause of a quiet project
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
         a.action == Action::Update || a.action == Action::Delete || a.action == Action::Replace) &&
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
        log::warn("project " + project + ": GET /auth/info did not say which project the key in " + key.variable +
                  " belongs to");
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
