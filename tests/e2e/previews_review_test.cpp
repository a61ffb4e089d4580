// Previews under trouble: what `preview down`, `sweep` and `up` must not do
// under lost answers, failures and lagging lists, through the real binary against the simulator.
#include "previews_common.h"

using namespace e2e;

namespace {

// Writes `state` as the state file, its journal folded in (as a hand edit or an older run leaves it).
void write_state(Sandbox& sb, const json& state) {
  sb.write("dbform.state.json", state.dump(2));
  fs::remove(sb.dir() / "dbform.state.json.journal");
}

// `preview up NAME` killed once its fork of orders was sent: the state keeps the intent (no id),
// the simulator the fork. The intent is dated `intent_at` (the journal folded in).
void killed_after_fork(Sandbox& sb, const std::string& name, const std::string& intent_at) {
  killed_once_forked(sb, {"up", name});
  json state = sb.state();
  for (auto& r : state["resources"])
    if (r["address"] == preview_address(name, "orders")) {
      REQUIRE(r["create_pending"] == true);
      r["created_at"] = intent_at;
    }
  write_state(sb, state);
  REQUIRE(named(sb, "orders-" + name) == 1);
}

}  // namespace

TEST_CASE("e2e: previews review: down looks a fork of unknown outcome up across the settle window - a lagging list does not make it forgotten") {
  Sandbox sb;
  applied(sb, preview_manifest("[orders]"));
  killed_after_fork(sb, "pr-1", "2026-01-01T00:00:00Z");  // long before the settle window
  using Kind = dbform::RouteFault::Kind;
  const long long lists = sb.count(kListServices);
  sb.sim().set_route_faults({{kListServices, Kind::EmptyList, lists + 1, 1}});  // the first list lags
  RunResult down = preview(sb, {"down", "pr-1", "--settle-window", "1s"});
  INFO(down.describe() << "\nfaults: " << sb.sim().fault_counts().dump());
  CHECK(down.exit_code == 0);
  CHECK(named(sb, "orders-pr-1") == 0);  // deleted, not left running unrecorded
  CHECK(sb.sim().fault_counts().value("list answered empty: " + kListServices, 0) == 1);  // down met the lag
  CHECK(sb.count(kListServices) >= lists + 2);  // and looked again after it
  CHECK(find_resource(sb.state(), preview_address("pr-1", "orders")).is_null());
}

TEST_CASE("e2e: previews review: down never deletes a namesake that is not provably the fork - it refuses and keeps the record") {
  Sandbox sb;
  applied(sb, preview_manifest("[orders]"));
  killed_after_fork(sb, "pr-1", "2099-01-01T00:00:00Z");  // the service named orders-pr-1 is older than the intent
  const json before = sb.counts();
  RunResult down = preview(sb, {"down", "pr-1", "--settle-window", "0s"});
  INFO(down.describe());
  CHECK(down.exit_code == 1);
  CHECK(contains(down.err, "is not provably this preview's fork"));
  CHECK(contains(down.err, "before this fork's intent"));
  CHECK(writes_of(calls_since(before, sb.counts())) == json::object());
  CHECK(named(sb, "orders-pr-1") == 1);
  CHECK(find_resource(sb.state(), preview_address("pr-1", "orders")).is_object());
}

TEST_CASE("e2e: previews review: a fork that became READY gets its own password even when another fork of the preview failed") {
  dbform::SimConfig config = default_sim_config();
  config.faults.deleted = {"billing-pr-1"};  // billing's fork ends DELETED instead of READY
  Sandbox sb(config);
  applied(sb, preview_manifest("[orders, billing]"));
  RunResult up = preview(sb, {"up", "pr-1"});
  INFO(up.describe());
  CHECK(up.exit_code == 1);
  const json state = sb.state();
  const json rec = find_resource(state, preview_address("pr-1", "orders"));
  REQUIRE(rec.is_object());
  CHECK(rec["settings"]["preview"]["password_rotated"] == true);
  CHECK(rec["initial_password"] == sb.sim().current_password(rec["id"]));
  CHECK(rec["initial_password"] != find_resource(state, service_address("orders"))["initial_password"]);
}

