// Previews, a database per pull request (docs/previews.md), through the real binary against
// the simulator: what each of `preview up`, `down`, `list` and `sweep` costs in API calls, every
// guard refusing with no call that changes anything, expiry recorded at creation (a ttl of 1ms
// expires at once: no sleeps), prune never touching previews, and never two forks under lost
// answers or a SIGKILL after the fork was sent. None of these can pass on main: the command is new.
#include "previews_common.h"
#include "util/clock.h"

using namespace e2e;


TEST_CASE("e2e: previews: up forks each listed service once as DEV with its expiry and its own password - and up again makes no call") {
  Sandbox sb;
  applied(sb, preview_manifest("[orders, billing]", "72h", 3, "      cpu_millis: 500\n      memory_gbs: 2\n"));
  const json before = sb.counts();
  RunResult up = preview(sb, {"up", "pr-1"});
  INFO(up.describe());
  REQUIRE(up.exit_code == 0);
  const json calls = calls_since(before, sb.counts());
  INFO(calls.dump());
  CHECK(writes_of(calls) == json{{kFork, 2}, {kUpdatePassword, 2}});  // no create, no delete, no other update
  CHECK(calls.at(kAuthInfo) == 1);      // the key, once
  CHECK(calls.at(kListServices) == 1);  // the fork names are free
  CHECK(calls.at(kGetService) >= 2);    // watched until READY
  check_fork(sb, "pr-1", "orders");
  check_fork(sb, "pr-1", "billing");
  CHECK(named(sb, "analytics-pr-1") == 0);
  // Tagged DEV, sized by the block, never protected: PROD and deletion protection are not copied.
  json sent = json::parse(sb.sim().last_body(kFork));  // the forks go in parallel: either is last
  CHECK((sent["name"] == "orders-pr-1" || sent["name"] == "billing-pr-1"));
  sent.erase("name");
  CHECK(sent == json{{"fork_strategy", "NOW"}, {"cpu_millis", "500"}, {"memory_gbs", "2"}, {"environment_tag", "DEV"}});
  for (const auto& s : sb.sim().all_services())
    if (s["name"] == "orders-pr-1") CHECK(s["metadata"]["environment"] == "DEV");
  json rec = find_resource(sb.state(), preview_address("pr-1", "orders"));
  CHECK(rec["deletion_protection"].is_null());
  const auto created = dbform::parse_utc(rec["created_at"]), expires = dbform::parse_utc(rec["settings"]["preview"]["expires_at"]);
  REQUIRE((created && expires));
  // The expiry is the ttl from the moment `up` planned the preview; the creation time is recorded
  // with the fork's intent, a moment later: in a later second once in a while (both are whole seconds).
  const auto ttl_left = *expires - *created;
  CHECK(ttl_left <= std::chrono::hours(72));
  CHECK(ttl_left >= std::chrono::hours(72) - std::chrono::seconds(2));
  CHECK(contains(up.out, "orders-pr-1"));
  CHECK(!contains(up.all(), rec["initial_password"].get<std::string>()));

  // Again: nothing changes, not one call, and it is reported again.
  const json after = sb.counts();
  const json state = sb.state();
  RunResult again = preview(sb, {"up", "pr-1"});
  INFO(again.describe());
  CHECK(again.exit_code == 0);
  CHECK(sb.counts() == after);
  CHECK(sb.state()["resources"] == state["resources"]);
  CHECK(contains(again.out, "orders-pr-1"));

  // output and connect's address, list, state list and show take preview addresses.
  RunResult url = sb.run({"output", preview_address("pr-1", "orders") + ".connection_string"});
  CHECK(url.exit_code == 0);
  CHECK(contains(url.out, "postgres://tsdbadmin:" + rec["initial_password"].get<std::string>() + "@"));
  RunResult list = sb.run({"preview", "list"});
  CHECK(list.exit_code == 0);
  CHECK(contains(list.out, kProject + "/previews/pr-1"));
  CHECK(contains(list.out, "orders READY, billing READY"));
  CHECK(contains(sb.run({"state", "list"}).out, preview_address("pr-1", "billing")));
  CHECK(sb.run({"state", "show", preview_address("pr-1", "billing")}).exit_code == 0);
  CHECK(sb.counts() == after);  // list, output and state read the state alone
}

