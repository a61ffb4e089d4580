#include "api/http_text.h"

#include <catch2/catch.hpp>

using std::chrono::seconds;

namespace {
// 2026-01-01T00:00:00Z
const auto kNow = std::chrono::system_clock::time_point(seconds(1767225600));
}  // namespace

TEST_CASE("api: Retry-After parsing") {
  CHECK(dbform::parse_retry_after("120", kNow) == seconds(120));
  CHECK(dbform::parse_retry_after(" 0 ", kNow) == seconds(0));
  CHECK(dbform::parse_retry_after("Thu, 01 Jan 2026 00:01:30 GMT", kNow) == seconds(90));
  // Found by fuzz_durations: a year before 1970 (or past 2262) overflowed the clock.
  CHECK(dbform::parse_retry_after("Wed, 21 Oct 0026 07:28:00 GMT", kNow) == seconds(0));
  CHECK(dbform::parse_retry_after("Fri, 31 Dec 9999 23:59:59 GMT", kNow) >= std::chrono::hours(24));
  CHECK(dbform::parse_retry_after("Wed, 31 Dec 2025 23:00:00 GMT", kNow) == seconds(0));  // already past
  CHECK_FALSE(dbform::parse_retry_after("", kNow));
  CHECK_FALSE(dbform::parse_retry_after("-5", kNow));
  CHECK_FALSE(dbform::parse_retry_after("1.5", kNow));
  CHECK_FALSE(dbform::parse_retry_after("tomorrow", kNow));
  CHECK(dbform::parse_retry_after("99999999999999999999", kNow) > seconds(3600));  // no overflow
}

TEST_CASE("api: error bodies are summarised on one short line") {
  CHECK(dbform::summarize_error_body(R"({"code":"NOT_FOUND","message":"no such service","details":{}})") ==
        "no such service (code NOT_FOUND)");
  CHECK(dbform::summarize_error_body(R"({"message":"plain"})") == "plain");
  CHECK(dbform::summarize_error_body(R"({"error":"gateway said no"})") == "gateway said no");
  CHECK(dbform::summarize_error_body(R"([1,2])") == "[1,2]");
  CHECK(dbform::summarize_error_body("") == "");
  CHECK(dbform::summarize_error_body("  \n ") == "");
  CHECK(dbform::summarize_error_body("<html>\n<body>Bad\tGateway</body>\n</html>") == "<html> <body>Bad Gateway</body> </html>");
  std::string long_text(1000, 'a');
  CHECK(dbform::summarize_error_body(long_text) == std::string(200, 'a') + "...");
}

TEST_CASE("api: reason phrases") {
  CHECK(dbform::status_reason(429) == "Too Many Requests");
  CHECK(dbform::status_reason(299).empty());
}
