// Plans a pull request can run: a plan writes nothing and takes no lock,
// whatever its refresh finds; main's reviewed saved plan stays good while pull requests plan; the
// next apply records what the refresh found; Terraform's spellings of the flags.

#include "common.h"
#include "util/clock.h"
#include "util/file_lock.h"

using namespace e2e;

TEST_CASE("e2e: a refreshing plan writes nothing, whatever it finds") {
  Sandbox sb;
  apply_base(sb);
  // Changed outside dbform: a resize, and a service deleted.
  REQUIRE(sb.sim().console(recorded_service_id(sb, "orders"), "resize", R"({"cpu_millis":"2000","memory_gbs":"8"})").status == 200);
  REQUIRE(sb.sim().console(recorded_service_id(sb, "billing"), "delete", "").status == 200);
  const auto before = files_beside_manifests(sb);
  const long long serial = sb.state()["serial"];

  RunResult r = sb.run({"plan", "--detailed-exitcode"});
  INFO(r.describe());
  CHECK(r.exit_code == 2);
  CHECK(contains(r.out, "changed outside dbform"));
  CHECK(contains(r.out, "deleted outside dbform"));
  CHECK(files_beside_manifests(sb) == before);  // not a byte, not a mode, no new file (no journal, no backup)
  CHECK(sb.state()["serial"] == serial);

  // The next apply records what its own refresh finds, and makes the changes.
  RunResult applied = sb.apply();
  INFO(applied.describe());
  CHECK(applied.exit_code == 0);
  RunResult after = sb.run({"plan", "--detailed-exitcode"});
  CHECK(after.exit_code == 0);
}

TEST_CASE("e2e: a pull request's plan never makes main's reviewed saved plan stale") {
  Sandbox sb;
  apply_base(sb);
  REQUIRE(sb.sim().console(recorded_service_id(sb, "orders"), "resize", R"({"cpu_millis":"2000","memory_gbs":"8"})").status == 200);
  // main: the reviewed plan, saved.
  sb.write("dbform.yaml", base_manifest({"search"}));
  RunResult saved = sb.run({"plan", "--out", "main.plan"});
  INFO(saved.describe());
  REQUIRE(saved.exit_code == 0);
  // Then a change outside dbform that main's plan does not act on (environment_tag is not
  // declared), and a pull request plans its own change against the same state, twice: its
  // refreshes read the change, and record nothing.
  REQUIRE(sb.sim().console(recorded_service_id(sb, "billing"), "setEnvironment", R"({"environment":"PROD"})").status == 200);
  sb.write("pr/dbform.yaml", base_manifest({"search", "reports"}));
  for (int i = 0; i < 2; ++i) REQUIRE(sb.run({"plan", "-f", "pr/"}).exit_code == 0);

  const long long creates = sb.count(kPostService);
  RunResult applied = sb.run({"apply", "main.plan", "--poll-interval", "100ms"});
  INFO(applied.describe());
  CHECK(applied.exit_code == 0);
  CHECK(sb.count(kPostService) == creates + 1);  // search, and nothing else
  CHECK(sb.count("POST /projects/{project_id}/services/{service_id}/resize") == 1);  // orders back to 1000
  CHECK(find_resource(sb.state(), service_address("search"))["status"] == "READY");
  // What the refreshes read is recorded by the apply.
  CHECK(find_resource(sb.state(), service_address("billing"))["observed"]["environment_tag"] == "PROD");
}

TEST_CASE("e2e: a saved plan is stale when what exists changed after it was made") {
  Sandbox sb;
  apply_base(sb);
  sb.write("dbform.yaml", base_manifest({"search"}));
  RunResult saved = sb.run({"plan", "--out", "tfplan", "--prune", "--max-deletes", "5"});
  REQUIRE(saved.exit_code == 0);
  REQUIRE(sb.sim().console(recorded_service_id(sb, "orders"), "resize", R"({"cpu_millis":"2000","memory_gbs":"8"})").status == 200);
  const std::string state = sb.read("dbform.state.json");
  const json writes = writes_of(sb.counts());

  RunResult r = sb.run({"apply", "tfplan"});
  INFO(r.describe());
  CHECK(r.exit_code == 1);
  CHECK(contains(r.err, "what exists has changed since the plan was made"));
  CHECK(contains(r.err, "plans otherwise now for " + service_address("orders")));
  // The command to run again carries the flags the plan was made with.
  CHECK(contains(r.err, "`dbform plan --prune --max-deletes 5 --out tfplan`"));
  CHECK(writes_of(sb.counts()) == writes);
  CHECK(sb.read("dbform.state.json") == state);
}