TEST_CASE("e2e: previews: the markdown report holds no password - env holds the shell-quoted URLs - json parses") {
  Sandbox sb;
  applied(sb, preview_manifest("[orders]"));
  RunResult md = preview(sb, {"up", "pr-7", "--format", "markdown"});
  INFO(md.describe());
  REQUIRE(md.exit_code == 0);
  const json rec = find_resource(sb.state(), preview_address("pr-7", "orders"));
  const std::string password = rec["initial_password"];
  CHECK(!contains(md.all(), password));
  CHECK(contains(md.out, "| `orders` | `orders-pr-7` | `READY` | `" + rec["endpoint"]["host"].get<std::string>()));
  CHECK(contains(md.out, "dbform output " + preview_address("pr-7", "orders") + ".connection_string"));
  CHECK(contains(md.out, "dbform connect " + preview_address("pr-7", "orders")));
  CHECK(contains(md.out, rec["settings"]["preview"]["expires_at"].get<std::string>()));
  RunResult env = preview(sb, {"up", "pr-7", "--format", "env"});
  CHECK(env.exit_code == 0);
  CHECK(env.out == "DATABASE_URL_ORDERS='postgres://tsdbadmin:" + password + "@" +
                       rec["endpoint"]["host"].get<std::string>() + ":" +
                       std::to_string(rec["endpoint"]["port"].get<int>()) + "/tsdb?sslmode=require'\n");
  RunResult js = preview(sb, {"up", "pr-7", "--format", "json"});
  REQUIRE(js.exit_code == 0);
  const json doc = json::parse(js.out);
  CHECK(doc["name"] == "pr-7");
  CHECK(doc["services"][0]["address"] == preview_address("pr-7", "orders"));
  CHECK(!contains(js.out, password));
}

TEST_CASE("e2e: previews: every guard refuses before any call that changes anything - and changes nothing") {
  Sandbox sb;
  applied(sb, preview_manifest("[orders]", "72h", 2, "", "        paused: true\n"));  // analytics PAUSED
  REQUIRE(preview(sb, {"up", "pr-1"}).exit_code == 0);
  REQUIRE(preview(sb, {"up", "pr-2"}).exit_code == 0);
  const json state = sb.state();
  auto refused = [&](const std::vector<std::string>& args, const std::string& says, bool may_read = false) {
    const json before = sb.counts();
    RunResult r = preview(sb, args);
    INFO(r.describe());
    CHECK(r.exit_code == 1);
    CHECK(contains(r.err, says));
    CHECK(contains(r.err, "nothing was"));
    if (may_read) CHECK(writes_of(calls_since(before, sb.counts())) == json::object());
    else CHECK(sb.counts() == before);
    CHECK(sb.state()["resources"] == state["resources"]);
  };
  // max: 2, and two exist: named with their ages.
  refused({"up", "pr-3"}, "has 2 previews, the most its `previews:` block allows (max: 2): pr-1 (");
  refused({"up", "PR-3"}, "is not a preview name");
  refused({"up", std::string(33, 'a')}, "is not a preview name");
  refused({"down", "pr_1"}, "is not a preview name");
  refused({"sweep", "--keep", "Pr1"}, "is not a preview name");
  sb.write("dbform.yaml", preview_manifest("[orders, analytics]", "72h", 5, "", "        paused: true\n"));
  refused({"up", "pr-3"}, "its service `analytics` is not READY (status PAUSED)");
  sb.write("dbform.yaml", preview_manifest("[orders, extra]", "72h", 5, "", "      - name: extra\n"));
  refused({"up", "pr-3"}, "its service `extra` is not recorded");
  sb.write("dbform.yaml", preview_manifest("[orders]", "72h", 5, "", "      - name: orders-pr-3\n"));
  refused({"up", "pr-3"}, "the fork's name `orders-pr-3` is declared as a service");
  // Taken by a service nobody recorded: the live list (reads only) finds it, nothing is forked.
  sb.write("dbform.yaml", preview_manifest("[orders]", "72h", 5));
  console_service(sb, {{"name", "orders-pr-4"}, {"cpu_millis", "1000"}, {"memory_gbs", "4"}});
  refused({"up", "pr-4"}, "a service named `orders-pr-4` exists already", true);
  CHECK(named(sb, "orders-pr-4") == 1);
}

