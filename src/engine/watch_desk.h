#pragma once
// The watch of one apply run (engine/apply_run.h): the status checks its Watcher says are due
// sent (by id, by list, connection attempts), what they saw recorded, and what a status means for
// the operation watched (its step's row says what READY means for it). The Watcher says when; the
// desk sends, records and decides.
#include "engine/jobs.h"
#include "engine/run_context.h"
#include "engine/work_queue.h"

namespace dbform::scheduling {

class WatchDesk {
 public:
  explicit WatchDesk(RunContext& run) : run_(run) {}

  // Sends the checks the watcher says are due.
  void send_checks(WorkQueue<Outcome>& workers);
  // A status check's answer (a GET's, a list's, a connection attempt's).
  void handle(Outcome& out);  // takes what it keeps out of `out`

  // Operation `o` is watched from `at`: its resource's checks answer to it, and its wait timeout
  // counts from then.
  void start_watch(size_t o, Clock::TimePoint at);
  // Checked at once.
  void watch_now(size_t i);
  // Checked again after its pause, unless its wait timed out.
  void schedule_poll(size_t i, const ResourceRecord& rec);
  // What the status of the watched resource means for the operation it is watched for.
  void after_status(size_t i, ResourceRecord& rec);

 private:
  bool watching(const Item& item) const;
  void handle_connection(size_t i, const Outcome& out);
  void handle_poll(size_t i, Outcome& out);
  void handle_poll_list(Outcome& out);
  void poll_failed(size_t i, const Outcome& out);
  // What a status check saw of the resource.
  void seen(size_t i, Shown&& shown);  // its raw answer moved into the record

  RunContext& run_;
};

}  // namespace dbform::scheduling
