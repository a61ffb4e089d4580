// The loop of one apply (engine/apply_run.h): one ready queue, one dispatch that journals every
// call before it is sent, results saved before they are reported, one failure rule.
#include "engine/apply_run.h"

#include <algorithm>

#include "engine/apply_guards.h"
#include "util/log.h"
#include "util/text.h"

namespace dbform::scheduling {

namespace {

// The resources one list answers for: one kind in one project (in one parent, for the kinds that
// live in another).
std::string together(const PlannedAction& a) { return a.project_id + "/" + kind_name(a.kind) + "/" + a.parent; }

}  // namespace

bool deliver(EventSink& sink, const Event& event) {
  try {
    sink.on_event(event);
    return true;
  } catch (const std::exception& e) {
    log::debug(std::string("the output failed, recording goes on: ") + e.what());
    return false;
  }
}

ApplyResult ApplyRun::execute(const Plan& plan, const std::vector<std::string>& settled) {
  Guards guards(*this);  // what they record is saved with the first write, before any call
  guards.move_renamed(plan);
  guards.record_imports_and_forgets(plan);
  changed_.insert(settled.begin(), settled.end());
  build(plan);
  guards.record_protection(plan);
  guards.guard_names(plan);
  guards.guard_deletes(plan);
  for (size_t o = 0; o < ops_.size(); ++o)
    if (ops_[o].step == OpStep::Blocked && ops_[o].unmet == 0) make_ready(o);
  for (auto& item : items_)  // nothing to call (a change of protection): done at once
    if (item.ops.empty()) ready(item, *state_.find(item.action->address));
  WorkQueue<Outcome> workers(options_.parallelism + kPollLane);
  // A run that folds the journal at its end does not fold it on the way (a crash leaves a longer
  // journal, which the next read replays): see StateStore::kRunJournalFloor.
  const size_t journal_floor = store_.journal_floor();
  if (options_.fold_journal) store_.set_journal_floor(std::max(journal_floor, StateStore::kRunJournalFloor));
  struct FloorBack {
    StateStore& store;
    size_t floor;
    ~FloorBack() { store.set_journal_floor(floor); }
  } floor_back{store_, journal_floor};
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
    send_checks(workers);
    if (workers.in_flight() == 0 && watcher_.idle() && ready_.empty()) break;
    wait_for_progress(workers);
  }
  // A stop: let what is in flight finish and record it, start nothing new.
  while (workers.in_flight() > 0) apply_outcomes(workers, workers.take(kForever));
  dispatch(workers, /*may_start=*/false);  // what needs neither a call nor a watch is done
  save();
  result_.unsaved_changes = !changed_.empty();
  if (result_.save_error.empty() && options_.fold_journal) compact();
  if (!worker_failure_.empty()) fail_unfinished();
  else if (stopped || stopping()) finish_interrupted();
  else
    for (size_t o = 0; o < ops_.size(); ++o)
      if (!over(ops_[o])) fail_op(o, "internal error: it was never scheduled");
  flush_events();
  return std::move(result_);
}

