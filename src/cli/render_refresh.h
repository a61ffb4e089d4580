#pragma once
// The report of `plan --refresh-only` and `apply --refresh-only`: what changed outside dbform, as
// text, as a JSON document (format "dbform-refresh") and as a pull-request comment. Never a
// password (the report holds settings, statuses and endpoints only).
#include <string>

#include <nlohmann/json.hpp>

#include "cli/context.h"
#include "ops/refresh_only.h"

namespace dbform::cli {

inline constexpr const char* kRefreshFormat = "dbform-refresh";
inline constexpr int kRefreshFormatVersion = 1;
// The first line of a drift comment, so that a pipeline finds and updates its earlier one.
inline constexpr const char* kRefreshMarker = "<!-- dbform-refresh -->";

// Every changed resource with its fields, status and endpoints (before -> after), then a summary
// line.
std::string render_refresh_text(const RefreshReport& report, const Terminal& term);
// "Refresh: 1 changed outside dbform, 1 deleted outside dbform, 3 unchanged."
std::string refresh_summary_line(const RefreshReport& report);
nlohmann::ordered_json refresh_document_json(const RefreshReport& report, const std::string& created_at);
std::string render_refresh_markdown(const RefreshReport& report, const std::string& created_at);

}  // namespace dbform::cli