TEST_CASE("e2e: previews review: output - connect and the env report refuse a fork whose password is not its own yet - also of a service dropped from the block") {
  Sandbox sb;
  applied(sb, preview_manifest("[orders, billing]"));
  REQUIRE(preview(sb, {"up", "pr-1"}).exit_code == 0);
  // As a run stopped between the fork and its rotation leaves it; billing then dropped from the block.
  json state = sb.state();
  for (auto& r : state["resources"])
    if (r["address"] == preview_address("pr-1", "billing")) r["settings"]["preview"]["password_rotated"] = false;
  write_state(sb, state);
  sb.write("dbform.yaml", preview_manifest("[orders]"));
  const std::string address = preview_address("pr-1", "billing");
  const std::string password = find_resource(state, address)["initial_password"];
  const std::string finish = "run `dbform preview up pr-1` to finish it";
  for (const std::vector<std::string>& args :
       {std::vector<std::string>{"output", address + ".password"}, {"output", address + ".connection_string"},
        {"output", address, "--format", "env"}, {"output", address, "--format", "pgpass"},
        {"connect", address, "--check"}}) {
    RunResult r = sb.run(args);
    INFO(r.describe());
    CHECK(r.exit_code != 0);
    CHECK(contains(r.err, finish));
    CHECK(!contains(r.all(), password));
  }
  RunResult all = sb.run({"output", "--format", "env"});  // every other record's lines, never that one's
  CHECK(!contains(all.all(), password));
  CHECK(contains(all.err, finish));
  // up finishes it, the dropped service's fork included; then it is reported and handed out.
  const json before = sb.counts();
  RunResult up = preview(sb, {"up", "pr-1", "--format", "env"});
  INFO(up.describe());
  CHECK(up.exit_code == 0);
  CHECK(writes_of(calls_since(before, sb.counts())) == json{{kUpdatePassword, 1}});
  CHECK(contains(up.out, "DATABASE_URL_BILLING="));
  const json rec = find_resource(sb.state(), address);
  CHECK(rec["initial_password"] == sb.sim().current_password(rec["id"]));
  CHECK(sb.run({"output", address + ".password"}).exit_code == 0);
}

TEST_CASE("e2e: previews review: up --reset runs every check that can refuse before it deletes anything") {
  Sandbox sb;
  applied(sb, preview_manifest("[orders, billing]"));
  REQUIRE(preview(sb, {"up", "pr-1"}).exit_code == 0);
  const json state = sb.state();
  auto refused = [&](const std::string& says) {
    const json before = sb.counts();
    RunResult reset = preview(sb, {"up", "pr-1", "--reset"});
    INFO(reset.describe());
    CHECK(reset.exit_code == 1);
    CHECK(contains(reset.err, says));
    CHECK(contains(reset.err, "nothing was"));
    CHECK(writes_of(calls_since(before, sb.counts())) == json::object());
    CHECK(named(sb, "orders-pr-1") + named(sb, "billing-pr-1") == 2);
    CHECK(sb.state()["resources"] == state["resources"]);
  };
  // A live check: the source paused outside dbform (the state still says READY).
  const std::string orders_id = find_resource(state, service_address("orders"))["id"];
  REQUIRE(sb.sim().console(orders_id, "stop", "").status == 200);
  refused("its service `orders` is PAUSED now, not READY");
  REQUIRE(sb.sim().console(orders_id, "start", "").status == 200);
  // A fork that is protected: none of the forks is deleted.
  json protected_state = state;
  for (auto& r : protected_state["resources"])
    if (r["address"] == preview_address("pr-1", "billing")) r["deletion_protection"] = true;
  write_state(sb, protected_state);
  const json before = sb.counts();
  RunResult reset = preview(sb, {"up", "pr-1", "--reset"});
  INFO(reset.describe());
  CHECK(reset.exit_code == 1);
  CHECK(contains(reset.err, "is protected (deletion_protection: true, recorded)"));
  CHECK(sb.counts() == before);  // refused from the state alone: not one call
  CHECK(named(sb, "orders-pr-1") + named(sb, "billing-pr-1") == 2);
}