void ApplyRun::build(const Plan& plan) {
  OperationGraph graph = operations_of(plan, state_, options_.wait);
  std::unordered_map<size_t, size_t> item_of;  // action -> item
  items_.reserve(graph.actions.size());
  for (size_t i : graph.actions) {
    const PlannedAction& a = plan.actions[i];
    if (!keys_.count(a.project_id))  // before anything is sent, not as a crash half-way
      throw Error("no API key was resolved for project `" + a.project_id + "`");
    item_of[i] = items_.size();
    watcher_.add(together(a), a.kind, type_of(a.kind).watched);
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

void ApplyRun::wait_for_progress(WorkQueue<Outcome>& workers) {
  const std::optional<Clock::TimePoint> next_check = watcher_.next_due();
  const auto now = clock_.now();
  const bool can_poll = next_check.has_value();
  const auto until = can_poll ? std::min(*next_check, now + kStopCheck) : now + kStopCheck;
  if (workers.in_flight() == 0) return clock_.sleep_until(until);
  // No poll can be made: only a result can change anything, so block on it (waiting with a zero
  // timeout here would spin). Calls never wait on time: they go as soon as a worker is free.
  // A stop is looked for every kStopCheck even then, so that it is said at once.
  if (!can_poll) return apply_outcomes(workers, workers.take(options_.stop ? std::optional(kStopCheck) : kForever));
  auto outcomes = workers.take(std::optional<Clock::TimePoint::duration>(until - now));
  if (outcomes.empty()) clock_.sleep_until(until);
  apply_outcomes(workers, std::move(outcomes));
}

void ApplyRun::apply_outcomes(WorkQueue<Outcome>& workers, std::vector<Outcome> outcomes) {
  if (std::exception_ptr failure = workers.take_failure(); failure && worker_failure_.empty()) {
    try {
      std::rethrow_exception(failure);
    } catch (const std::exception& e) {
      worker_failure_ = describe_exception(e);
    } catch (...) {
      worker_failure_ = "a worker failed";
    }
  }
  for (const auto& outcome : outcomes)  // a status check's answer leaves the watcher's lane as it is handled
    if (outcome.to == AnswerTo::Step) --sends_in_flight_;
  for (auto& outcome : outcomes) handle(outcome);
}

void ApplyRun::flush_events() {
  for (const auto& event : unreported_) deliver(events_, event);
  unreported_.clear();
}

bool ApplyRun::stopping() const {
  return (options_.stop && options_.stop->load()) || !result_.save_error.empty() || !worker_failure_.empty();
}

void ApplyRun::make_ready(size_t o) {
  ops_[o].step = OpStep::Ready;
  ready_.push_back(o);
}

void ApplyRun::dispatch(WorkQueue<Outcome>& workers, bool may_start) {
  std::vector<size_t> batch;
  std::deque<size_t> later;  // ready, but no worker is free for their calls
  while (!ready_.empty()) {
    const size_t o = ready_.front();
    ready_.pop_front();
    if (ops_[o].step != OpStep::Ready) continue;  // failed since it was queued
    const bool room = may_start && sends_in_flight_ + batch.size() < static_cast<size_t>(options_.parallelism);
    // Whether a call's change shows already is read from the record's last answer (parsed): asked
    // once the call could go, not for every waiting call at every round (an apply of 30,000 calls
    // spent minutes asking it again).
    if (may_start && !room && ops_[o].what.type == OpType::Call) {
      later.push_back(o);
      continue;
    }
    if (!steps_.needs_call(o) && (may_start || ops_[o].what.type != OpType::Settle)) steps_.without_call(o);
    else if (room) batch.push_back(o);
    else later.push_back(o);
  }
  ready_ = std::move(later);
  if (batch.empty()) return;
  const auto unsaved_before = changed_;
  std::vector<size_t> sending;
  for (size_t o : batch)
    if (steps_.journal(o)) sending.push_back(o);
  save();
  if (!result_.save_error.empty()) {
    for (size_t o : sending) steps_.unjournal(o);
    changed_ = unsaved_before;  // the memory holds nothing the store lacks but what was unsaved before
    return flush_events();
  }
  for (size_t o : sending) {
    ops_[o].step = OpStep::Sent;
    ++sends_in_flight_;
    if (!item_of(o).first_call) item_of(o).first_call = clock_.now();
    steps_.send(workers, o);
  }
  flush_events();
}

void ApplyRun::handle(Outcome& out) {
  switch (out.to) {
    case AnswerTo::Step: return steps_.handle(out.item, out);
    case AnswerTo::Poll: return handle_poll(out.item, out);
    case AnswerTo::PollList: return handle_poll_list(out);
    case AnswerTo::Connect: return handle_connection(out.item, out);
  }
}

void ApplyRun::complete(size_t o) {
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

void ApplyRun::leave(size_t o, const std::string& why) {
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

void ApplyRun::fail_op(size_t o, const std::string& why) {
  Op& op = ops_[o];
  if (over(op)) return;
  op.step = OpStep::Failed;
  if (op.item != kNone) {
    if (op.what.type == OpType::Create) watcher_.create_failed(op.item);
    Item& item = items_[op.item];
    if (item.watched == o) watcher_.cancel(op.item);
    if (!why.empty()) report_failure(item, why);
  }
  for (size_t d : op.dependants)
    fail_op(d, op.item != kNone && ops_[d].item == op.item ? "" : steps_.blocked_reason(d, o));
}

void ApplyRun::report_failure(Item& item, const std::string& why) {
  item.failed = true;
  result_.failures.push_back(item.action->address + ": " + why);
  const ResourceRecord* rec = state_.find(item.action->address);
  emit({EventKind::Failed, item.action->address, rec ? rec->id : "", rec ? rec->status : "",
        rec ? since_first_call(item) : Duration(0), why});
}

bool ApplyRun::unfinished(const Item& item) const {
  return std::any_of(item.ops.begin(), item.ops.end(), [&](size_t o) { return !over(ops_[o]); });
}

void ApplyRun::ready(Item& item, const ResourceRecord& rec) {
  if (!item.connected && wants_connection(options_.connectable, *item.action, rec, item.password_set))
    return start_connection_wait(item, rec);
  ++result_.ready;
  if (rec.status == "PAUSED") ++result_.paused;
  std::string endpoint = rec.endpoint_host.empty() ? "" : rec.endpoint_host;
  if (rec.endpoint_port) endpoint += ":" + std::to_string(*rec.endpoint_port);
  emit({EventKind::Ready, rec.address, rec.id, rec.status, since_first_call(item), endpoint});
}

void ApplyRun::forget(size_t o) {
  const Item& item = item_of(o);
  const PlannedAction& a = *item.action;
  const std::string id = state_.find(a.address)->id;
  state_.remove(a.address);
  changed_.insert(a.address);
  ++result_.deleted;
  emit({EventKind::Deleted, a.address, id, "", since_first_call(item), ""});
  complete(o);
}

void ApplyRun::fail_unfinished() {
  for (auto& item : items_)
    if (unfinished(item))
      report_failure(item, "not finished: " + worker_failure_ + "; the run stopped, and what it sent is recorded "
                           "as pending for the next apply to resolve");
}

void ApplyRun::finish_interrupted() {
  for (const auto& item : items_)
    if (unfinished(item) || watcher_.connecting(static_cast<size_t>(&item - items_.data())))
      result_.pending.push_back(item.action->address);
  if (result_.pending.empty()) return;
  result_.interrupted = true;
  emit({EventKind::Interrupted, "", "", "", Duration(0),
        std::to_string(result_.pending.size()) + " resource(s) not finished"});
}

void ApplyRun::save() {
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

void ApplyRun::compact() {
  try {
    store_.compact(state_);
  } catch (const Error& e) {  // every change is saved already: the journal keeps it
    log::warn(std::string("the state's journal could not be folded in (") + e.what() +
              "); it is replayed on every read until a later run folds it");
  }
}

}  // namespace dbform::scheduling
