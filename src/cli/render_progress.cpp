#include "cli/render_progress.h"

#include <algorithm>

#include "cli/render_events.h"
#include "util/duration.h"

namespace dbform::cli {

namespace {

constexpr auto kTick = std::chrono::seconds(1);
constexpr const char* kEraseLine = "\033[2K";
constexpr const char* kEraseBelow = "\033[J";
constexpr size_t kStatusWidth = 11;  // CONFIGURING, the longest usual status

std::string cursor_up(size_t lines) { return "\r\033[" + std::to_string(lines) + "A"; }

}  // namespace

LiveProgressRenderer::LiveProgressRenderer(std::ostream& out, Terminal term) : out_(out), term_(term) {
  ticker_ = std::thread([this] { tick(); });
}

LiveProgressRenderer::~LiveProgressRenderer() { finish(); }

void LiveProgressRenderer::finish() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (done_) return;
    done_ = true;
    in_progress_.clear();
    redraw_locked("");
  }
  wake_.notify_all();
  ticker_.join();
}

void LiveProgressRenderer::tick() {
  std::unique_lock<std::mutex> lock(mu_);
  while (!done_) {
    wake_.wait_for(lock, kTick, [this] { return done_; });
    if (!done_ && !in_progress_.empty()) redraw_locked("");
  }
}

void LiveProgressRenderer::track_waits(const Plan& plan) {
  std::lock_guard<std::mutex> lock(mu_);
  const auto now = Steady::now();
  for (const auto& a : plan.actions)
    if (a.action == Action::Wait && a.kind == ResourceKind::Service)
      in_progress_.push_back({a.address, a.status.empty() ? "waiting" : a.status, now});
  redraw_locked("");
}

LiveProgressRenderer::InProgress* LiveProgressRenderer::find(const std::string& address) {
  for (auto& p : in_progress_)
    if (p.address == address) return &p;
  return nullptr;
}

void LiveProgressRenderer::on_event(const Event& e) {
  std::lock_guard<std::mutex> lock(mu_);
  if (done_) return;
  InProgress* p = find(e.address);
  bool own_line = true;  // false: the live lines alone show it
  switch (e.kind) {
    case EventKind::CreateSent:
      if (!p && !stopping_) in_progress_.push_back({e.address, "creating", Steady::now()});
      own_line = false;
      break;
    case EventKind::DeleteSent:
      if (!p && !stopping_) in_progress_.push_back({e.address, "deleting", Steady::now()});
      own_line = false;
      break;
    case EventKind::UpdateSent:
      if (p) p->status = e.message.substr(0, e.message.find(' '));
      else if (!stopping_) in_progress_.push_back({e.address, e.message.substr(0, e.message.find(' ')), Steady::now()});
      break;
    case EventKind::Updated:
      if (p) p->status = e.status;
      own_line = false;
      break;
    case EventKind::StatusChanged:  // its message: what it waits for besides the status (--wait-connectable)
      if (p) p->status = e.message.empty() ? e.status : e.status + ", " + e.message;
      own_line = false;
      break;
    case EventKind::Created:
    case EventKind::Adopted:
      if (p) p->status = e.status.empty() ? "created" : e.status;
      break;
    case EventKind::Ready:
    case EventKind::Deleted:
    case EventKind::Failed:
    case EventKind::Left:
      in_progress_.erase(std::remove_if(in_progress_.begin(), in_progress_.end(),
                                        [&](const InProgress& x) { return x.address == e.address; }),
                         in_progress_.end());
      break;
    case EventKind::StopRequested:  // the live lines stop: nothing new starts, and what is in flight says when it ends
      in_progress_.clear();
      stopping_ = true;
      break;
    case EventKind::PreflightPassed:
    case EventKind::Interrupted:
    case EventKind::Imported:
    case EventKind::Forgotten:
      break;
  }
  redraw_locked(own_line ? event_line(e, term_).value_or("") : "");
}

std::string LiveProgressRenderer::live_line(const InProgress& p, size_t address_width, Steady::time_point now) const {
  // Whole seconds: a live counter in milliseconds only flickers.
  const auto seconds = std::chrono::floor<std::chrono::seconds>(now - p.since);
  const std::string when = seconds.count() == 0 ? "0s" : format_duration(seconds);
  std::string text = "  ~ " + p.address + std::string(address_width - p.address.size(), ' ') + "  " + p.status +
                     std::string(p.status.size() < kStatusWidth ? kStatusWidth - p.status.size() : 0, ' ') + "  " + when;
  const size_t width = static_cast<size_t>(std::max(term_.width - 1, 10));  // never wrap: wrapping breaks cursor-up
  if (text.size() > width) text.resize(width);
  return paint(term_, "33", text);
}

// Moves up over the live lines, prints what finished (it scrolls up and stays), then the live
// lines again. The terminal shows at most a screenful less two of them; the rest are counted.
void LiveProgressRenderer::redraw_locked(const std::string& finished_line) {
  if (drawn_ == 0 && finished_line.empty() && in_progress_.empty()) return;
  std::string frame;
  if (drawn_ > 0) frame += cursor_up(drawn_);
  frame += kEraseBelow;
  if (!finished_line.empty()) frame += finished_line + "\n";
  const size_t room = static_cast<size_t>(std::max(term_.height - 2, 2));
  const size_t shown = in_progress_.size() <= room ? in_progress_.size() : room - 1;
  const auto now = Steady::now();
  size_t address_width = 0;  // addresses padded so statuses and times form columns
  for (size_t i = 0; i < shown; ++i) address_width = std::max(address_width, in_progress_[i].address.size());
  for (size_t i = 0; i < shown; ++i) frame += kEraseLine + live_line(in_progress_[i], address_width, now) + "\n";
  drawn_ = shown;
  if (shown < in_progress_.size()) {
    frame += std::string(kEraseLine) + "  ... and " + std::to_string(in_progress_.size() - shown) + " more in progress\n";
    ++drawn_;
  }
  out_ << frame << std::flush;
}

}  // namespace dbform::cli
