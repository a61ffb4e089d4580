// `plan --refresh-only` and `apply --refresh-only` (Terraform's -refresh-only): what changed outside
// dbform, reported and then recorded, with no call but reads; the state's "last refreshed" time,
// which a plan from the state alone (a pull request without a key) shows; through the real binary
// against the simulator, counting the calls.

#include "service_helpers.h"
#include "util/file_lock.h"

using namespace e2e;

namespace {

// The requests of each route made since `before` (a count taken earlier).
json calls_since_counts(const Sandbox& sb, const json& before) {
  json calls = json::object();
  const json after = sb.counts();  // held: items() would outlive a temporary
  for (const auto& [route, n] : after.items())
    if (n != before.value(route, 0LL)) calls[route] = n.get<long long>() - before.value(route, 0LL);
  return calls;
}

// orders (PROD) and billing, applied; then the manifests ask for more of orders (a change of the
// pull request's kind, which a refresh-only run must not show), and in the console orders is
// resized and billing deleted.
struct Drifted {
  Sandbox sb;
  std::string orders_id, billing_id;
  Drifted() {
    sb.write("dbform.yaml", manifest({}, {orders_yaml("        environment_tag: PROD\n"), service_yaml("billing")}));
    RunResult r = sb.apply();
    INFO(r.describe());
    REQUIRE(r.exit_code == 0);
    orders_id = recorded_service_id(sb, "orders");
    billing_id = recorded_service_id(sb, "billing");
    sb.write("dbform.yaml", manifest({}, {orders_yaml("        environment_tag: PROD\n", 2000, 8), service_yaml("billing")}));
    REQUIRE(sb.sim().console(orders_id, "resize", R"({"cpu_millis": 4000, "memory_gbs": 16})").status == 200);
    REQUIRE(sb.sim().console(billing_id, "delete", "").status == 200);
  }
};

}  // namespace

TEST_CASE("e2e: plan --refresh-only reports only what changed outside dbform, writes nothing, and exits 2 on drift") {
  Drifted d;
  Sandbox& sb = d.sb;
  const auto before = files_beside_manifests(sb);
  const json counts = sb.counts();

  RunResult plan = sb.run({"plan", "--refresh-only", "--detailed-exitcode"});
  INFO(plan.describe());
  CHECK(plan.exit_code == 2);
  CHECK(contains(plan.out, "cpu_millis = \"1000\" -> \"4000\""));
  CHECK(contains(plan.out, "memory_gbs = \"4\" -> \"16\""));
  CHECK(contains(plan.out, service_address("billing") + " (id " + d.billing_id + "): deleted outside dbform"));
  CHECK(contains(plan.out, "Refresh: 1 changed outside dbform, 1 deleted outside dbform, 0 unchanged."));
  // Nothing of the manifests' own change (2000 milli-cores), and no call planned.
  CHECK_FALSE(contains(plan.out, "2000"));
  CHECK_FALSE(contains(plan.out, "resize"));
  CHECK_FALSE(contains(plan.out, "to create"));
  CHECK(files_beside_manifests(sb) == before);  // read-only: not a byte, no lock file, no journal
  // One key check and one list of services; billing, absent from the list, read by id once.
  CHECK(calls_since_counts(sb, counts) == json{{kAuthInfo, 1}, {kListServices, 1}, {kGetService, 1}});

  RunResult doc = sb.run({"plan", "-refresh-only", "--format", "json"});  // Terraform's spelling too
  INFO(doc.describe());
  REQUIRE(doc.exit_code == 0);
  const json report = json::parse(doc.out);
  CHECK(report["format"] == "dbform-refresh");
  CHECK(report["summary"] == json{{"changed", 1}, {"deleted_outside", 1}, {"has_changes", true}});
  CHECK(report["changes"][0]["address"] == service_address("billing"));
  CHECK(report["changes"][1]["fields"][0] == json{{"field", "cpu_millis"}, {"before", "1000"}, {"after", "4000"}});
  CHECK_FALSE(contains(doc.out, "password"));

  RunResult comment = sb.run({"plan", "--refresh-only", "--format", "markdown"});
  CHECK(comment.out.rfind("<!-- dbform-refresh -->\n### dbform drift check: 1 changed, 1 deleted outside dbform", 0) == 0);
  CHECK(files_beside_manifests(sb) == before);
}

