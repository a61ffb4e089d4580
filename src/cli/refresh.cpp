#include "cli/refresh.h"

#include "cli/context.h"
#include "engine/apply.h"
#include "engine/namesakes.h"
#include "plan/differ.h"
#include "util/env.h"
#include "util/text.h"

namespace dbform::cli {

Plan plan_refreshed(const Manifest& manifest, const State& state, bool refresh, int parallelism) {
  Plan plan = make_plan(manifest, state);
  if (!refresh || plan.summary.create == 0) return plan;
  auto keys = resolve_keys(manifest, projects_with_work(plan), process_env());
  auto api = make_api();
  NamesakeScan scan = scan_namesakes(*api->client, plan, keys, parallelism);
  if (!scan.errors.empty()) {
    std::vector<std::string> problems;
    for (const auto& [project, why] : scan.errors) problems.push_back("project " + project + ": " + why);
    throw Error("the refresh could not list what exists, nothing was changed:\n  " + join(problems, "\n  ") +
                "\nFix the problem and run it again. Without a refresh (plan without --refresh, apply --no-refresh) "
                "apply still checks every name before it creates anything");
  }
  return make_plan(manifest, state, &scan.found);
}

}  // namespace dbform::cli
