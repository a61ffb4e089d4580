#pragma once
#include <iostream>

#include "cli/context.h"
#include "engine/events.h"

namespace dbform::cli {

// One line per event on stdout: create sent, created, each status change with the time since the
// create, ready with the endpoint, failures. Works the same on a terminal and in a log.
class LineEventRenderer : public EventSink {
 public:
  LineEventRenderer(std::ostream& out, Terminal term) : out_(out), term_(term) {}
  void on_event(const Event& e) override;

 private:
  std::ostream& out_;
  Terminal term_;
};

}  // namespace dbform::cli
