#include "engine/apply.h"

#include <algorithm>
#include <set>

#include "engine/apply_run.h"
#include "util/log.h"
#include "util/parallel.h"
#include "util/text.h"

namespace dbform {

using scheduling::ApplyRun;
using scheduling::deliver;

std::vector<std::string> projects_with_work(const Plan& plan) {
  std::vector<std::string> out;
  std::set<std::string> seen;
  for (const auto& a : plan.actions)
    if ((a.action == Action::Create || a.action == Action::Adopt || a.action == Action::Wait ||
         a.action == Action::Update || a.action == Action::Delete || a.action == Action::Replace) &&
        seen.insert(a.project_id).second)
      out.push_back(a.project_id);
  return out;
}

ApplyEngine::ApplyEngine(ApiClient& api, StateStore& store, Clock& clock, EventSink& events, ApplyOptions options)
    : api_(api), store_(store), clock_(clock), events_(events), options_(options) {
  options_.parallelism = std::max(1, options_.parallelism);
}

std::vector<PreflightPass> preflight_keys(ApiClient& api, const std::vector<std::string>& projects,
                                          const std::map<std::string, ProjectKey>& keys, int parallelism) {
  struct Checked {
    std::optional<PreflightPass> pass;
    std::string problem;
  };
  // One call per project, `parallelism` at a time; the passes and problems in the projects' order.
  auto checked = in_parallel<Checked>(projects.size(), static_cast<size_t>(std::max(1, parallelism)), [&](size_t i) {
    const std::string& project = projects[i];
    auto found = keys.find(project);
    if (found == keys.end()) return Checked{std::nullopt, "project `" + project + "`: no API key was resolved"};
    const ProjectKey& key = found->second;
    try {
      AuthInfo info = api.auth_info(key.key);
      if (info.project_id.empty()) {
        log::warn("project " + project + ": GET /auth/info did not say which project the key in " + key.variable +
                  " belongs to");
      } else if (info.project_id != project) {
        return Checked{std::nullopt, "project `" + project + "`: the API key in " + key.variable + " (key name `" +
                                         info.key_name + "`) belongs to project `" + info.project_id + "`" +
                                         (info.project_name.empty() ? "" : " (" + info.project_name + ")") +
                                         ", not `" + project + "`. Set " + key.variable + " to a key of project `" +
                                         project + "`"};
      }
      return Checked{PreflightPass{project, "project " + project + ": key `" + info.key_name + "` from " + key.variable},
                     ""};
    } catch (const ApiError& e) {
      const bool rejected = e.status() == 401 || e.status() == 403;
      return Checked{std::nullopt, "project `" + project + "`: the API key in " + key.variable +
                                       (rejected ? " was not accepted: " : " could not be checked: ") + e.what()};
    } catch (const Error& e) {
      return Checked{std::nullopt,
                     "project `" + project + "`: the API key in " + key.variable + " could not be checked: " + e.what()};
    }
  });
  std::vector<std::string> problems;
  std::vector<PreflightPass> passed;
  for (auto& c : checked) {
    if (c.pass) passed.push_back(std::move(*c.pass));
    else problems.push_back(std::move(c.problem));
  }
  if (!problems.empty())
    throw Error("preflight failed, nothing was changed:\n  " + join(problems, "\n  "));
  return passed;
}

void ApplyEngine::preflight(const Plan& plan, const std::map<std::string, ProjectKey>& keys) {
  report_preflight(preflight_keys(api_, projects_with_work(plan), keys, options_.parallelism));
}

void ApplyEngine::report_preflight(const std::vector<PreflightPass>& passed) {
  for (const auto& p : passed) deliver(events_, {EventKind::PreflightPassed, p.project, "", "", Duration(0), p.message});
}

ApplyResult ApplyEngine::apply(const Plan& plan, const std::map<std::string, ProjectKey>& keys, State& state,
                               const std::vector<std::string>& settled) {
  ApplyRun run(api_, store_, clock_, events_, options_, keys, state);
  return run.execute(plan, settled);
}

}  // namespace dbform