TEST_CASE("e2e: previews review: up does not report a preview one of whose forks is being deleted - it refuses and says how to finish") {
  Sandbox sb;
  applied(sb, preview_manifest("[orders, billing]"));
  REQUIRE(preview(sb, {"up", "pr-1"}).exit_code == 0);
  for (const char* status : {"", "DELETING"}) {
    INFO(status);
    json state = sb.state();  // as a `preview down` killed after its delete was journaled leaves it
    for (auto& r : state["resources"])
      if (r["address"] == preview_address("pr-1", "billing")) {
        r["pending_call"] = {{"call", "delete"}};
        if (*status) r["status"] = status;
      }
    write_state(sb, state);
    const json before = sb.counts();
    RunResult up = preview(sb, {"up", "pr-1", "--format", "env"});
    INFO(up.describe());
    CHECK(up.exit_code == 1);
    CHECK(contains(up.err, "is being deleted"));
    CHECK(contains(up.err, "`dbform preview down pr-1` finishes it"));
    CHECK(up.out.empty());
    CHECK(sb.counts() == before);
  }
}

namespace {

// acme-prod (orders) and acme-dev (web), each with a `previews:` block whose previews expire at once.
Sandbox& with_two_projects(Sandbox& sb) {
  const std::string block = "    previews:\n      services: [%]\n      strategy: NOW\n      ttl: 1ms\n      max: 5\n";
  auto with = [&](const std::string& service) { return std::string(block).replace(block.find('%'), 1, service); };
  applied(sb, manifest({}, {service_yaml("orders")}) + with("orders") + manifest({}, {service_yaml("web")}, kDev)
                  .substr(std::string("version: 1\nprojects:\n").size()) + with("web"));
  return sb;
}

// Previews p1 (acme-prod), d1 (acme-dev) and p2 (acme-prod), created in that order a second apart.
void three_previews(Sandbox& sb) {
  REQUIRE(preview(sb, {"up", "p1", "--project", kProject}).exit_code == 0);
  REQUIRE(preview(sb, {"up", "d1", "--project", kDev}).exit_code == 0);
  REQUIRE(preview(sb, {"up", "p2", "--project", kProject}).exit_code == 0);
  json state = sb.state();
  for (auto& r : state["resources"])
    for (const auto& [name, at] : {std::pair("p1", "01"), std::pair("d1", "02"), std::pair("p2", "03")})
      if (r["name"].get<std::string>().ends_with(std::string("-") + name)) r["created_at"] = "2026-01-01T00:00:" + std::string(at) + "Z";
  write_state(sb, state);
}

}  // namespace

TEST_CASE("e2e: previews review: sweep goes oldest first across projects - a preview whose delete fails does not spend the budget") {
  Sandbox sb(two_keys());
  sb.env["DBFORM_API_KEY_ACME_DEV"] = kDevKey;
  with_two_projects(sb);
  three_previews(sb);
  using Kind = dbform::RouteFault::Kind;
  sb.sim().set_route_faults({{kDeleteService, Kind::Refuse, sb.count(kDeleteService) + 1, 1}});  // p1's delete
  // One delete: p1's fails and costs nothing, so it goes to d1, older than p2 but in the project
  // the state lists second (in the state's order p2 would take it).
  RunResult sweep = preview(sb, {"sweep", "--max-deletes", "1"});
  INFO(sweep.describe());
  CHECK(sweep.exit_code == 0);
  CHECK(named(sb, "orders-p1") == 1);  // refused: left for the next sweep
  CHECK(named(sb, "web-d1") == 0);     // the budget p1's failure did not spend
  CHECK(named(sb, "orders-p2") == 1);  // younger than d1: left for the next sweep
  CHECK(contains(sweep.out, kProject + "/previews/p1: expired"));
  CHECK(contains(sweep.out, kProject + "/previews/p2: expired"));
}

