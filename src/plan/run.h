#pragma once
// What a run of a plan is told and what it gives back: the engine's options (how many calls at
// once, how it waits) and its result. Plain data, below the engine, so that the operations of
// ops/ take them from the command line, and the command line renders them, without either seeing
// the engine that runs the plan (engine/apply.h).
#include <atomic>
#include <set>
#include <string>
#include <vector>

#include "plan/poll_schedule.h"
#include "util/duration.h"

namespace dbform {

class ConnectionCheck;  // sql/connection_check.h: the run only holds it, the engine calls it
class SqlConnector;     // sql/session.h: likewise

// The most API calls at once that --parallelism may ask for (docs/commands.md): each is a thread.
constexpr int kMaxParallelism = 64;

// Which services a run waits for until they accept connections (--wait-connectable).
struct ConnectableOptions {
  const ConnectionCheck* check = nullptr;  // null: never wait for connections
  std::set<std::string> projects;         // the projects whose services are waited for
};

struct ApplyOptions {
  int parallelism = 10;  // 1 to kMaxParallelism
  Duration wait_timeout = std::chrono::minutes(30);  // per service, from its create (or the run's start)
  bool wait = true;                                  // false: record the create and move on
  PollSchedule polls;
  Duration settle_window = std::chrono::seconds(30);  // lookups after an unknown create outcome (--settle-window)
  // The plan was made by this run from a refresh under the lock it still holds, and nothing waited
  // since (no prompt): the refresh's listing was the name guard (a declared name it found is a
  // conflict), so it is not listed again.
  bool names_checked = false;
  // After READY, wait until these services accept connections (--wait-connectable).
  ConnectableOptions connectable;
  // The connections that make the roles, schemas, extensions and grants inside the services'
  // databases; null: none can be made (their step fails, saying so, and the services are kept).
  const SqlConnector* sql = nullptr;
  // Each statement of that step ends past this (the server's statement_timeout, and a cancel).
  Duration statement_timeout = std::chrono::seconds(30);
  // At the end, everything journaled is folded into one document (StateStore::compact); a run of
  // one small change (rotate-password) leaves it appended, for the next apply to fold.
  bool fold_journal = true;
  // Set (e.g. by a signal): start nothing new, end every wait at once, record what is in flight.
  const std::atomic<bool>* stop = nullptr;
};

struct ApplyResult {
  int created = 0;
  int adopted = 0;
  int updated = 0;  // resources changed in place (however many calls each took)
  int deleted = 0;
  int imported = 0;   // records made from existing resources (`import_id`)
  int forgotten = 0;  // records dropped (`removed:`), the resources left alone
  int ready = 0;   // done as declared: READY (active), recorded, or PAUSED where declared
  int paused = 0;  // of those, PAUSED
  std::vector<std::string> failures;  // "ADDRESS: why", one per failed resource
  std::vector<std::string> pending;   // addresses left unfinished by a stop or a state that cannot be saved
  std::vector<std::string> left;      // "ADDRESS: why", what --no-wait left for the next apply
  bool interrupted = false;
  // Set when the state could not be written: the run stopped creating at once, and `state` (the
  // caller's) holds everything learned, which the caller must keep elsewhere (a recovery file).
  std::string save_error;
  bool unsaved_changes = false;  // the last write failed too: `state` holds more than the store
};

struct PreflightPass {
  std::string project;
  std::string message;  // "project P: key `NAME` from VARIABLE"
};

}  // namespace dbform