TEST_CASE("e2e: previews: --reset deletes and forks again - down deletes only the preview's forks - down again makes no call") {
  Sandbox sb;
  applied(sb, preview_manifest());
  REQUIRE(preview(sb, {"up", "pr-1"}).exit_code == 0);
  REQUIRE(preview(sb, {"up", "pr-2"}).exit_code == 0);
  const std::string old_id = find_resource(sb.state(), preview_address("pr-1", "orders"))["id"];
  json before = sb.counts();
  RunResult reset = preview(sb, {"up", "pr-1", "--reset"});
  INFO(reset.describe());
  REQUIRE(reset.exit_code == 0);
  json calls = calls_since(before, sb.counts());
  CHECK(calls.at(kDeleteService) == 2);
  CHECK(calls.at(kFork) == 2);
  CHECK(calls.at(kUpdatePassword) == 2);
  CHECK(find_resource(sb.state(), preview_address("pr-1", "orders"))["id"] != old_id);
  check_fork(sb, "pr-1", "orders");

  before = sb.counts();
  RunResult down = preview(sb, {"down", "pr-1"});
  INFO(down.describe());
  REQUIRE(down.exit_code == 0);
  calls = calls_since(before, sb.counts());
  CHECK(writes_of(calls) == json{{kDeleteService, 2}});
  CHECK(named(sb, "orders-pr-1") == 0);
  CHECK(named(sb, "billing-pr-1") == 0);
  CHECK(named(sb, "orders-pr-2") == 1);
  CHECK(find_resource(sb.state(), preview_address("pr-1", "orders")).is_null());
  CHECK(find_resource(sb.state(), preview_address("pr-2", "orders")).is_object());
  CHECK(sb.sim().all_services().size() == 5);  // three declared, pr-2's two
  before = sb.counts();
  RunResult again = preview(sb, {"down", "pr-1"});
  CHECK(again.exit_code == 0);
  CHECK(contains(again.out, "nothing to delete"));
  CHECK(sb.counts() == before);
}

TEST_CASE("e2e: previews: sweep deletes what expired (expiry fixed at creation) - and with --keep what is not kept") {
  Sandbox sb;
  applied(sb, preview_manifest("[orders]", "1ms"));
  REQUIRE(preview(sb, {"up", "old"}).exit_code == 0);  // expires 1ms after its creation
  applied(sb, preview_manifest("[orders]", "72h"));
  REQUIRE(preview(sb, {"up", "open"}).exit_code == 0);
  REQUIRE(preview(sb, {"up", "closed"}).exit_code == 0);
  // A later ttl applies to new previews only: `open` stays, `old` expired anyway.
  applied(sb, preview_manifest("[orders]", "1ms"));
  json before = sb.counts();
  RunResult sweep = preview(sb, {"sweep"});
  INFO(sweep.describe());
  CHECK(sweep.exit_code == 0);
  CHECK(writes_of(calls_since(before, sb.counts())) == json{{kDeleteService, 1}});
  CHECK(named(sb, "orders-old") == 0);
  CHECK(named(sb, "orders-open") == 1);
  CHECK(contains(sweep.out, "deleted " + preview_address("old", "orders")));
  CHECK(contains(sweep.out, kProject + "/previews/open: not expired"));
  // --keep names the open pull requests: the others go, expired or not.
  before = sb.counts();
  RunResult kept = preview(sb, {"sweep", "--keep", "open"});
  INFO(kept.describe());
  CHECK(kept.exit_code == 0);
  CHECK(writes_of(calls_since(before, sb.counts())) == json{{kDeleteService, 1}});
  CHECK(named(sb, "orders-closed") == 0);
  CHECK(named(sb, "orders-open") == 1);
  // Nothing due: no call at all.
  before = sb.counts();
  CHECK(preview(sb, {"sweep", "--keep", "open"}).exit_code == 0);
  CHECK(sb.counts() == before);
}

