#pragma once
// The plan as a versioned JSON document. `plan --format json` prints it and `plan --out FILE`
// saves it, so what a pipeline reads, what a reviewer approved and what `apply FILE` executes are
// one and the same thing. The document holds the whole Plan (every field of every action), the
// manifests it was made from and the state it was made against; it never holds a secret (the plan
// has none: settings are what the manifests declare).
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "manifest/model.h"
#include "plan/model.h"
#include "state/model.h"
#include "util/diagnostics.h"

namespace dbform {

inline constexpr const char* kPlanFormat = "dbform-plan";
// Grows when a reader of an older version could misread a newer document.
inline constexpr int kPlanFormatVersion = 1;

struct PlanDocument {
  Plan plan;  // an empty state_lineage means no state existed when the plan was made
  std::vector<std::string> manifest_paths;  // the -f arguments, as given
  std::vector<std::string> manifest_files;  // every file read, in the order read
  std::vector<Diagnostic> diagnostics;      // the manifests' warnings
  std::string created_at;                   // UTC, ISO 8601
};

// Ordered as documented (format and version first), for people reading it as much as for programs.
nlohmann::ordered_json plan_document_json(const PlanDocument& doc);
// The actions and the counts alone, as they appear in the document.
nlohmann::ordered_json plan_actions_json(const Plan& plan);
nlohmann::ordered_json plan_summary_json(const PlanSummary& summary);
// The services whose objects were planned from their records: [{service, why, last_read}], the
// plan document's and the refresh report's.
nlohmann::ordered_json catalogs_unread_json(const std::vector<CatalogsUnread>& unread);
// The document's `policies`: the rule files and their digest, the rules, violations and waivers.
nlohmann::ordered_json policies_json(const PolicyCheck& check);

// Parses a document written by plan_document_json. Throws UsageError naming `source` and the bad
// field for anything that is not a plan document of a version this build reads.
// The plan file at `path` (bounded in size, as a state is), parsed. Throws UsageError when there is
// none, or it is not one.
PlanDocument read_plan_file(const std::string& path);

PlanDocument parse_plan_document(const std::string& text, const std::string& source);

// Why a saved plan may no longer be applied, one reason each; empty when it still holds.
// `manifest` is read again from the saved paths, `stored` is the state as it is now (null: there
// is none) and `replanned` the plan they give now (refreshed again when the saved plan was; null:
// not made yet). Comparing with the replanned actions catches what the digest and the serial
// cannot see: a ${VAR} that has another value, a resource changed outside dbform since.
std::vector<std::string> saved_plan_problems(const PlanDocument& saved, const Manifest& manifest,
                                             const State* stored, const Plan* replanned);

}  // namespace dbform
