#pragma once
#include <string>

#include "plan/plan_file.h"

namespace dbform::cli {

// GitHub refuses comments over 65,536 characters; this leaves room for a pipeline's own words.
inline constexpr size_t kMarkdownLimit = 60000;
// The first line of every plan comment, so a pipeline can find its earlier comment and update it.
inline constexpr const char* kMarkdownMarker = "<!-- dbform-plan -->";

// A plan for a pull-request comment: a heading that says at a glance whether there is anything to
// do (and whether conflicts block it), the counts, conflicts and orphans called out, a table per
// project, the full text plan in a collapsible block, and the manifests and state it was made
// from. Never longer than `limit` characters: what does not fit is left out, and a note at the end
// says what. No secrets (the plan holds none).
std::string render_plan_markdown(const PlanDocument& doc, size_t limit = kMarkdownLimit);

}  // namespace dbform::cli
