#pragma once
#include <optional>
#include <string>

#include "util/clock.h"

namespace dbform {

// The longest duration a flag may give: deadlines are steady-clock time points in nanoseconds,
// which a few hundred years would overflow.
constexpr Duration kMaxDuration = std::chrono::hours(24 * 366 * 10);

// Parses Go-style durations as Terraform and kubectl accept them: "30m", "1h30m", "45s",
// "500ms", "2h". A bare number is seconds. Returns nullopt for anything else. A longer duration
// than kMaxDuration comes back as kMaxDuration + 1ms (never overflowing): callers refuse it.
std::optional<Duration> parse_duration(const std::string& text);

// Short human form for progress lines: "850ms", "12s", "3m05s", "1h02m".
std::string format_duration(Duration d);

// How long ago something was, for a person reading a plan: "45s", "12m", "3h 12m", "2d 4h" (the two
// largest units; a negative age, from a clock behind the one that wrote it, is "0s").
std::string format_age(long long seconds);
// "5m ago", or, for a moment more than a minute ahead of now, "in the future by 5m (a clock ahead
// of this one, or a hand edit)": how old a stamp written on another machine is.
std::string format_ago(long long seconds);

}  // namespace dbform
