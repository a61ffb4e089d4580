#include "util/duration.h"

#include <algorithm>
#include <cctype>
#include <cstdio>

namespace dbform {

std::optional<Duration> parse_duration(const std::string& text) {
  if (text.empty()) return std::nullopt;
  bool all_digits = true;
  for (char c : text) all_digits = all_digits && std::isdigit(static_cast<unsigned char>(c));
  if (all_digits) {
    if (text.size() > 9) return std::nullopt;
    return std::min<Duration>(std::chrono::seconds(std::stoll(text)), kMaxDuration + Duration(1));
  }
  Duration total{0};
  size_t i = 0;
  while (i < text.size()) {
    size_t start = i;
    while (i < text.size() && std::isdigit(static_cast<unsigned char>(text[i]))) ++i;
    if (i == start || i - start > 9) return std::nullopt;
    long long n = std::stoll(text.substr(start, i - start));
    size_t unit_start = i;
    while (i < text.size() && std::isalpha(static_cast<unsigned char>(text[i]))) ++i;
    std::string unit = text.substr(unit_start, i - unit_start);
    if (unit == "ms") total += Duration(n);
    else if (unit == "s") total += std::chrono::seconds(n);
    else if (unit == "m") total += std::chrono::minutes(n);
    else if (unit == "h") total += std::chrono::hours(n);
    else return std::nullopt;
    if (total > kMaxDuration) total = kMaxDuration + Duration(1);  // each term is at most 10^9 h: no overflow
  }
  return total;
}

std::string format_duration(Duration d) {
  long long ms = d.count();
  char buf[32];
  if (ms < 1000) {
    std::snprintf(buf, sizeof buf, "%lldms", ms);
  } else if (ms < 60'000) {
    std::snprintf(buf, sizeof buf, "%llds", ms / 1000);
  } else if (ms < 3'600'000) {
    std::snprintf(buf, sizeof buf, "%lldm%02llds", ms / 60'000, (ms / 1000) % 60);
  } else {
    std::snprintf(buf, sizeof buf, "%lldh%02lldm", ms / 3'600'000, (ms / 60'000) % 60);
  }
  return buf;
}

std::string format_age(long long seconds) {
  if (seconds < 60) return std::to_string(std::max(0LL, seconds)) + "s";
  const long long minutes = seconds / 60, hours = minutes / 60, days = hours / 24;
  if (hours == 0) return std::to_string(minutes) + "m";
  if (days == 0) return std::to_string(hours) + "h" + (minutes % 60 ? " " + std::to_string(minutes % 60) + "m" : "");
  return std::to_string(days) + "d" + (hours % 24 ? " " + std::to_string(hours % 24) + "h" : "");
}

std::string format_ago(long long seconds) {
  if (seconds < -60) return "in the future by " + format_age(-seconds) + " (a clock ahead of this one, or a hand edit)";
  return format_age(seconds) + " ago";
}

}  // namespace dbform
