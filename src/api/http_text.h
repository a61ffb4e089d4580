#pragma once
// Small readers of HTTP responses used by ApiClient: reason phrases, a one-line summary of an
// error body for messages, and the Retry-After header.
#include <chrono>
#include <optional>
#include <string>

#include "util/clock.h"

namespace dbform {

// "Unauthorized" for 401, "" for a status without a well-known phrase.
std::string status_reason(int status);

// What an error body says, for a message: the API's `message` (with " (code X)" when a `code` is
// given) from {"code","message","details"}; else a short excerpt of other JSON or of text, on one
// line; "" for an empty body.
std::string summarize_error_body(const std::string& body);

// A single line of at most `max_chars` characters (whitespace runs collapsed, control characters
// dropped), with "..." when cut.
std::string one_line_excerpt(const std::string& text, size_t max_chars = 200);

// Retry-After as a wait: delta-seconds ("120") or an HTTP-date ("Sun, 06 Nov 1994 08:49:37 GMT")
// measured from `now`. A date in the past is a zero wait; anything unparseable is nullopt.
std::optional<Duration> parse_retry_after(const std::string& value, std::chrono::system_clock::time_point now);

// `text` with every occurrence of `secret` replaced by "***" (secrets shorter than 4 characters
// are left alone: replacing them would mangle ordinary words).
std::string redact(std::string text, const std::string& secret);

}  // namespace dbform
