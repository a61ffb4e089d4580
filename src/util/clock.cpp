#include "util/clock.h"

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <string_view>
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

UtcTime utc_time(std::chrono::system_clock::time_point t) { return std::chrono::floor<std::chrono::seconds>(t); }

std::string format_utc(UtcTime t) {
  using namespace std::chrono;
  const sys_days day = floor<days>(t);
  const year_month_day ymd(day);
  const hh_mm_ss<seconds> time(t - day);
  char buf[40];
  std::snprintf(buf, sizeof buf, "%04d-%02u-%02uT%02lld:%02lld:%02lldZ", static_cast<int>(ymd.year()),
                static_cast<unsigned>(ymd.month()), static_cast<unsigned>(ymd.day()),
                static_cast<long long>(time.hours().count()), static_cast<long long>(time.minutes().count()),
                static_cast<long long>(time.seconds().count()));
  return buf;
}

std::string format_utc(std::chrono::system_clock::time_point t) { return format_utc(utc_time(t)); }

std::optional<UtcTime> parse_utc(const std::string& text) {
  using namespace std::chrono;
  // YYYY-MM-DDTHH:MM:SSZ exactly: the digits read by position, no locale, no sign, no spaces.
  static constexpr std::string_view kShape = "dddd-dd-ddTdd:dd:ddZ";
  if (text.size() != kShape.size()) return std::nullopt;
  for (size_t i = 0; i < kShape.size(); ++i)
    if (kShape[i] == 'd' ? !std::isdigit(static_cast<unsigned char>(text[i])) : text[i] != kShape[i])
      return std::nullopt;
  auto number = [&](size_t at, size_t n) {
    int v = 0;
    for (size_t i = at; i < at + n; ++i) v = v * 10 + (text[i] - '0');
    return v;
  };
  const year_month_day ymd{year(number(0, 4)), month(static_cast<unsigned>(number(5, 2))),
                           day(static_cast<unsigned>(number(8, 2)))};
  const int h = number(11, 2), m = number(14, 2), s = number(17, 2);
  if (!ymd.ok() || ymd.year() < year(1970) || h > 23 || m > 59 || s > 59) return std::nullopt;
  return sys_days(ymd) + hours(h) + minutes(m) + seconds(s);
}

std::optional<UtcTime> parse_expiry(const std::string& text) {
  if (text.size() != 10) return parse_utc(text);
  auto midnight = parse_utc(text + "T00:00:00Z");
  if (!midnight) return std::nullopt;
  return *midnight + std::chrono::days{1};
}

}  // namespace dbform
