#pragma once
// Renderers of the apply engine's events. Which one runs: JSON lines with `apply --json`, the live
// view (render_progress.h) on a terminal, one line per event otherwise.
#include <iostream>
#include <optional>
#include <string>

#include "cli/context.h"
#include "plan/events.h"
#include "plan/model.h"
#include "plan/run.h"

namespace dbform::cli {

// The line an event prints as, or nullopt for an event that prints nothing by itself (a change to
// READY: the Ready event that follows says it, with the endpoint). Shared by the line and the live
// renderers so both say the same thing.
std::optional<std::string> event_line(const Event& e, const Terminal& term);

// One line per event on stdout: create sent, created, each status change with the time since the
// create, ready with the endpoint, failures. For logs and pipes.
class LineEventRenderer : public EventSink {
 public:
  LineEventRenderer(std::ostream& out, Terminal term) : out_(out), term_(term) {}
  void on_event(const Event& e) override;

 private:
  std::ostream& out_;
  Terminal term_;
};

// `apply --json`: one JSON object per line and nothing else, flushed at once so a pipeline can
// follow the run. Every object has "type" and "time"; the types are "plan", the engine's event
// kinds (event_kind_name: "create_sent", "status_changed", "ready", "failed", ...), "summary" and
// "error". No object ever holds a password or a key.
class JsonLinesEventRenderer : public EventSink {
 public:
  explicit JsonLinesEventRenderer(std::ostream& out) : out_(out) {}
  void plan(const Plan& plan, const std::string& source);  // source: "manifests" or the plan file
  void on_event(const Event& e) override;
  void summary(const ApplyResult& result, int exit_code);
  void error(const std::string& message);

 private:
  void emit(nlohmann::ordered_json j);
  std::ostream& out_;
};

}  // namespace dbform::cli
