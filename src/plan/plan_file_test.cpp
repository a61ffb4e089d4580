#include <catch2/catch.hpp>

#include "manifest/loader.h"
#include "plan/differ.h"
#include "plan/plan_file.h"
#include "util/error.h"

using namespace dbform;
using nlohmann::json;

namespace {

const char* kManifest = R"(version: 1
projects:
  - id: p1
    vpcs:
      - name: main
        cidr: 10.0.0.0/16
        region_code: us-east-1
    services:
      - name: fresh
        cpu_millis: 1000
      - name: ready
        memory_gbs: 4
      - name: waiting
      - name: pending
      - name: changed
        cpu_millis: 2000
)";

Manifest load(const std::string& text) {
  Diagnostics diags;
  Manifest m = load_manifest_text("dbform.yaml", text, [](const std::string&) { return std::nullopt; }, diags);
  REQUIRE_FALSE(diags.has_errors());
  return m;
}

ResourceRecord record(const std::string& name, json settings, const std::string& id, const std::string& status) {
  ResourceRecord r;
  r.project_id = "p1";
  r.name = name;
  r.address = resource_address("p1", ResourceKind::Service, name);
  r.settings = std::move(settings);
  r.id = id;
  r.status = status;
  return r;
}

// A state that gives every kind of action against kManifest; every record has a password.
State every_action_state() {
  State s = new_state();
  s.serial = 7;
  s.upsert(record("ready", {{"memory_gbs", "4"}}, "id-ready", "READY"));
  s.upsert(record("waiting", json::object(), "id-waiting", "QUEUED"));
  ResourceRecord intent = record("pending", json::object(), "", "");
  intent.create_pending = true;
  s.upsert(intent);
  s.upsert(record("changed", {{"cpu_millis", "1000"}}, "id-changed", "READY"));
  s.upsert(record("legacy", {{"cpu_millis", "500"}}, "id-legacy", "READY"));
  for (auto& r : s.resources) r.initial_password = "pw-" + r.name + "-Zq8x";
  return s;
}

PlanDocument document(const Manifest& m, const State& s) {
  PlanDocument doc;
  doc.plan = make_plan(m, s);
  doc.manifest_paths = {"."};
  doc.manifest_files = m.files;
  doc.diagnostics.push_back({Severity::Warning, {"dbform.yaml", 5, 15}, "projects[0].vpcs[0].cidr", "host bits set", ""});
  doc.created_at = "2026-01-02T03:04:05Z";
  return doc;
}

}  // namespace

TEST_CASE("plan: a plan document round-trips every field of every kind of action") {
  Manifest m = load(kManifest);
  State s = every_action_state();
  PlanDocument doc = document(m, s);
  REQUIRE(doc.plan.summary.create == 2);
  REQUIRE(doc.plan.summary.conflict == 1);
  REQUIRE(doc.plan.summary.orphan == 1);
  const std::string text = plan_document_json(doc).dump();

  PlanDocument back = parse_plan_document(text, "plan.json");
  CHECK(plan_document_json(back) == plan_document_json(doc));
  CHECK(back.plan.state_lineage == s.lineage);
  CHECK(back.plan.state_serial == 7);
  CHECK(back.plan.manifest_digest == m.digest);
  CHECK(back.manifest_paths == std::vector<std::string>{"."});
  REQUIRE(back.plan.actions.size() == doc.plan.actions.size());
  const PlannedAction& changed = back.plan.actions[5];
  CHECK(changed.address == "p1/services/changed");
  CHECK(changed.action == Action::Conflict);
  REQUIRE(changed.changes.size() == 1);
  CHECK(changed.changes[0].before == "1000");
  CHECK(changed.changes[0].after == "2000");
  CHECK(changed.location.line == 15);
  CHECK(back.plan.summary.noop == doc.plan.summary.noop);
  CHECK(back.diagnostics.at(0).location.column == 15);
}

TEST_CASE("plan: a plan document holds no password from the state") {
  State s = every_action_state();
  const std::string text = plan_document_json(document(load(kManifest), s)).dump();
  for (const auto& r : s.resources) CHECK(text.find(r.initial_password.text()) == std::string::npos);
  CHECK(text.find("password") == std::string::npos);
}

TEST_CASE("plan: no state yet is written as a null lineage and read back as none") {
  Manifest m = load(kManifest);
  PlanDocument doc = document(m, new_state());
  doc.plan.state_lineage.clear();
  json j = plan_document_json(doc);
  CHECK(j["state"]["lineage"].is_null());
  CHECK(parse_plan_document(j.dump(), "p").plan.state_lineage.empty());
}

