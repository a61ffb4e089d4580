#include <catch2/catch.hpp>

#include <functional>

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

TEST_CASE("plan: changed sizes, tag and replicas are an update with the published calls, in order") {
  Manifest m = one_project();
  DesiredService& orders = m.projects[0].services[0];
  orders.cpu_millis = "2000";
  orders.environment_tag = "PROD";
  orders.replica_count = 2;
  State s = new_state();
  s.upsert(recorded(one_project(), ResourceKind::Service, "orders", "READY"));
  Plan plan = make_plan(m, s);
  const auto& u = action_for(plan, "p1/services/orders");
  REQUIRE(u.action == Action::Update);
  REQUIRE(u.changes.size() == 3);
  CHECK(u.changes[0].field == "cpu_millis");
  CHECK(u.changes[0].before == "1000");
  CHECK(u.changes[0].after == "2000");
  CHECK_FALSE(u.changes[0].drift);
  CHECK(u.changes[1].field == "environment_tag");
  CHECK(u.changes[1].before.is_null());
  REQUIRE(u.calls.size() == 3);
  CHECK(u.calls[0].call == "resize");
  CHECK(u.calls[0].body == nlohmann::json({{"cpu_millis", "2000"}, {"memory_gbs", "4"}}));  // both, always
  CHECK(u.calls[1].call == "setEnvironment");
  CHECK(u.calls[1].body == nlohmann::json({{"environment", "PROD"}}));
  CHECK(u.calls[2].call == "setHA");
  CHECK(u.calls[2].body == nlohmann::json({{"replica_count", 2}}));
  CHECK(plan.summary.update == 1);
  CHECK(plan.summary.has_changes());
}

TEST_CASE("plan: an undeclared size is sent as the service has it, unknown, the resize is refused") {
  Manifest m = one_project();
  m.projects[0].services[0].memory_gbs.reset();
  m.projects[0].services[0].cpu_millis = "2000";
  State s = new_state();
  ResourceRecord r = recorded(m, ResourceKind::Service, "orders", "READY");
  r.settings["cpu_millis"] = "1000";
  s.upsert(r);
  CHECK(action_for(make_plan(m, s), "p1/services/orders").action == Action::Conflict);
  r.last_response = nlohmann::json::parse(R"({"service_id": "id-orders", "resources": [{"spec": {"cpu_millis": 1000, "memory_gbs": 8}}]})");
  s.upsert(r);
  const Plan u_plan = make_plan(m, s);
  const auto& u = action_for(u_plan, "p1/services/orders");
  REQUIRE(u.action == Action::Update);
  CHECK(u.calls[0].body == nlohmann::json({{"cpu_millis", "2000"}, {"memory_gbs", "8"}}));
}

TEST_CASE("plan: region, addons and shared <-> a number need a replacement: a conflict saying so") {
  for (auto change : std::vector<std::function<void(DesiredService&)>>{
           [](DesiredService& s) { s.region_code = "eu-west-1"; },
           [](DesiredService& s) { s.addons = {"ai"}; },
           [](DesiredService& s) { s.cpu_millis = "shared"; }}) {
    Manifest m = one_project();
    State s = new_state();
    ResourceRecord r = recorded(m, ResourceKind::Service, "orders", "READY");
    r.settings["region_code"] = "us-east-1";
    s.upsert(r);
    change(m.projects[0].services[0]);
    m.projects[0].services[0].region_code = m.projects[0].services[0].region_code.value_or("us-east-1");
    Plan plan = make_plan(m, s);
    const auto& c = action_for(plan, "p1/services/orders");
    REQUIRE(c.action == Action::Conflict);
    CHECK(c.calls.empty());
    CHECK_THAT(c.reason, Catch::Contains("requires replacing the database") && Catch::Contains("never replaces"));
    CHECK(plan.summary.conflict == 1);
    // The rest of the plan is still there.
    CHECK(action_for(plan, "p1/services/events").action == Action::Create);
  }
  Manifest m = one_project();
  State s = new_state();
  s.upsert(recorded(m, ResourceKind::Vpc, "main", ""));
  m.projects[0].vpcs[0].cidr = "10.1.0.0/16";
  const Plan v_plan = make_plan(m, s);
  const auto& v = action_for(v_plan, "p1/vpcs/main");
  CHECK(v.action == Action::Conflict);
  CHECK_THAT(v.reason, Catch::Contains("changing cidr requires replacing the VPC"));
}

TEST_CASE("plan: what a refresh observed counts, and where it differs from the record it is drift") {
  Manifest m = one_project();
  State s = new_state();
  ResourceRecord r = recorded(m, ResourceKind::Service, "orders", "READY");
  r.observed = {{"cpu_millis", "500"}, {"memory_gbs", "4"}, {"environment_tag", "DEV"}};
  s.upsert(r);
  const Plan u_plan = make_plan(m, s);
  const auto& u = action_for(u_plan, "p1/services/orders");
  REQUIRE(u.action == Action::Update);
  REQUIRE(u.changes.size() == 1);
  CHECK(u.changes[0].before == "500");
  CHECK(u.changes[0].drift);
  CHECK(u.calls[0].body == nlohmann::json({{"cpu_millis", "1000"}, {"memory_gbs", "4"}}));
  // Declaring the value the API already has is no change, recorded or not.
  m.projects[0].services[0].environment_tag = "DEV";
  m.projects[0].services[0].cpu_millis = "500";
  CHECK(action_for(make_plan(m, s), "p1/services/orders").action == Action::NoOp);
}