TEST_CASE("e2e: a plan runs while an apply holds the lock, and names the holder") {
  Sandbox sb;
  apply_base(sb);
  sb.write("dbform.yaml", base_manifest({"search"}));
  // Another run holds the lock, as an apply would (an flock on the lock file naming it).
  auto held = hold_state_lock(sb);
  const auto before = files_beside_manifests(sb);

  RunResult plan = sb.run({"plan"});
  INFO(plan.describe());
  CHECK(plan.exit_code == 0);
  CHECK(contains(plan.out, "1 to create"));
  CHECK(contains(plan.err, "locked by pid 4242 on ci-main, running `apply` since 2026-11-26T10:00:00Z"));
  CHECK(files_beside_manifests(sb) == before);

  RunResult apply = sb.apply();  // a writer is refused, naming the same holder
  CHECK(apply.exit_code == 1);
  CHECK(contains(apply.err, "locked by pid 4242 on ci-main"));
  held.reset();
  RunResult free_plan = sb.run({"plan"});
  CHECK(free_plan.exit_code == 0);
  CHECK(!contains(free_plan.err, "locked by"));
}

TEST_CASE("e2e: Terraform's spellings of the flags: one dash, `=`, -refresh=false") {
  Sandbox sb;
  apply_base(sb);
  sb.write("dbform.yaml", base_manifest({"search"}));

  RunResult plan = sb.run({"plan", "-out=tfplan", "-detailed-exitcode", "-lock-timeout=5s", "-no-color"});
  INFO(plan.describe());
  CHECK(plan.exit_code == 2);  // changes pending, as Terraform's -detailed-exitcode says
  CHECK(sb.exists("tfplan"));

  const long long auth = sb.count(kAuthInfo);
  RunResult offline = sb.run({"plan", "-refresh=false", "-target=search", "-detailed-exitcode"}, {{"DBFORM_API_KEY", ""}});
  INFO(offline.describe());
  CHECK(offline.exit_code == 2);
  CHECK(sb.count(kAuthInfo) == auth);  // no refresh: no key needed, no call made
  CHECK(contains(offline.out, "1 to create"));

  RunResult applied = sb.run({"apply", "-auto-approve", "-refresh=true", "-parallelism=4", "-poll-interval=100ms"});
  INFO(applied.describe());
  CHECK(applied.exit_code == 0);
  CHECK(find_resource(sb.state(), service_address("search"))["status"] == "READY");

  RunResult bad = sb.run({"plan", "-refresh=maybe"});
  CHECK(bad.exit_code == 1);
  RunResult unknown = sb.run({"plan", "-outt=x"});
  CHECK(unknown.exit_code == 1);
  CHECK(contains(unknown.err, "did you mean `--out`?"));
}

TEST_CASE("e2e: a refreshing plan reads each project once, its key refused included") {
  Sandbox sb;
  apply_base(sb);
  // The key check and the lists begin while the plan is made: once each.
  json before = sb.counts();
  RunResult r = sb.run({"plan"});
  INFO(r.describe());
  CHECK(r.exit_code == 0);
  auto made = [&](const std::string& route) { return sb.count(route) - before.value(route, 0LL); };
  CHECK(made("GET /auth/info") == 1);
  CHECK(made("GET /projects/{project_id}/services") == 1);
  CHECK(made("GET /projects/{project_id}/vpcs") == 1);

  // A refused key is reported as such, from its one check: nothing is read again.
  before = sb.counts();
  RunResult refused = sb.run({"plan"}, {{"DBFORM_API_KEY", "wrong-key"}});
  INFO(refused.describe());
  CHECK(refused.exit_code == 1);
  CHECK(contains(refused.err, "was not accepted"));
  CHECK(made("GET /auth/info") == 1);
  CHECK(made("GET /projects/{project_id}/services") == 0);
}

