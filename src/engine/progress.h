#pragma once
// What becomes of the operations of one apply run (engine/apply_run.h) and of the resources they
// act on: done (and READY once every operation of a resource is), left for the next apply, or
// failed, by the one failure rule: a failed operation fails what depends on it and nothing else.
#include <string>

#include "engine/run_context.h"

namespace dbform::scheduling {

class Progress {
 public:
  explicit Progress(RunContext& run) : run_(run) {}

  // Done: what waited for it may go; a resource whose every operation is done is READY.
  void complete(size_t o);
  // Not sent, and not failed: left for the next apply, with what depends on it. `why` is reported
  // when not empty.
  void leave(size_t o, const std::string& why);
  // The one failure rule: a failed operation fails what depends on it (the rest of its resource's
  // chain, and what waited for it elsewhere), and nothing else. `why` is reported when not empty.
  void fail(size_t o, const std::string& why);
  void report_failure(Item& item, const std::string& why);
  // Gone: the state forgets it.
  void forget(size_t o);
  // --no-wait: an answered call ends its resource's part of the run. The rest of its chain needs it
  // READY, so it is left for the next apply, with what waits for it (the deletes, a fork of it).
  void end_unconfirmed(size_t o);
  // As declared: reported READY, unless it is first waited for until it accepts connections.
  void ready(Item& item, const ResourceRecord& rec);
  // What events report: the time since this run's first call for the resource (0 without one).
  Duration since_first_call(const Item& item) const;

 private:
  // READY, and now to be waited for until it accepts connections: checked at once, then again
  // after each refusal until the service's wait timeout.
  void start_connection_wait(Item& item, const ResourceRecord& rec);

  RunContext& run_;
};

}  // namespace dbform::scheduling