TEST_CASE("plan: vpc attaches after the create, moves by detach then attach, and goes when undeclared") {
  Manifest m = one_project();
  m.projects[0].services[1].vpc = "main";
  m.projects[0].services[1].connection_pooler = true;
  Plan fresh = make_plan(m, new_state());
  const auto& create = action_for(fresh, "p1/services/events");
  REQUIRE(create.action == Action::Create);
  REQUIRE(create.calls.size() == 2);
  CHECK(create.calls[0].call == "enablePooler");
  CHECK(create.calls[0].body.is_null());
  CHECK(create.calls[1].call == "attachToVPC");
  CHECK(create.calls[1].body["vpc_id"].is_null());  // the VPC is created in the same apply
  CHECK(create.calls[1].vpc == "main");

  State s = new_state();
  s.upsert(recorded(m, ResourceKind::Vpc, "main", ""));
  ResourceRecord events = recorded(m, ResourceKind::Service, "events", "READY");
  events.settings = {{"connection_pooler", true}};  // created, pooler on, not attached yet
  s.upsert(events);
  const Plan attach_plan = make_plan(m, s);
  const auto& attach = action_for(attach_plan, "p1/services/events");
  REQUIRE(attach.action == Action::Update);
  REQUIRE(attach.calls.size() == 1);
  CHECK(attach.calls[0].body == nlohmann::json({{"vpc_id", "id-main"}}));

  events.settings["vpc"] = "main";
  s.upsert(events);
  m.projects[0].services[1].vpc.reset();
  const Plan detach_plan = make_plan(m, s);
  const auto& detach = action_for(detach_plan, "p1/services/events");
  REQUIRE(detach.action == Action::Update);
  REQUIRE(detach.calls.size() == 1);
  CHECK(detach.calls[0].call == "detachFromVPC");
  CHECK(detach.calls[0].body == nlohmann::json({{"vpc_id", "id-main"}}));
  CHECK(detach.changes[0].field == "vpc");
  CHECK(detach.changes[0].after.is_null());
}

TEST_CASE("plan: a resource deleted outside dbform is created again, its old id named") {
  Manifest m = one_project();
  State s = new_state();
  ResourceRecord r = recorded(m, ResourceKind::Service, "orders", "READY");
  r.deleted_outside = true;
  s.upsert(r);
  const Plan c_plan = make_plan(m, s);
  const auto& c = action_for(c_plan, "p1/services/orders");
  CHECK(c.action == Action::Create);
  CHECK(c.before.is_null());
  CHECK_THAT(c.reason, Catch::Contains("deleted outside dbform") && Catch::Contains("id-orders"));
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
  CHECK_THAT(o.reason, Catch::Contains("kept") && Catch::Contains("`--prune` deletes it"));
  CHECK(plan.actions.back().address == "p1/services/legacy");
  CHECK(plan.summary.orphan == 1);
  CHECK(plan.summary.create == 3);

  // One whose create's outcome is unknown has no id to delete, and forgetting it takes --force.
  gone.id.clear();
  gone.create_pending = true;
  s.upsert(gone);
  const Plan settling = make_plan(m, s);
  const auto& pending = action_for(settling, "p1/services/legacy");
  CHECK(pending.action == Action::Orphan);
  CHECK_THAT(pending.reason, Catch::Contains("outcome was known") && Catch::Contains("state rm --force") &&
                                 !Catch::Contains("`--prune` deletes it"));
}

TEST_CASE("plan: what the last answer showed counts without a refresh: declaring it is no change") {
  Manifest m = one_project();
  DesiredService& events = m.projects[0].services[1];
  events.region_code = "us-east-1";
  events.environment_tag = "DEV";
  events.connection_pooler = false;
  State s = new_state();
  ResourceRecord r = recorded(one_project(), ResourceKind::Service, "events", "READY");
  r.last_response = nlohmann::json::parse(
      R"({"service_id": "id-events", "region_code": "us-east-1", "metadata": {"environment": "DEV"}})");
  s.upsert(r);
  const Plan plan = make_plan(m, s);
  CHECK(action_for(plan, "p1/services/events").action == Action::NoOp);
}

TEST_CASE("plan: --prune deletes orphans, refuses protected ones, and declared protection is recorded") {
  Manifest m = one_project();
  State s = new_state();
  ResourceRecord legacy = recorded(m, ResourceKind::Service, "legacy", "READY");
  s.upsert(legacy);
  ResourceRecord guarded = recorded(m, ResourceKind::Service, "guarded", "READY");
  guarded.deletion_protection = true;
  s.upsert(guarded);
  const Plan kept = make_plan(m, s);
  CHECK(kept.summary.orphan == 2);
  CHECK(kept.summary.prunable == 1);
  CHECK(kept.summary.del == 0);
  const Plan pruned = make_plan(m, s, nullptr, true);
  CHECK(pruned.prune);
  CHECK(action_for(pruned, "p1/services/legacy").action == Action::Delete);
  const auto& refused = action_for(pruned, "p1/services/guarded");
  CHECK(refused.action == Action::Conflict);
  CHECK_THAT(refused.reason, Catch::Contains("protected") && Catch::Contains("deletion_protection: false"));
  CHECK(pruned.summary.del == 1);
  CHECK(pruned.summary.has_changes());

  // Declaring protection on a recorded resource is an update of the state alone: no call.
  m.projects[0].services[0].deletion_protection = true;
  s.upsert(recorded(m, ResourceKind::Service, "orders", "READY"));
  const Plan protect = make_plan(m, s);
  const auto& u = action_for(protect, "p1/services/orders");
  REQUIRE(u.action == Action::Update);
  CHECK(u.calls.empty());
  REQUIRE(u.changes.size() == 1);
  CHECK(u.changes[0].field == "deletion_protection");
  CHECK(u.deletion_protection);
}