TEST_CASE("e2e: a refreshing plan whose services list fails after the key check names the project and the call - writes nothing - lists it no more than the client's retries") {
  using Kind = dbform::RouteFault::Kind;
  // 504: a read answered 5xx is retried by the client (src/api/client.cpp, ApiClient::call): up to
  // RetryPolicy::max_attempts (6) tries in all, with jittered back-off (at most 0.5+1+2+4+8 s).
  // 422: not transient, never retried: one try. Either way the early reads' failed list is the
  // plan's (list_projects keeps a project that failed failed): plan_refreshed does not list it again.
  const auto [kind, tries, status] = GENERATE(table<Kind, long long, std::string>(
      {{Kind::GatewayTimeout, 6, "504"}, {Kind::Refuse, 1, "422"}}));
  INFO("answered " << status);
  Sandbox sb;
  apply_base(sb);
  const auto files = files_beside_manifests(sb);
  const json before = sb.counts();
  sb.sim().set_route_faults({{kListServices, kind, sb.count(kListServices) + 1, 0}});  // every list from now on

  RunResult r = sb.run({"plan", "--detailed-exitcode"});
  INFO(r.describe());
  auto made = [&](const std::string& route) { return sb.count(route) - before.value(route, 0LL); };
  CHECK(r.exit_code == 1);
  CHECK(r.out.empty());  // no plan is shown as if nothing had been read
  CHECK(contains(r.err, "the refresh could not read what exists"));
  CHECK(contains(r.err, "project " + kProject + ": GET /projects/" + kProject + "/services: " + status));
  if (tries > 1) CHECK(contains(r.err, "(after 6 attempts)"));
  // The way round it that the error gives must be one: a plan refreshes unless told --no-refresh.
  CHECK(contains(r.err, "plan --no-refresh"));
  CHECK(!contains(r.err, "plan without --refresh"));
  CHECK(made(kAuthInfo) == 1);  // the key check passed, once
  CHECK(made("GET /projects/{project_id}/vpcs") == 1);  // listed before the services (resource_types()), once
  CHECK(made(kListServices) == tries);
  CHECK(made(kGetService) == 0);  // nothing of the project is read one by one after its list failed
  CHECK(files_beside_manifests(sb) == files);   // the state, journal, backup and lock file: not a byte, no new file
}

TEST_CASE("e2e: a refreshing plan while an apply creates reports none of the apply's creates as a conflict") {
  Sandbox sb;
  apply_base(sb);
  sb.write("dbform.yaml", base_manifest({"search"}));
  // The plan reads the state, then its key check is held: the apply below runs in between.
  HeldAnswer plan_reads(sb, 1, [](const dbform::SimRequest& r) { return r.method == "GET" && r.path == "/auth/info"; });
  auto plan = sb.start({"plan", "--detailed-exitcode"});
  REQUIRE(plan_reads.wait());
  // The apply journals `search`, sends its create and is held before the answer: it exists, listed,
  // and the state records it without an id.
  HeldAnswer create(sb, 1, [](const dbform::SimRequest& r) { return r.method == "POST" && r.path.ends_with("/services"); });
  auto apply = sb.start({"apply", "--auto-approve", "--poll-interval", "100ms"});
  REQUIRE(create.wait());
  plan_reads.release();
  RunResult planned = plan->wait();
  INFO(planned.describe());
  CHECK(planned.exit_code == 2);  // changes (the apply's create, to be adopted), no conflict
  CHECK(!contains(planned.all(), "conflict"));
  CHECK(!contains(planned.all(), "dbform import"));
  create.release();
  RunResult applied = apply->wait();
  INFO(applied.describe());
  CHECK(applied.exit_code == 0);
  CHECK(sb.sim().all_services().size() == 4);
  CHECK(sb.run({"plan", "--detailed-exitcode"}).exit_code == 0);
}
