#include "util/calendar.h"

#include <cctype>

namespace dbform {

namespace {

// The number `text` holds at [at, at + n) when it is n digits.
std::optional<int> digits(const std::string& text, size_t at, size_t n) {
  if (at + n > text.size()) return std::nullopt;
  int v = 0;
  for (size_t i = at; i < at + n; ++i) {
    if (!std::isdigit(static_cast<unsigned char>(text[i]))) return std::nullopt;
    v = v * 10 + (text[i] - '0');
  }
  return v;
}

}  // namespace

std::optional<SysSeconds> parse_expiry(const std::string& text) {
  using namespace std::chrono;
  if (text.size() != 10 && text.size() != 20) return std::nullopt;
  auto y = digits(text, 0, 4), m = digits(text, 5, 2), d = digits(text, 8, 2);
  if (!y || !m || !d || text[4] != '-' || text[7] != '-') return std::nullopt;
  if (*y < 1970 || *y > 9999) return std::nullopt;
  const year_month_day date{year{*y}, month{static_cast<unsigned>(*m)}, day{static_cast<unsigned>(*d)}};
  if (!date.ok()) return std::nullopt;
  const SysSeconds midnight = time_point_cast<seconds>(sys_days{date});
  if (text.size() == 10) return midnight + days{1};
  auto hh = digits(text, 11, 2), mm = digits(text, 14, 2), ss = digits(text, 17, 2);
  if (text[10] != 'T' || text[13] != ':' || text[16] != ':' || text[19] != 'Z' || !hh || !mm || !ss) return std::nullopt;
  if (*hh > 23 || *mm > 59 || *ss > 59) return std::nullopt;
  return midnight + hours{*hh} + minutes{*mm} + seconds{*ss};
}

}  // namespace dbform
