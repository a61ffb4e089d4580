// The loop of one apply (engine/apply_run.h): one ready queue, one dispatch that journals every
// call before it is sent, results saved before they are reported, one failure rule.
#include "engine/apply_run.h"

#include <algorithm>
#include <deque>

#include "engine/apply_guards.h"
#include "util/text.h"

namespace dbform::scheduling {

namespace {

// The resources one list answers for: one kind in one project (in one parent, for the kinds that
// live in another).
std::string together(const PlannedAction& a) { return a.project_id + "/" + kind_name(a.kind) + "/" + a.parent; }

}  // namespace

ApplyResult ApplyRun::execute(const Plan& plan, const std::vector<std::string>& settled) {
  Guards guards(run_);  // what they record is saved with the first write, before any call
  guards.move_renamed(plan);
  guards.record_imports_and_forgets(plan);
  ledger_.changed(settled);
  build(plan);
  guards.record_protection(plan);
  guards.guard_names(plan, stopping());
  guards.guard_deletes(plan);
  graph_.queue_unblocked();
  for (auto& item : graph_.items)  // nothing to call (a change of protection): done at once
    if (item.ops.empty()) progress_.ready(item, ledger_.record(item.action->address));
  WorkQueue<Outcome> workers(options_.parallelism + kPollLane);
  ledger_.hold_journal(options_.fold_journal);
  struct JournalBack {
    Ledger& ledger;
    ~JournalBack() { ledger.release_journal(); }
  } journal_back{ledger_};
  bool stopped = false;
  for (;;) {
    if (stopping()) {
      stopped = true;
      if (options_.stop && options_.stop->load()) {  // said at once: what is in flight may take a while
        ledger_.emit({EventKind::StopRequested, "", "", "", Duration(0), "finishing what was sent and saving the state"});
        ledger_.flush_events();
      }
      break;
    }
    // The results of the last round are saved with the next batch's journal, in one write, before
    // any of them is reported or any of those calls is sent.
    dispatch(workers);
    ledger_.save();
    ledger_.flush_events();
    desk_.send_checks(workers);
    if (workers.in_flight() == 0 && watcher_.idle() && !graph_.has_ready()) break;
    wait_for_progress(workers);
  }
  // A stop: let what is in flight finish and record it, start nothing new.
  while (workers.in_flight() > 0) apply_outcomes(workers, workers.take(kForever));
  dispatch(workers, /*may_start=*/false);  // what needs neither a call nor a watch is done
  ledger_.save();
  if (!ledger_.save_failed() && options_.fold_journal) ledger_.compact();
  if (!worker_failure_.empty()) fail_unfinished();
  else if (stopped || stopping()) finish_interrupted();
  else
    for (size_t o = 0; o < graph_.ops.size(); ++o)
      if (!over(graph_.ops[o])) progress_.fail(o, "internal error: it was never scheduled");
  ledger_.flush_events();
  return ledger_.finish();
}

void ApplyRun::build(const Plan& plan) {
  OperationGraph graph = operations_of(plan, ledger_.state(), options_.wait);
  for (size_t i : graph.actions) {
    const PlannedAction& a = plan.actions[i];
    if (!keys_.count(a.project_id))  // before anything is sent, not as a crash half-way
      throw Error("no API key was resolved for project `" + a.project_id + "`");
    watcher_.add(together(a), a.kind, type_of(a.kind).watched);
  }
  graph_.build(plan, std::move(graph));
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
  for (auto& outcome : outcomes) {  // a step's answer to its row, a status check's to the watch
    if (outcome.to == AnswerTo::Step) steps_.of(outcome.item).handle(outcome.item, outcome);
    else desk_.handle(outcome);
  }
}

bool ApplyRun::stopping() const {
  return (options_.stop && options_.stop->load()) || ledger_.save_failed() || !worker_failure_.empty();
}

void ApplyRun::dispatch(WorkQueue<Outcome>& workers, bool may_start) {
  std::vector<size_t> batch;
  std::deque<size_t> later;  // ready, but no worker is free for their calls
  while (const std::optional<size_t> next = graph_.next_ready()) {
    const size_t o = *next;
    if (graph_.ops[o].step != OpStep::Ready) continue;  // failed since it was queued
    Step& step = steps_.of(o);
    const bool room = may_start && sends_in_flight_ + batch.size() < static_cast<size_t>(options_.parallelism);
    if (may_start && !room && step.traits.waits_for_room) {
      later.push_back(o);
      continue;
    }
    if (!step.needs_call(o) && (may_start || step.traits.runs_while_stopping)) step.without_call(o);
    else if (room) batch.push_back(o);
    else later.push_back(o);
  }
  graph_.requeue(std::move(later));
  if (batch.empty()) return;
  const auto unsaved_before = ledger_.unsaved();
  std::vector<size_t> sending;
  for (size_t o : batch)
    if (steps_.of(o).journal(o)) sending.push_back(o);
  if (!ledger_.save()) {
    for (size_t o : sending) steps_.of(o).unjournal(o);
    ledger_.forget_round(unsaved_before);  // the memory holds nothing the store lacks but what was unsaved before
    return ledger_.flush_events();
  }
  for (size_t o : sending) {
    graph_.ops[o].step = OpStep::Sent;
    ++sends_in_flight_;
    if (Item& item = graph_.item_of(o); !item.first_call) item.first_call = clock_.now();
    steps_.of(o).send(workers, o);
  }
  ledger_.flush_events();
}

void ApplyRun::fail_unfinished() {
  for (auto& item : graph_.items)
    if (graph_.unfinished(item))
      progress_.report_failure(item, "not finished: " + worker_failure_ + "; the run stopped, and what it sent is "
                                     "recorded as pending for the next apply to resolve");
}

void ApplyRun::finish_interrupted() {
  ApplyResult& result = ledger_.result();
  for (const auto& item : graph_.items)
    if (graph_.unfinished(item) || watcher_.connecting(graph_.slot_of(item))) result.pending.push_back(item.action->address);
  if (result.pending.empty()) return;
  result.interrupted = true;
  ledger_.emit({EventKind::Interrupted, "", "", "", Duration(0),
                std::to_string(result.pending.size()) + " resource(s) not finished"});
}

}  // namespace dbform::scheduling
