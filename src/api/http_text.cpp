#include "api/http_text.h"

#include <cctype>
#include <ctime>

#include <nlohmann/json.hpp>

#include "api/models.h"
#include "util/json_limits.h"
#include "util/text.h"

namespace dbform {

std::string status_reason(int status) {
  switch (status) {
    case 400: return "Bad Request";
    case 401: return "Unauthorized";
    case 402: return "Payment Required";
    case 403: return "Forbidden";
    case 404: return "Not Found";
    case 405: return "Method Not Allowed";
    case 408: return "Request Timeout";
    case 409: return "Conflict";
    case 410: return "Gone";
    case 413: return "Content Too Large";
    case 415: return "Unsupported Media Type";
    case 422: return "Unprocessable Content";
    case 429: return "Too Many Requests";
    case 500: return "Internal Server Error";
    case 501: return "Not Implemented";
    case 502: return "Bad Gateway";
    case 503: return "Service Unavailable";
    case 504: return "Gateway Timeout";
    default: return "";
  }
}

std::string summarize_error_body(const std::string& body) {
  std::string problem;
  auto parsed = parse_json_within(body, JsonLimits{body.size(), kMaxAnswerDepth}, problem);
  if (parsed.is_discarded()) return one_line_excerpt(body);
  if (parsed.is_object()) {
    // {"code","message","details"} is the documented shape; {"error": "..."} is common elsewhere
    // (proxies, gateways), and worth showing as a message too.
    for (const char* key : {"message", "error"}) {
      auto it = parsed.find(key);
      if (it == parsed.end() || !it->is_string()) continue;
      std::string summary = one_line_excerpt(it->get<std::string>());
      auto code = parsed.find("code");
      if (code != parsed.end() && code->is_string()) summary += " (code " + code->get<std::string>() + ")";
      return summary;
    }
  }
  return one_line_excerpt(dump_json(parsed));
}

std::optional<Duration> parse_retry_after(const std::string& value, std::chrono::system_clock::time_point now) {
  std::string text = one_line_excerpt(value, 100);
  if (text.empty()) return std::nullopt;
  bool all_digits = true;
  for (unsigned char c : text) all_digits = all_digits && std::isdigit(c);
  if (all_digits) {
    if (text.size() > 9) return std::chrono::hours(24 * 365);  // absurd; the caller caps it
    return std::chrono::seconds(std::stol(text));
  }
  std::tm tm{};
  const char* end = strptime(text.c_str(), "%a, %d %b %Y %H:%M:%S GMT", &tm);
  if (!end || *end != '\0') return std::nullopt;
  // A date before 1970 is past; one after 2200 is absurd (and past 2262 would overflow the clock).
  if (tm.tm_year < 70) return Duration(0);
  if (tm.tm_year > 2200 - 1900) return std::chrono::hours(24 * 365);
  auto when = std::chrono::system_clock::from_time_t(timegm(&tm));
  if (when <= now) return Duration(0);
  return std::chrono::duration_cast<Duration>(when - now);
}

}  // namespace dbform
