#pragma once
// Time is a seam: production code asks a Clock, tests pass a FakeClock whose sleeps advance
// virtual time instantly, so waiting logic is tested fast and deterministically.
#include <atomic>
#include <chrono>
#include <optional>
#include <mutex>

namespace dbform {

using Duration = std::chrono::milliseconds;

class Clock {
 public:
  using TimePoint = std::chrono::steady_clock::time_point;
  virtual ~Clock() = default;
  virtual TimePoint now() const = 0;
  virtual void sleep_until(TimePoint t) = 0;
  void sleep_for(Duration d) { sleep_until(now() + d); }
  // Sleeps until `t` or until `*stop` is set (by a signal handler, which cannot wake a condition
  // variable, so the flag is looked at every few milliseconds). Returns false when it was stopped.
  bool sleep_until_unless(TimePoint t, const std::atomic<bool>* stop);
  bool sleep_for_unless(Duration d, const std::atomic<bool>* stop) { return sleep_until_unless(now() + d, stop); }
  // Wall-clock time for records (state timestamps), as seconds since the epoch.
  virtual std::chrono::system_clock::time_point wall_now() const = 0;
};

class SystemClock : public Clock {
 public:
  TimePoint now() const override { return std::chrono::steady_clock::now(); }
  void sleep_until(TimePoint t) override;
  std::chrono::system_clock::time_point wall_now() const override {
    return std::chrono::system_clock::now();
  }
};

// Sleeping advances virtual time at once. Thread-safe: several workers may sleep on it.
class FakeClock : public Clock {
 public:
  TimePoint now() const override;
  void sleep_until(TimePoint t) override;
  std::chrono::system_clock::time_point wall_now() const override;
  void advance(Duration d);

 private:
  mutable std::mutex mu_;
  TimePoint now_{std::chrono::hours(1)};
};

// "2026-11-22T10:00:00Z"
std::string format_utc(std::chrono::system_clock::time_point t);
// The moment format_utc wrote; nullopt for other text, or a date that does not exist.
std::optional<std::chrono::system_clock::time_point> parse_utc(const std::string& text);

}  // namespace dbform