TEST_CASE("e2e: previews: sweep deletes at most --max-deletes services oldest first and lists the rest - --keep does not extend an expiry") {
  Sandbox sb;
  applied(sb, preview_manifest("[orders, billing]", "1ms", 5));
  for (const char* name : {"pr-1", "pr-2", "pr-3"}) REQUIRE(preview(sb, {"up", name}).exit_code == 0);
  json before = sb.counts();
  RunResult first = preview(sb, {"sweep", "--keep", "pr-3"});  // pr-3 expired: kept by name, deleted all the same
  INFO(first.describe());
  CHECK(first.exit_code == 0);
  CHECK(writes_of(calls_since(before, sb.counts())) == json{{kDeleteService, 3}});  // the default limit
  CHECK(named(sb, "orders-pr-1") + named(sb, "billing-pr-1") == 0);  // the oldest went first
  CHECK(named(sb, "orders-pr-2") + named(sb, "billing-pr-2") == 1);
  CHECK(contains(first.out, "Left for the next sweep:"));
  CHECK(contains(first.out, kProject + "/previews/pr-2: expired"));
  CHECK(contains(first.out, kProject + "/previews/pr-3: expired"));
  before = sb.counts();
  RunResult second = preview(sb, {"sweep", "--max-deletes", "10"});
  CHECK(second.exit_code == 0);
  CHECK(writes_of(calls_since(before, sb.counts())) == json{{kDeleteService, 3}});
  CHECK(sb.run({"preview", "list"}).out == "No previews are recorded.\n");
}

TEST_CASE("e2e: previews: never orphans of a plan - never deleted by apply --prune - left to down when the block goes") {
  Sandbox sb;
  applied(sb, preview_manifest());
  REQUIRE(preview(sb, {"up", "pr-1"}).exit_code == 0);
  RunResult plan = sb.run({"plan", "--prune", "--detailed-exitcode"});
  INFO(plan.describe());
  CHECK(plan.exit_code == 0);
  CHECK(!contains(plan.all(), "pr-1"));
  // The block removed (and a declared service with it): prune deletes that one, never the previews.
  sb.write("dbform.yaml", manifest({}, {service_yaml("orders") + "        environment_tag: PROD\n        deletion_protection: true\n",
                                        service_yaml("billing")}));
  const json before = sb.counts();
  RunResult prune = sb.apply({"--prune"});
  INFO(prune.describe());
  CHECK(prune.exit_code == 0);
  CHECK(writes_of(calls_since(before, sb.counts())) == json{{kDeleteService, 1}});
  CHECK(named(sb, "analytics") == 0);
  CHECK(named(sb, "orders-pr-1") == 1);
  CHECK(named(sb, "billing-pr-1") == 1);
  RunResult down = preview(sb, {"down", "pr-1"});
  CHECK(down.exit_code == 0);
  CHECK(named(sb, "orders-pr-1") + named(sb, "billing-pr-1") == 0);
}

TEST_CASE("e2e: previews: fork answers lost (a closed connection or a gateway's 504) are looked up - never forked twice") {
  const auto kind = GENERATE(dbform::RouteFault::Kind::LoseAnswer, dbform::RouteFault::Kind::GatewayTimeout);
  Sandbox sb;
  applied(sb, preview_manifest());
  sb.sim().set_route_faults({{kFork, kind, 1, 2}});  // both forks' answers
  const json before = sb.counts();
  RunResult up = preview(sb, {"up", "pr-1"});
  INFO(up.describe());
  CHECK(up.exit_code == 0);
  CHECK(calls_since(before, sb.counts())[kFork] == 2);
  check_fork(sb, "pr-1", "orders");
  check_fork(sb, "pr-1", "billing");
  CHECK(contains(up.all(), "adopted"));
  CHECK(sb.sim().fault_counts().size() == 1);  // the fault happened (twice), and nothing else did
}

