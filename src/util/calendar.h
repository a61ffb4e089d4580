#pragma once
// Dates and UTC times a person writes in a file (a waiver's expiry), read without the C library's
// time_t or tm: years 1970 to 9999 are all valid, whatever the platform's time_t can hold.
#include <chrono>
#include <optional>
#include <string>

namespace dbform {

using SysSeconds = std::chrono::time_point<std::chrono::system_clock, std::chrono::seconds>;

// The moment a written expiry ends: `2027-01-31` (a whole day, UTC: it ends at the next midnight)
// or `2027-01-31T12:00:00Z` (that moment). nullopt for other text, a date that does not exist
// (2027-02-30), or a year outside 1970..9999.
std::optional<SysSeconds> parse_expiry(const std::string& text);

}  // namespace dbform
