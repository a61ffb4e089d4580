// What a stale saved plan says about each resource: the field, its values then and now, the
// declared value when the manifests read otherwise, and a bounded list.
#include <catch2/catch.hpp>

#include "plan/stale_plan.h"

using namespace dbform;
using nlohmann::json;

namespace {

PlannedAction service(const std::string& name, Action action, const json& before, const json& after) {
  PlannedAction a;
  a.action = action;
  a.address = "p1/services/" + name;
  a.project_id = "p1";
  a.name = name;
  a.resource_id = before.is_null() ? "" : "id-" + name;
  a.status = before.is_null() ? "" : "READY";
  a.before = before;
  a.after = after;
  return a;
}

}  // namespace

TEST_CASE("stale plan: a value changed outside dbform, then and now, and what each plan does") {
  Plan saved, now;
  saved.actions.push_back(service("a", Action::NoOp, {{"cpu_millis", "1000"}}, {{"cpu_millis", "1000"}}));
  PlannedAction drifted = service("a", Action::Update, {{"cpu_millis", "1000"}}, {{"cpu_millis", "1000"}});
  drifted.changes.push_back({"cpu_millis", "2000", "1000", true});
  drifted.calls.push_back({"resize", json::object(), "", json::object()});
  now.actions.push_back(drifted);
  const PlanDifferences d = explain_differences(saved, now, {"p1/services/a"});
  REQUIRE(d.lines.size() == 1);
  CHECK(d.lines[0] == "p1/services/a: cpu_millis \"1000\" when the plan was made, \"2000\" now (changed outside dbform); "
                      "the saved plan leaves it unchanged, a plan now updates it in place");
  CHECK_FALSE(d.declared);
}

TEST_CASE("stale plan: a declared value that reads otherwise, a resource only one plan names, and a bounded list") {
  Plan saved, now;
  saved.actions.push_back(service("a", Action::Create, nullptr, {{"cpu_millis", "1000"}}));
  now.actions.push_back(service("a", Action::Create, nullptr, {{"cpu_millis", "4000"}}));
  PlannedAction taken = service("b", Action::Conflict, nullptr, {{"cpu_millis", "1000"}});
  taken.reason = "a service of this name exists";
  now.actions.push_back(taken);
  saved.actions.push_back(service("c", Action::Orphan, {{"cpu_millis", "1000"}}, nullptr));
  PlanDifferences d = explain_differences(saved, now, {"p1/services/a", "p1/services/b", "p1/services/c"});
  CHECK(d.declared);
  REQUIRE(d.lines.size() == 3);
  CHECK(d.lines[0] == "p1/services/a: declared cpu_millis \"1000\" when the plan was made, \"4000\" now");
  CHECK(d.lines[1] == "p1/services/b: not in the saved plan; a plan now cannot apply it (a conflict): a service of this "
                      "name exists");
  CHECK(d.lines[2] == "p1/services/c: the saved plan keeps it as an orphan; a plan now does not name it");

  std::vector<std::string> many;
  for (int i = 0; i < 25; ++i) {
    const std::string name = "s" + std::to_string(i);
    saved.actions.push_back(service(name, Action::Create, nullptr, {{"cpu_millis", "1000"}}));
    now.actions.push_back(service(name, Action::Create, nullptr, {{"cpu_millis", "2000"}}));
    many.push_back("p1/services/" + name);
  }
  d = explain_differences(saved, now, many);
  REQUIRE(d.lines.size() == kMaxExplained + 1);
  CHECK(d.lines.back() == "and 15 more (run the plan again to see them)");
}
