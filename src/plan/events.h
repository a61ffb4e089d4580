#pragma once
// The apply engine reports what happens as events; renderers in the CLI decide how they look
// (plain lines, a live terminal view, JSON lines). Plain data below the engine, so that the
// command line renders a run without seeing the engine that runs it.
#include <string>

#include "util/clock.h"

namespace dbform {

enum class EventKind {
  PreflightPassed,  // message: "project P: key NAME"
  CreateSent,       // a create call is about to be sent (its intent is recorded)
  Created,          // the create answered; resource_id set
  Adopted,          // found by name after an unknown outcome; resource_id set
  UpdateSent,       // an update call is about to be sent (recorded as pending); message: the call and body
  Updated,          // an update call answered with success; message: the call
  DeleteSent,       // a delete is about to be sent (recorded as pending)
  Deleted,          // gone, and forgotten by the state
  Imported,         // an existing resource recorded (`import_id`); resource_id set
  Forgotten,        // a record dropped (`removed:`); the resource stays in the API
  StatusChanged,    // status; elapsed (of this and Ready, Deleted, Failed): since this run's first call for it
  Ready,            // status READY (services) or created (VPCs); message: endpoint
  Failed,           // message says why
  Left,             // not sent: left for the next apply (--no-wait); message says why
  StopRequested,    // the first signal arrived: nothing new starts; what was sent is finished and saved
  Interrupted,      // a stop was requested; message says what is pending
};

const char* event_kind_name(EventKind k);  // "create_sent", "status_changed", ...

struct Event {
  EventKind kind;
  std::string address;
  std::string resource_id;
  std::string status;
  Duration elapsed{0};
  std::string message;
};

class EventSink {
 public:
  virtual ~EventSink() = default;
  // Called from the engine's main thread only, in order.
  virtual void on_event(const Event& event) = 0;
};

}  // namespace dbform
