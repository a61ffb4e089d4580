#pragma once
// Small readers of HTTP responses used by ApiClient: reason phrases, a one-line summary of an
// error body for messages, and the Retry-After header.
#include <chrono>
#include <optional>
#include <string>

#include "util/clock.h"
#include "util/text.h"  // one_line_excerpt, redact

namespace dbform {

// "Unauthorized" for 401, "" for a status without a well-known phrase.
std::string status_reason(int status);

// What an error body says, for a message: the API's `message` (with " (code X)" when a `code` is
// given) from {"code","message","details"}; else a short excerpt of other JSON or of text, on one
// line; "" for an empty body.
std::string summarize_error_body(const std::string& body);

// Retry-After as a wait: delta-seconds ("120") or an HTTP-date ("Sun, 06 Nov 1994 08:49:37 GMT")
// measured from `now`. A date in the past is a zero wait; anything unparseable is nullopt.
std::optional<Duration> parse_retry_after(const std::string& value, std::chrono::system_clock::time_point now);

}  // namespace dbform
