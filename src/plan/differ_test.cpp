#include <catch2/catch.hpp>

#include "plan/differ.h"

using namespace dbform;

namespace {

Manifest one_project() {
  DesiredProject p;
  p.id = "p1";
  p.vpcs.push_back({"main", "10.0.0.0/16", "us-east-1", {}});
  DesiredService orders;
  orders.name = "orders";
  orders.cpu_millis = "1000";
  orders.memory_gbs = "4";
  orders.addons = {"time-series"};
  p.services.push_back(orders);
  DesiredService events;
  events.name = "events";
  p.services.push_back(events);
  Manifest m;
  m.projects.push_back(p);
  m.digest = "d1";
  return m;
}

ResourceRecord recorded(const Manifest& m, ResourceKind kind, const std::string& name, const std::string& status) {
  ResourceRecord r;
  r.project_id = "p1";
  r.kind = kind;
  r.name = name;
  r.address = resource_address("p1", kind, name);
  for (const auto& p : m.projects) {
    for (const auto& s : p.services)
      if (kind == ResourceKind::Service && s.name == name) r.settings = settings_json(s);
    for (const auto& v : p.vpcs)
      if (kind == ResourceKind::Vpc && v.name == name) r.settings = settings_json(v);
  }
  r.id = "id-" + name;
  r.status = status;
  return r;
}

const PlannedAction& action_for(const Plan& plan, const std::string& address) {
  for (const auto& a : plan.actions)
    if (a.address == address) return a;
  throw std::runtime_error("no action for " + address);
}

}  // namespace

TEST_CASE("plan: everything declared and nothing recorded is created, VPCs first") {
  Manifest m = one_project();
  Plan plan = make_plan(m, new_state());
  REQUIRE(plan.actions.size() == 3);
  CHECK(plan.actions[0].address == "p1/vpcs/main");
  CHECK(plan.actions[1].address == "p1/services/orders");
  for (const auto& a : plan.actions) CHECK(a.action == Action::Create);
  CHECK(plan.actions[1].after == nlohmann::json({{"addons", {"time-series"}}, {"cpu_millis", "1000"}, {"memory_gbs", "4"}}));
  CHECK(plan.summary.create == 3);
  CHECK(plan.summary.has_changes());
  CHECK(plan.manifest_digest == "d1");
}

TEST_CASE("plan: recorded and READY is a no-op, recorded and not READY is a wait") {
  Manifest m = one_project();
  State s = new_state();
  s.upsert(recorded(m, ResourceKind::Vpc, "main", ""));
  s.upsert(recorded(m, ResourceKind::Service, "orders", "READY"));
  s.upsert(recorded(m, ResourceKind::Service, "events", "CONFIGURING"));
  Plan plan = make_plan(m, s);
  CHECK(action_for(plan, "p1/vpcs/main").action == Action::NoOp);
  CHECK(action_for(plan, "p1/services/orders").action == Action::NoOp);
  const auto& wait = action_for(plan, "p1/services/events");
  CHECK(wait.action == Action::Wait);
  CHECK(wait.resource_id == "id-events");
  CHECK(plan.summary.wait == 1);
  CHECK(plan.summary.noop == 2);
  CHECK(plan.summary.create == 0);
}

TEST_CASE("plan: a recorded intent without an id is adopted, never blindly created") {
  Manifest m = one_project();
  State s = new_state();
  ResourceRecord intent = recorded(m, ResourceKind::Service, "orders", "");
  intent.id.clear();
  intent.create_pending = true;
  s.upsert(intent);
  Plan plan = make_plan(m, s);
  CHECK(action_for(plan, "p1/services/orders").action == Action::Adopt);
  CHECK(plan.summary.adopt == 1);
}

TEST_CASE("plan: changed settings are a conflict naming each field, old and new") {
  Manifest m = one_project();
  State s = new_state();
  ResourceRecord r = recorded(m, ResourceKind::Service, "orders", "READY");
  r.settings["cpu_millis"] = "500";
  r.settings.erase("memory_gbs");
  s.upsert(r);
  Plan plan = make_plan(m, s);
  const auto& c = action_for(plan, "p1/services/orders");
  REQUIRE(c.action == Action::Conflict);
  REQUIRE(c.changes.size() == 2);
  CHECK(c.changes[0].field == "cpu_millis");
  CHECK(c.changes[0].before == "500");
  CHECK(c.changes[0].after == "1000");
  CHECK(c.changes[1].field == "memory_gbs");
  CHECK(c.changes[1].before.is_null());
  CHECK(c.changes[1].after == "4");
  CHECK_THAT(c.reason, Catch::Contains("dbform state rm p1/services/orders"));
  CHECK(plan.summary.conflict == 1);
}

TEST_CASE("plan: recorded but no longer declared is an orphan, reported and kept") {
  Manifest m = one_project();
  State s = new_state();
  ResourceRecord gone = recorded(m, ResourceKind::Service, "legacy", "READY");
  s.upsert(gone);
  Plan plan = make_plan(m, s);
  const auto& o = action_for(plan, "p1/services/legacy");
  CHECK(o.action == Action::Orphan);
  CHECK(o.resource_id == "id-legacy");
  CHECK_THAT(o.reason, Catch::Contains("never deletes"));
  CHECK(plan.actions.back().address == "p1/services/legacy");
  CHECK(plan.summary.orphan == 1);
  CHECK(plan.summary.create == 3);
}

TEST_CASE("plan: the differ is linear enough for 10,000 services") {
  Manifest m;
  State s = new_state();
  for (int p = 0; p < 100; ++p) {
    DesiredProject proj;
    proj.id = "p" + std::to_string(p);
    for (int i = 0; i < 100; ++i) {
      DesiredService svc;
      svc.name = "svc" + std::to_string(i);
      svc.cpu_millis = "1000";
      proj.services.push_back(svc);
      ResourceRecord r;
      r.project_id = proj.id;
      r.name = svc.name;
      r.address = resource_address(proj.id, ResourceKind::Service, svc.name);
      r.settings = settings_json(svc);
      r.id = "x";
      r.status = "READY";
      s.resources.push_back(r);
    }
    m.projects.push_back(proj);
  }
  Plan plan = make_plan(m, s);
  CHECK(plan.summary.noop == 10000);
  CHECK_FALSE(plan.summary.has_changes());
}