TEST_CASE("e2e: apply --refresh-only records what changed outside dbform and its time, and calls nothing else") {
  Drifted d;
  Sandbox& sb = d.sb;
  const auto before = files_beside_manifests(sb);
  json counts = sb.counts();

  // Without a terminal it needs --auto-approve, and says so before reading anything.
  RunResult refused = sb.run({"apply", "--refresh-only"});
  CHECK(refused.exit_code == 1);
  CHECK(contains(refused.err, "--auto-approve"));
  CHECK(calls_since_counts(sb, counts).empty());
  CHECK(files_beside_manifests(sb) == before);

  // On a terminal it shows the report and asks; anything but yes records nothing.
  RunResult no = sb.run_tty({"apply", "--refresh-only"}, "no\n");
  INFO(no.describe());
  CHECK(no.exit_code == 1);
  CHECK(contains(no.out, "deleted outside dbform"));
  CHECK(contains(no.out, "Do you want to record what changed outside dbform"));
  CHECK(files_beside_manifests(sb) == before);

  counts = sb.counts();
  RunResult r = sb.run({"apply", "--refresh-only", "--auto-approve"});
  INFO(r.describe());
  REQUIRE(r.exit_code == 0);
  CHECK(contains(r.out, "\"1000\" -> \"4000\""));
  CHECK(contains(r.out, "No other call was made."));
  CHECK(writes_of(calls_since_counts(sb, counts)).empty());  // lists and reads only
  const json state = sb.state();
  const json orders = find_resource(state, service_address("orders"));
  CHECK(orders["observed"]["cpu_millis"] == "4000");
  CHECK(orders["settings"]["cpu_millis"] == "1000");  // what dbform set is kept: the next plan puts it back
  CHECK(find_resource(state, service_address("billing"))["deleted_outside"] == true);
  CHECK(state["refreshed"]["by"] == "apply --refresh-only");
  CHECK(state["refreshed"]["serial"] == state["serial"]);
  CHECK(sb.sim().all_services().size() == 1);  // nothing created, nothing put back

  // Recorded: the drift check is clean now, and a plan from the state alone sees the drift.
  CHECK(sb.run({"plan", "--refresh-only", "--detailed-exitcode"}).exit_code == 0);
  RunResult offline = sb.run({"plan", "--no-refresh", "--detailed-exitcode"}, {{"DBFORM_API_KEY", ""}});
  INFO(offline.describe());
  CHECK(offline.exit_code == 2);
  CHECK(contains(offline.out, "changed outside dbform"));
  CHECK(contains(offline.out, "1 to create"));
}

TEST_CASE("e2e: a plan from the state alone says how long ago the state was refreshed, and by what") {
  Sandbox sb;
  sb.write("dbform.yaml", manifest({}, {orders_yaml()}));
  // An apply without a refresh reads nothing: the state it makes was never refreshed.
  REQUIRE(sb.apply({"--no-refresh"}).exit_code == 0);
  CHECK_FALSE(sb.state().contains("refreshed"));
  RunResult never = sb.run({"plan", "--no-refresh"}, {{"DBFORM_API_KEY", ""}});
  INFO(never.describe());
  CHECK(never.exit_code == 0);
  CHECK(contains(never.out, "the state has never been refreshed by a run that recorded it"));

  // An apply that refreshed everything the state records stamps it.
  sb.write("dbform.yaml", manifest({}, {orders_yaml("", 2000, 8)}));
  REQUIRE(sb.apply().exit_code == 0);
  CHECK(sb.state()["refreshed"]["by"] == "apply");

  // Three hours and twelve minutes later (and half a minute, so that the test's own seconds do
  // not move the minute), by the scheduled job.
  json state = sb.state();
  const auto then = std::chrono::system_clock::now() - std::chrono::hours(3) - std::chrono::minutes(12) -
                    std::chrono::seconds(30);
  state["refreshed"] = {{"at", dbform::format_utc(then)}, {"by", "apply --refresh-only"}, {"serial", state["serial"]}};
  sb.write("dbform.state.json", state.dump(2));
  fs::remove(sb.dir() / "dbform.state.json.journal");
  const long long before = sb.total_requests();
  RunResult text = sb.run({"plan", "--no-refresh"}, {{"DBFORM_API_KEY", ""}});
  INFO(text.describe());
  CHECK(text.exit_code == 0);
  CHECK(contains(text.out, "the state was last refreshed 3h 12m ago (" + dbform::format_utc(then) +
                               ") by apply --refresh-only"));
  RunResult comment = sb.run({"plan", "--no-refresh", "--format", "markdown"}, {{"DBFORM_API_KEY", ""}});
  CHECK(contains(comment.out, "> From the state alone (--no-refresh): the state was last refreshed 3h 12m ago"));
  RunResult doc = sb.run({"plan", "--no-refresh", "--format", "json"}, {{"DBFORM_API_KEY", ""}});
  REQUIRE(doc.exit_code == 0);
  const json last = json::parse(doc.out)["state"]["last_refreshed"];
  CHECK(last["by"] == "apply --refresh-only");
  CHECK(last["age_seconds"].get<long long>() >= 3 * 3600 + 12 * 60 + 30);
  CHECK(sb.total_requests() == before);  // no key, no call
  // A refreshing plan reads what exists now: it says nothing of the state's age.
  CHECK_FALSE(contains(sb.run({"plan"}).out, "last refreshed"));
}