TEST_CASE("e2e: previews: up killed with SIGKILL once the fork was sent forks nothing again when run again") {
  Sandbox sb;
  applied(sb, preview_manifest("[orders]"));
  killed_once_forked(sb, {"up", "pr-1"});
  json rec = find_resource(sb.state(), preview_address("pr-1", "orders"));
  REQUIRE(rec.is_object());
  CHECK(rec["create_pending"] == true);  // the intent was on disk before the fork was sent
  RunResult again = preview(sb, {"up", "pr-1", "--settle-window", "2s"});
  INFO(again.describe());
  CHECK(again.exit_code == 0);
  CHECK(sb.count(kFork) == 1);
  check_fork(sb, "pr-1", "orders");
}

TEST_CASE("e2e: previews: a sealed state keeps preview records through up - list - output and down, and only up needs the key") {
  Sandbox sb;
  const std::map<std::string, std::string>& sealed = kSealingKey;
  sb.write("dbform.yaml", preview_manifest("[orders]"));
  RunResult a = sb.apply({}, sealed);
  REQUIRE(a.exit_code == 0);
  const long long before = sb.total_requests();
  RunResult keyless = preview(sb, {"up", "pr-1"});
  CHECK(keyless.exit_code != 0);
  CHECK(contains(keyless.err, "preview up needs the state's key"));
  CHECK(sb.total_requests() == before);
  REQUIRE(preview(sb, {"up", "pr-1"}, sealed).exit_code == 0);
  const std::string password =
      json::parse(sb.run({"output", "--json", "--show-secrets"}, sealed).out)[preview_address("pr-1", "orders")]["password"];
  CHECK(!contains(sb.read("dbform.state.json"), password));  // sealed; the addresses read without the key
  CHECK(contains(sb.run({"preview", "list"}).out, kProject + "/previews/pr-1"));
  CHECK(sb.run({"output", preview_address("pr-1", "orders") + ".host"}).exit_code == 0);
  CHECK(preview(sb, {"down", "pr-1"}).exit_code == 0);
  CHECK(named(sb, "orders-pr-1") == 0);
}

TEST_CASE("e2e: previews: bash completes preview names for up - down and sweep --keep - and output completes their addresses") {
  Sandbox sb;
  applied(sb, preview_manifest("[orders]"));
  REQUIRE(preview(sb, {"up", "pr-12"}).exit_code == 0);
  REQUIRE(preview(sb, {"up", "pr-13"}).exit_code == 0);
  const std::vector<std::string> got = bash_completions(
      sb, "t dbform preview do; t dbform preview down ''; t dbform preview sweep --keep pr-1; t dbform output " +
              kProject + "/previews/pr-12/services/o\n");
  REQUIRE(got.size() == 4);
  CHECK(got[0] == "down");
  CHECK(got[1] == "pr-12 pr-13");
  CHECK(got[2] == "pr-12 pr-13");
  CHECK(got[3] == preview_address("pr-12", "orders"));
}

TEST_CASE("e2e: previews: state mv refuses a preview's fork and changes nothing") {
  Sandbox sb;
  applied(sb, preview_manifest("[orders]"));
  REQUIRE(preview(sb, {"up", "pr-1"}).exit_code == 0);
  const json state = sb.state();
  RunResult mv = sb.run({"state", "mv", preview_address("pr-1", "orders"), "orders-copy"});
  INFO(mv.describe());
  CHECK(mv.exit_code == 1);
  CHECK(contains(mv.err, "is a preview's fork"));
  CHECK(sb.state() == state);
  CHECK(sb.run({"preview", "list"}).exit_code == 0);
}
