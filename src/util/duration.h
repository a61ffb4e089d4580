#pragma once
#include <optional>
#include <string>

#include "util/clock.h"

namespace dbform {

// Parses Go-style durations as Terraform and kubectl accept them: "30m", "1h30m", "45s",
// "500ms", "2h". A bare number is seconds. Returns nullopt for anything else.
std::optional<Duration> parse_duration(const std::string& text);

// Short human form for progress lines: "850ms", "12s", "3m05s", "1h02m".
std::string format_duration(Duration d);

}  // namespace dbform