TEST_CASE("e2e: a scheduled apply --refresh-only that finds nothing leaves main's saved plan good, and one that records drift makes it stale") {
  Sandbox sb;
  sb.write("dbform.yaml", manifest({}, {orders_yaml()}));
  REQUIRE(sb.apply().exit_code == 0);
  REQUIRE(sb.run({"apply", "--refresh-only", "--auto-approve"}).exit_code == 0);  // last night's
  sb.write("dbform.yaml", manifest({}, {orders_yaml("", 2000, 8)}));
  REQUIRE(sb.run({"plan", "--out", "tfplan"}).exit_code == 0);

  for (int hour = 0; hour < 2; ++hour) {
    RunResult check = sb.run({"apply", "--refresh-only", "--auto-approve"});
    INFO(check.describe());
    REQUIRE(check.exit_code == 0);
    CHECK(contains(check.out, "No changes outside dbform"));
  }
  const json state = sb.state();
  CHECK(state["refreshed"]["by"] == "apply --refresh-only");
  CHECK(state["refreshed"].contains("unchanged_since"));
  RunResult applied = sb.run({"apply", "tfplan"});
  INFO(applied.describe());
  CHECK(applied.exit_code == 0);
  CHECK(sb.count(kResize) == 1);

  // A refresh that records a change moves the records: a plan saved before it is stale.
  REQUIRE(sb.run({"plan", "--out", "tfplan2"}).exit_code == 0);
  REQUIRE(sb.sim().console(recorded_service_id(sb, "orders"), "setEnvironment", R"({"environment": "PROD"})").status == 200);
  REQUIRE(sb.run({"apply", "--refresh-only", "--auto-approve"}).exit_code == 0);
  RunResult stale = sb.run({"apply", "tfplan2"});
  CHECK(stale.exit_code == 1);
  CHECK(contains(stale.err, "stale"));
}

TEST_CASE("e2e: --refresh-only refuses the flags that plan the manifests' changes, before any call") {
  Sandbox sb;
  sb.write("dbform.yaml", manifest({}, {orders_yaml()}));
  REQUIRE(sb.apply().exit_code == 0);
  const auto before = files_beside_manifests(sb);
  const long long requests = sb.total_requests();
  const std::vector<std::pair<std::vector<std::string>, std::string>> cases = {
      {{"plan", "--refresh-only", "--no-refresh"}, "--refresh-only reads what exists and --no-refresh reads nothing"},
      {{"plan", "-refresh-only", "-refresh=false"}, "--refresh-only reads what exists and --no-refresh reads nothing"},
      {{"apply", "--refresh-only", "--no-refresh", "--auto-approve"}, "use one of them"},
      {{"plan", "--refresh-only", "--prune"}, "--prune has nothing to act on"},
      {{"plan", "--refresh-only", "--out", "tfplan"}, "--out has nothing to act on"},
      {{"apply", "--refresh-only", "--auto-approve", "--max-deletes", "5"}, "--max-deletes has nothing to act on"},
      {{"apply", "--refresh-only", "--auto-approve", "--wait-connectable"}, "--wait-connectable has nothing to act on"},
      {{"apply", "--refresh-only", "tfplan"}, "a plan file holds a plan of the manifests"},
  };
  for (const auto& [args, message] : cases) {
    RunResult r = sb.run(args);
    INFO(r.describe());
    CHECK(r.exit_code == 1);
    CHECK(contains(r.err, message));
  }
  CHECK(sb.total_requests() == requests);
  CHECK(files_beside_manifests(sb) == before);
  CHECK_FALSE(sb.exists("tfplan"));
}

// `plan --refresh-only --out` is refused, so apply --refresh-only without a terminal must not send
// the user there: it names the report to read and --auto-approve.
TEST_CASE("e2e: apply --refresh-only without a terminal suggests --auto-approve, never a saved plan") {
  Sandbox sb;
  sb.write("dbform.yaml", manifest({}, {orders_yaml()}));
  REQUIRE(sb.apply().exit_code == 0);
  const auto before = files_beside_manifests(sb);
  const long long requests = sb.total_requests();
  RunResult r = sb.run({"apply", "--refresh-only"});
  INFO(r.describe());
  CHECK(r.exit_code == 1);
  CHECK(contains(r.err, "there is no terminal to ask on"));
  CHECK(contains(r.err, "dbform plan --refresh-only"));
  CHECK(contains(r.err, "--auto-approve"));
  CHECK_FALSE(contains(r.err, "--out"));
  CHECK(sb.total_requests() == requests);
  CHECK(files_beside_manifests(sb) == before);
}

TEST_CASE("e2e: apply --refresh-only waits for no apply: it is refused while one holds the lock") {
  Drifted d;
  Sandbox& sb = d.sb;
  auto held = hold_state_lock(sb);
  const json counts = sb.counts();
  RunResult r = sb.run({"apply", "--refresh-only", "--auto-approve"});
  INFO(r.describe());
  CHECK(r.exit_code == 1);
  CHECK(contains(r.err, "locked by pid 4242 on ci-main"));
  CHECK(calls_since_counts(sb, counts).empty());  // refused before any read
  // The plan takes no lock: it reports beside the holder.
  RunResult plan = sb.run({"plan", "--refresh-only", "--detailed-exitcode"});
  CHECK(plan.exit_code == 2);
  CHECK(contains(plan.err, "locked by pid 4242"));
}
