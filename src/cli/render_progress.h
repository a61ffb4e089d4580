#pragma once
// The live view of an apply on a terminal: what finished scrolls up as ordinary lines (the same
// lines as LineEventRenderer's), and below them one line per resource still in progress, with its
// status and the time since its create, redrawn in place (ANSI cursor-up and erase) on every event
// and once a second, so a long wait shows it is alive.
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <ostream>
#include <string>
#include <thread>
#include <vector>

#include "cli/context.h"
#include "plan/events.h"
#include "plan/model.h"
#include "plan/run.h"

namespace dbform::cli {

class LiveProgressRenderer : public EventSink {
 public:
  LiveProgressRenderer(std::ostream& out, Terminal term);
  ~LiveProgressRenderer() override;
  LiveProgressRenderer(const LiveProgressRenderer&) = delete;
  LiveProgressRenderer& operator=(const LiveProgressRenderer&) = delete;

  // Services the plan only waits for are in progress from the start (no create announces them).
  void track_waits(const Plan& plan);
  void on_event(const Event& e) override;
  // Stops redrawing and erases the live lines; what finished stays on the screen. Call before
  // writing anything else to the same stream.
  void finish();

 private:
  using Steady = std::chrono::steady_clock;
  struct InProgress {
    std::string address;
    std::string status;
    Steady::time_point since;
  };

  void tick();
  void redraw_locked(const std::string& finished_line);
  std::string live_line(const InProgress& p, size_t address_width, Steady::time_point now) const;
  InProgress* find(const std::string& address);

  std::ostream& out_;
  const Terminal term_;
  std::mutex mu_;
  std::condition_variable wake_;
  bool done_ = false;
  bool stopping_ = false;  // a stop was requested: no live line is added any more
  std::vector<InProgress> in_progress_;  // in the order they started
  size_t drawn_ = 0;                     // live lines now on the screen, above the cursor
  std::thread ticker_;
};

}  // namespace dbform::cli
