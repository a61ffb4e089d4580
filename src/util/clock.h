#pragma once
// Time is a seam: production code asks a Clock, tests pass a FakeClock whose sleeps advance
// virtual time instantly, so waiting logic is tested fast and deterministically.
#include <atomic>
#include <chrono>
#include <optional>
#include <string>
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

// A UTC time to the second, as dbform reads and writes them (state, plan files, manifests):
// system_clock's own time_point counts nanoseconds and ends at 2262-04-11T23:47:16Z, so a time
// read from a file is never one; this holds every time from 1970 to 9999. Compare it with the
// clock's time through utc_time(now).
using UtcTime = std::chrono::sys_seconds;
inline constexpr const char* kUtcTimeExpected =
    "a UTC time from 1970 to 9999 like 2026-01-04T00:00:00Z";

// The clock's time, to the second (earlier).
UtcTime utc_time(std::chrono::system_clock::time_point t);
// "2026-11-22T10:00:00Z"
std::string format_utc(UtcTime t);
std::string format_utc(std::chrono::system_clock::time_point t);
// The moment format_utc wrote, 1970-01-01T00:00:00Z to 9999-12-31T23:59:59Z; nullopt for other
// text, a date that does not exist (2026-02-30) or one outside those years.
std::optional<UtcTime> parse_utc(const std::string& text);
// The moment a written expiry ends: a date `2027-01-31` (a whole day, UTC: it ends at the next
// midnight) or a UTC time as parse_utc reads it (that moment). nullopt for other text, a date that
// does not exist (2027-02-30), or a year outside 1970..9999.
std::optional<UtcTime> parse_expiry(const std::string& text);

}  // namespace dbform
