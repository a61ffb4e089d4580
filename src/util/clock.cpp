#include "util/clock.h"

#include <algorithm>
#include <ctime>
#include <iomanip>
#include <sstream>
#include <string>
#include <thread>

namespace dbform {

bool Clock::sleep_until_unless(TimePoint t, const std::atomic<bool>* stop) {
  constexpr Duration kSlice{20};
  for (;;) {
    if (stop && stop->load()) return false;
    const TimePoint current = now();
    if (current >= t) return true;
    sleep_until(std::min(t, current + kSlice));
  }
}

void SystemClock::sleep_until(TimePoint t) { std::this_thread::sleep_until(t); }

Clock::TimePoint FakeClock::now() const {
  std::lock_guard<std::mutex> lock(mu_);
  return now_;
}

void FakeClock::sleep_until(TimePoint t) {
  std::lock_guard<std::mutex> lock(mu_);
  if (t > now_) now_ = t;
}

void FakeClock::advance(Duration d) {
  std::lock_guard<std::mutex> lock(mu_);
  now_ += d;
}

std::chrono::system_clock::time_point FakeClock::wall_now() const {
  // A fixed epoch (2026-01-01T00:00:00Z) plus virtual time: deterministic timestamps in tests.
  std::lock_guard<std::mutex> lock(mu_);
  return std::chrono::system_clock::time_point(std::chrono::seconds(1767225600)) +
         std::chrono::duration_cast<std::chrono::system_clock::duration>(now_.time_since_epoch());
}

std::string format_utc(std::chrono::system_clock::time_point t) {
  std::time_t tt = std::chrono::system_clock::to_time_t(t);
  std::tm tm{};
  gmtime_r(&tt, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

std::optional<std::chrono::system_clock::time_point> parse_utc(const std::string& text) {
  std::tm tm{};
  std::istringstream in(text);
  in >> std::get_time(&tm, "%Y-%m-%dT%H:%M:%SZ");
  if (in.fail() || in.peek() != EOF || text.size() != 20) return std::nullopt;
  const time_t t = timegm(&tm);
  const auto at = std::chrono::system_clock::from_time_t(t);
  // Written again: a date that does not exist (2026-02-30) is not the same text.
  if (t == -1 || format_utc(at) != text) return std::nullopt;
  return at;
}

}  // namespace dbform
