#include "cli/refresh.h"

#include "engine/namesakes.h"
#include "plan/differ.h"
#include "util/env.h"
#include "util/text.h"

namespace dbform::cli {

RefreshedPlan plan_refreshed(const Manifest& manifest, const State& state, bool refresh, ApiClient& api,
                             int parallelism) {
  RefreshedPlan out{make_plan(manifest, state), std::nullopt};
  if (!refresh || out.plan.summary.create == 0) return out;
  auto keys = resolve_keys(manifest, projects_with_work(out.plan), process_env());
  out.preflight = preflight_keys(api, out.plan, keys);
  NamesakeScan scan = scan_namesakes(api, out.plan, keys, parallelism);
  if (!scan.errors.empty()) {
    std::vector<std::string> problems;
    for (const auto& [project, why] : scan.errors) problems.push_back("project " + project + ": " + why);
    throw Error("the refresh could not list what exists, nothing was changed:\n  " + join(problems, "\n  ") +
                "\nFix the problem and run it again. Without a refresh (plan without --refresh, apply --no-refresh) "
                "apply still checks every name before it creates anything");
  }
  out.plan = make_plan(manifest, state, &scan.found);
  return out;
}

}  // namespace dbform::cli