TEST_CASE("plan: damaged or foreign plan files are refused naming the problem") {
  json good = plan_document_json(document(load(kManifest), every_action_state()));
  auto refusal = [](const std::string& text) {
    try {
      parse_plan_document(text, "saved.plan");
    } catch (const UsageError& e) {
      return std::string(e.what());
    }
    return std::string("accepted");
  };
  CHECK_THAT(refusal("not json"), Catch::Contains("saved.plan is not a dbform plan file"));
  CHECK_THAT(refusal(R"({"format": "dbform-state", "version": 1})"), Catch::Contains("not a dbform plan file"));

  json newer = good;
  newer["format_version"] = 2;
  CHECK_THAT(refusal(newer.dump()), Catch::Contains("format version 2; this dbform reads version 1"));

  json bad_action = good;
  bad_action["actions"][1]["action"] = "destroy";
  CHECK_THAT(refusal(bad_action.dump()), Catch::Contains("actions[1].action: expected one of create"));

  json bad_serial = good;
  bad_serial["state"]["serial"] = "7";
  CHECK_THAT(refusal(bad_serial.dump()), Catch::Contains("state.serial: expected an integer"));

  json no_manifests = good;
  no_manifests.erase("manifests");
  CHECK_THAT(refusal(no_manifests.dump()), Catch::Contains("manifests: expected an object"));
}

TEST_CASE("plan: a hand-edited summary cannot disagree with the actions") {
  json j = plan_document_json(document(load(kManifest), every_action_state()));
  j["summary"]["conflict"] = 0;
  CHECK(parse_plan_document(j.dump(), "p").plan.summary.conflict == 1);
}

// saved_plan_problems with the plan `m` and `s` give now.
std::vector<std::string> problems_against(const PlanDocument& doc, const Manifest& m, const State* stored, const State& s) {
  const Plan now = make_plan(m, s);
  return saved_plan_problems(doc, m, stored, &now);
}

TEST_CASE("plan: a saved plan still holds when nothing moved") {
  Manifest m = load(kManifest);
  State s = every_action_state();
  PlanDocument doc = document(m, s);
  CHECK(problems_against(doc, m, &s, s).empty());

  PlanDocument no_state = document(m, new_state());
  no_state.plan.state_lineage.clear();
  CHECK(problems_against(no_state, m, nullptr, new_state()).empty());
}

TEST_CASE("plan: a saved plan is stale when the state moved, naming serials and lineages") {
  Manifest m = load(kManifest);
  State s = every_action_state();
  PlanDocument doc = document(m, s);

  State moved = s;
  moved.serial = 9;
  auto problems = problems_against(doc, m, &moved, moved);
  REQUIRE(problems.size() == 1);
  CHECK_THAT(problems[0], Catch::Contains("serial 7 then, 9 now"));

  State other = s;
  other.lineage = "another-lineage";
  problems = problems_against(doc, m, &other, other);
  REQUIRE(problems.size() == 1);
  CHECK_THAT(problems[0], Catch::Contains("another state") && Catch::Contains("another-lineage"));

  CHECK_THAT(problems_against(doc, m, nullptr, new_state()).at(0),
             Catch::Contains("there is no state now"));

  PlanDocument no_state = document(m, new_state());
  no_state.plan.state_lineage.clear();
  CHECK_THAT(problems_against(no_state, m, &s, s).at(0),
             Catch::Contains("a state was created after the plan was made"));
}

TEST_CASE("plan: a saved plan is stale when the manifests changed, naming added and removed files") {
  Manifest m = load(kManifest);
  State s = every_action_state();
  PlanDocument doc = document(m, s);
  Manifest edited = load(std::string(kManifest) + "      - name: extra\n");
  auto problems = problems_against(doc, edited, &s, s);
  REQUIRE(problems.size() == 1);
  CHECK_THAT(problems[0], Catch::Contains("manifests have changed") && Catch::Contains("dbform.yaml"));

  Manifest renamed = m;
  renamed.files = {"other.yaml"};
  renamed.digest = "different";
  CHECK_THAT(problems_against(doc, renamed, &s, s).at(0),
             Catch::Contains("added: other.yaml") && Catch::Contains("removed: dbform.yaml"));
}

TEST_CASE("plan: a saved plan is stale when the same files read differently, naming the resources") {
  Manifest m = load(kManifest);
  State s = every_action_state();
  PlanDocument doc = document(m, s);
  Manifest reread = m;
  reread.projects[0].services[0].cpu_millis = "4000";  // as if ${CPU} had another value
  auto problems = problems_against(doc, reread, &s, s);
  REQUIRE(problems.size() == 1);
  CHECK_THAT(problems[0], Catch::Contains("read differently") && Catch::Contains("p1/services/fresh"));
  CHECK_THAT(problems[0], !Catch::Contains("p1/services/ready"));
}

TEST_CASE("plan: a file that is not a plan, or nests too deep, is refused with a UsageError") {
  // Found by fuzz_plan_file: a "format" that is an object threw a JSON type error.
  CHECK_THROWS_AS(parse_plan_document(R"({"format": {"lineage": null}})", "x.plan"), UsageError);
  CHECK_THROWS_WITH(parse_plan_document(R"({"format": {"lineage": null}})", "x.plan"),
                    Catch::Contains("is not a dbform plan file"));
  CHECK_THROWS_WITH(parse_plan_document("[" + std::string(10000, '[') + std::string(10001, ']'), "x.plan"),
                    Catch::Contains("x.plan cannot be read: nested more than 64 levels deep"));
}