TEST_CASE("e2e: previews review: sweep skips a project whose key is missing or rejected and sweeps the others - exit 0") {
  Sandbox sb(two_keys());
  sb.env["DBFORM_API_KEY_ACME_DEV"] = kDevKey;
  with_two_projects(sb);
  three_previews(sb);
  // Rejected: acme-dev's variable holds acme-prod's key.
  RunResult rejected = preview(sb, {"sweep", "--max-deletes", "1"}, {{"DBFORM_API_KEY_ACME_DEV", kKey}});
  INFO(rejected.describe());
  CHECK(rejected.exit_code == 0);
  CHECK(named(sb, "orders-p1") == 0);
  CHECK(named(sb, "web-d1") == 1);
  CHECK(contains(rejected.out, kDev + "/previews/d1: expired"));
  CHECK(contains(rejected.out, "skipped: "));
  // Missing: no key for acme-dev at all.
  sb.env.erase("DBFORM_API_KEY_ACME_DEV");
  sb.env["DBFORM_API_KEY_ACME_PROD"] = sb.env["DBFORM_API_KEY"];
  sb.env.erase("DBFORM_API_KEY");
  RunResult missing = preview(sb, {"sweep"});
  INFO(missing.describe());
  CHECK(missing.exit_code == 0);
  CHECK(named(sb, "orders-p2") == 0);
  CHECK(named(sb, "web-d1") == 1);
  CHECK(contains(missing.out, kDev + "/previews/d1: expired"));
  CHECK(contains(missing.out, "skipped: "));
}

TEST_CASE("e2e: previews review: up right after the apply that made its services - a lagging list does not refuse it") {
  dbform::SimConfig config = default_sim_config();
  config.faults.list_lag = std::chrono::minutes(10);  // no list shows what this test makes
  Sandbox sb(config);
  applied(sb, preview_manifest("[orders, billing]"));
  const json before = sb.counts();
  RunResult up = preview(sb, {"up", "pr-1"});
  INFO(up.describe());
  CHECK(up.exit_code == 0);
  CHECK(!contains(up.all(), "deleted outside"));
  const json calls = calls_since(before, sb.counts());
  INFO(calls.dump());
  CHECK(calls.value(kListServices, 0) == 1);  // listed, neither source shown
  CHECK(calls.value(kFork, 0) == 2);
  check_fork(sb, "pr-1", "orders");
  check_fork(sb, "pr-1", "billing");
}

TEST_CASE("e2e: previews review: an expiry edited far ahead (2300, 9999) keeps every command working - and the preview") {
  Sandbox sb;
  applied(sb, preview_manifest("[orders, billing]"));
  REQUIRE(preview(sb, {"up", "pr-1"}).exit_code == 0);
  json state = sb.state();
  for (auto& r : state["resources"]) {
    if (r["address"] == preview_address("pr-1", "orders")) r["settings"]["preview"]["expires_at"] = "9999-12-31T23:59:59Z";
    if (r["address"] == preview_address("pr-1", "billing")) r["settings"]["preview"]["expires_at"] = "2300-01-01T00:00:00Z";
  }
  write_state(sb, state);
  for (const std::vector<std::string>& args : std::vector<std::vector<std::string>>{
           {"plan", "--detailed-exitcode"}, {"apply", "--auto-approve"}, {"state", "list"}, {"preview", "list"}}) {
    RunResult r = sb.run(args);
    INFO(r.describe());
    CHECK(r.exit_code == 0);
  }
  RunResult list = sb.run({"preview", "list"});
  CHECK(contains(list.out, "2300-01-01T00:00:00Z"));  // the preview's expiry: its earliest fork's
  CHECK(!contains(list.out, "expired"));
  RunResult sweep = preview(sb, {"sweep"});
  INFO(sweep.describe());
  CHECK(sweep.exit_code == 0);
  CHECK(named(sb, "orders-pr-1") == 1);  // not expired: kept
  CHECK(named(sb, "billing-pr-1") == 1);
}

TEST_CASE("e2e: previews review: list takes -f as every subcommand does - the manifests are read, the list is the state's") {
  Sandbox sb;
  applied(sb, preview_manifest("[orders]"));
  REQUIRE(preview(sb, {"up", "pr-1"}).exit_code == 0);
  const long long before = sb.total_requests();
  RunResult listed = sb.run({"preview", "list", "-f", "dbform.yaml"});
  INFO(listed.describe());
  CHECK(listed.exit_code == 0);
  CHECK(contains(listed.out, kProject + "/previews/pr-1"));
  RunResult missing = sb.run({"preview", "list", "-f", "nope.yaml"});
  INFO(missing.describe());
  CHECK(missing.exit_code == 1);
  CHECK(contains(missing.err, "nope.yaml"));
  CHECK(sb.total_requests() == before);  // from the state alone
}
