// What a newcomer met in the secure pull-request flow, through the real binary: each
// message says the first thing to do, and each suggestion works as pasted.
#include "../pg/test_server.h"
#include "pg_roles.h"
#include "postgres_sim.h"
#include "previews_common.h"
#include "util/text.h"

using namespace e2e;

namespace {

}  // namespace

TEST_CASE("e2e: newcomer: pg: the planner's role without the key over a sealed state is told of the secrets table "
          "first, then of the key",
          "[pg]") {
  const std::string database_url = pgtest::fresh_database("newcomer_sealed");
  Sandbox sb;
  RoleCheckout owner(sb, "owner", database_url);
  owner.env.insert(kSealingKey.begin(), kSealingKey.end());
  owner.write_manifest(manifest({}, {service_yaml("orders")}));
  RunResult first = owner.apply();
  INFO(first.describe());
  REQUIRE(first.exit_code == 0);
  dbform::PgConnection admin(database_url);
  const std::string planner = pgtest::unique_name("planner"), applier = pgtest::unique_name("applier");
  grant_roles(admin, planner, applier);
  RoleCheckout pr(sb, "pr", as_role(database_url, planner, "planner-pw"));
  pr.write_manifest(manifest({}, {service_yaml("orders")}));
  const json calls = sb.counts();
  for (const auto& args : std::vector<std::vector<std::string>>{{"output", "orders.password"},
                                                                 {"output", "orders.connection_string"},
                                                                 {"output", "--format", "env"},
                                                                 {"output", "--show-secrets"},
                                                                 {"connect", "orders", "--check"},
                                                                 {"preview", "diff", "pr-7"}}) {
    RunResult r = pr.run(args);
    INFO(dbform::join(args, " ") << "\n" << r.describe());
    CHECK(r.exit_code == 1);
    const size_t table = r.err.find("no access to secrets"), key = r.err.find("DBFORM_STATE_PASSPHRASE");
    REQUIRE(table != std::string::npos);
    CHECK(contains(r.err, "SELECT on dbform_secrets"));
    REQUIRE(key != std::string::npos);
    CHECK(table < key);  // the table first: the key alone would not help this role
    CHECK(!contains(r.err, "needs the state's key:"));
  }
  CHECK(sb.counts() == calls);
  // The applier's role without the key is told of the key alone.
  RoleCheckout main_branch(sb, "main", as_role(database_url, applier, "applier-pw"));
  RunResult keyless = main_branch.run({"output", "orders.password"});
  INFO(keyless.describe());
  CHECK(keyless.exit_code == 1);
  CHECK(contains(keyless.err, "needs the state's key"));
  CHECK(!contains(keyless.err, "no access to secrets"));
}

namespace {

// The `dbform ...` a message suggests, beginning with `start` ("dbform policy check"), run as pasted.
RunResult run_suggestion(Sandbox& sb, const std::string& message, const std::string& start) {
  const size_t at = message.find("`" + start);
  REQUIRE(at != std::string::npos);
  const std::string command = message.substr(at + 1, message.find('`', at + 1) - at - 1);
  INFO("pasted: " << command);
  return sb.run_shell("\"$DBFORM\" " + command.substr(std::string("dbform ").size()));
}

}  // namespace

TEST_CASE("e2e: newcomer: a suggestion carries the rule files, manifests and state the run was given, and works as "
          "pasted") {
  Sandbox sb;
  sb.write("manifests/dbform.yaml", manifest({}, {service_yaml("orders")}));
  sb.write("rules/team a.yaml", "version: 1\nrules:\n  - id: small\n    level: mandatory\n    kind: service\n"
                                "    require: {cpu_millis: {\"<=\": 4000}}\n");
  RunResult applied = sb.run({"apply", "--auto-approve", "-f", "manifests", "--state", "team.state.json"});
  INFO(applied.describe());
  REQUIRE(applied.exit_code == 0);
  RunResult refused = sb.run({"plan", "--refresh-only", "--policy", "rules/team a.yaml", "-f", "manifests", "--state",
                              "team.state.json"});
  INFO(refused.describe());
  REQUIRE(refused.exit_code == 1);
  CHECK(contains(refused.err, "`dbform policy check -f manifests --policy 'rules/team a.yaml' --state team.state.json`"));
  RunResult pasted = run_suggestion(sb, refused.err, "dbform policy check");
  INFO(pasted.describe());
  CHECK(pasted.exit_code == 0);
  CHECK(contains(pasted.out, "1 rule from rules/team a.yaml: no violation"));
  CHECK(!contains(pasted.err, "no rule file"));
  // `apply --refresh-only` takes no rule file: it gets the manifests and the state only.
  CHECK(contains(refused.err, "`dbform apply --refresh-only -f manifests --state team.state.json`"));
}

TEST_CASE("e2e: newcomer: a strategy in a previews block is told LAST_SNAPSHOT or NOW, and a fork's the three") {
  Sandbox sb;
  const std::string services = manifest({}, {service_yaml("orders"),
                                             service_yaml("copy") + "        fork:\n          from: orders\n"
                                                                    "          strategy: lastsnapshot\n"});
  sb.write("dbform.yaml", services + "    previews:\n      services: [orders]\n      strategy: now\n      ttl: 72h\n"
                                     "      max: 3\n");
  RunResult r = sb.run({"validate"});
  INFO(r.describe());
  CHECK(r.exit_code == 1);
  CHECK(contains(r.err, "expected LAST_SNAPSHOT or NOW, found"));
  CHECK(contains(r.err, "did you mean `NOW`?"));
  CHECK(contains(r.err, "expected LAST_SNAPSHOT, NOW or PITR, found"));  // a fork's takes PITR with target_time
  CHECK(contains(r.err, "did you mean `LAST_SNAPSHOT`?"));
}

TEST_CASE("e2e: newcomer: preview diff takes -f as up does and compares the previews of the manifests' projects, and a "
          "diff that compared nothing never reads clean") {
  Sandbox sb(two_keys());
  sb.env["DBFORM_API_KEY_ACME_DEV"] = kDevKey;
  const std::string block = "    previews:\n      services: [%]\n      strategy: NOW\n      ttl: 72h\n      max: 5\n";
  auto with = [&](const std::string& service) { return std::string(block).replace(block.find('%'), 1, service); };
  const std::string prod = manifest({}, {service_yaml("orders")}) + with("orders");
  sb.write("dbform.yaml", prod + manifest({}, {service_yaml("web")}, kDev).substr(std::string("version: 1\nprojects:\n").size()) +
                              with("web"));
  REQUIRE(sb.apply().exit_code == 0);
  REQUIRE(preview(sb, {"up", "pr-1"}).exit_code == 0);  // orders-pr-1 in acme-prod, web-pr-1 in acme-dev
  sb.write("prod/dbform.yaml", prod);

  // The simulator's endpoints take no connection: each fork is named as not compared.
  RunResult diff = sb.run({"preview", "diff", "pr-1", "-f", "prod"});
  INFO(diff.describe());
  CHECK(diff.exit_code == 1);
  CHECK(contains(diff.out, "orders-pr-1 against orders: could not be compared"));
  CHECK(!contains(diff.out, "web-pr-1"));  // acme-dev is not in the manifests named
  CHECK(contains(diff.out, "Nothing was compared: 1 fork(s) could not be read"));
  CHECK(!contains(diff.out, "0 change(s)"));
  RunResult as_json = sb.run({"preview", "diff", "pr-1", "-f", "prod", "--format", "json"});
  INFO(as_json.describe());
  REQUIRE(!as_json.out.empty());
  CHECK(json::parse(as_json.out)["failed"] == true);
  RunResult markdown = sb.run({"preview", "diff", "pr-1", "-f", "prod", "--format", "markdown"});
  CHECK(contains(markdown.out, "**Not every fork was compared**"));

  // Without -f, every project's; --project still narrows; a manifest that is not valid is refused.
  RunResult every = sb.run({"preview", "diff", "pr-1"});
  CHECK(contains(every.out, "orders-pr-1 against orders"));
  CHECK(contains(every.out, "web-pr-1 against web"));
  CHECK(contains(every.out, "Nothing was compared: 2 fork(s) could not be read"));
  RunResult dev = sb.run({"preview", "diff", "pr-1", "-f", "prod", "--project", kDev});
  CHECK(contains(dev.out, "web-pr-1 against web"));
  CHECK(!contains(dev.out, "orders-pr-1"));
  sb.write("bad/dbform.yaml", "version: 1\nprojects: [\n");
  RunResult bad = sb.run({"preview", "diff", "pr-1", "-f", "bad"});
  INFO(bad.describe());
  CHECK(bad.exit_code == 1);
  CHECK(contains(bad.err, "bad/dbform.yaml"));
  CHECK(bad.out.empty());
}

TEST_CASE("e2e: newcomer: postgres: preview diff lists a new table's columns in their declared order, and counts a "
          "fork it could not compare as unknown",
          "[e2e][postgres]") {
  Sandbox sb;
  PostgresSim sim(sb);
  sb.write("dbform.yaml", manifest({}, {service_yaml("orders"), service_yaml("billing")}) +
                              "    previews:\n      services: [orders, billing]\n      strategy: NOW\n      ttl: 72h\n"
                              "      max: 3\n      migrations: db/migrations\n");
  sb.write("db/migrations/0001_events.sql",
           "CREATE TABLE events (id bigint, occurred_at timestamptz NOT NULL, kind text, amount integer);\n");
  RunResult applied = sb.apply();
  INFO(applied.describe());
  REQUIRE(applied.exit_code == 0);
  RunResult up = preview(sb, {"up", "pr-1"});
  INFO(up.describe());
  REQUIRE(up.exit_code == 0);
  RunResult diff = sb.run({"preview", "diff", "pr-1"});
  INFO(diff.describe());
  CHECK(diff.exit_code == 0);
  CHECK(contains(diff.out, "+ table public.events (id bigint, occurred_at timestamp with time zone NOT NULL, kind text, "
                           "amount integer)\n"));
  CHECK(contains(diff.out, "2 change(s), 0 destructive.\n"));

  // billing forgotten: its fork has nothing to be compared with, and the summary says so.
  RunResult forget = sb.run({"state", "rm", "billing"});
  INFO(forget.describe());
  REQUIRE(forget.exit_code == 0);
  RunResult partial = sb.run({"preview", "diff", "pr-1"});
  INFO(partial.describe());
  CHECK(partial.exit_code == 1);
  CHECK(contains(partial.out, "billing-pr-1 against its source: could not be compared"));
  CHECK(contains(partial.out, "1 change(s), 0 destructive in 1 of 2 fork(s); 1 could not be compared, so their changes "
                              "are unknown.\n"));
}

TEST_CASE("e2e: newcomer: a value or flag the parser refuses is said as every other error, with the closest value") {
  Sandbox sb;
  struct Case {
    std::vector<std::string> args;
    std::string says;
  };
  for (const Case& c : std::vector<Case>{
           {{"plan", "--format", "markdwon"}, "Error: --format: `markdwon` is not one of text, json, markdown; did you mean `markdown`?\n"},
           {{"preview", "diff", "pr-1", "--format", "jsno"}, "Error: --format: `jsno` is not one of text, json, markdown; did you mean `json`?\n"},
           {{"--log-level", "debgu", "plan"}, "did you mean `debug`?\n"},
           {{"output", "--format"}, "Error: --format needs a value: one of text, json, env, pgpass\n"},
           {{"plan", "--max-deletes", "x"}, "Error: --max-deletes: expected a whole number, 0 or more, not `x`\n"},
           {{"preview", "up"}, "Error: name is required\n"},
       }) {
    RunResult r = sb.run(c.args);
    INFO(dbform::join(c.args, " ") << "\n" << r.describe());
    CHECK(r.exit_code == 1);
    CHECK(contains(r.err, c.says));
    CHECK(r.err.rfind("Error: ", 0) == 0);
    CHECK(!contains(r.err, "Run with --help"));
    CHECK(contains(r.err, "See `dbform help"));
  }
  CHECK(contains(sb.run({"plan", "--format", "markdwon"}).err, "See `dbform help plan`."));
  RunResult help = sb.run({"plan", "--help"});
  CHECK(help.exit_code == 0);
  CHECK(help.err.empty());
}

TEST_CASE("e2e: newcomer: state mv says what a refreshing plan and a --no-refresh plan each show, and each does") {
  Sandbox sb;
  sb.write("dbform.yaml", manifest({}, {service_yaml("orders")}));
  REQUIRE(sb.apply().exit_code == 0);
  RunResult mv = sb.run({"state", "mv", "orders", "invoices"});
  INFO(mv.describe());
  REQUIRE(mv.exit_code == 0);
  const std::string invoices = service_address("invoices");
  CHECK(contains(mv.out, "the next plan (with or without --no-refresh) shows the rename call"));
  CHECK(contains(mv.out, "a plan shows a conflict there"));
  CHECK(contains(mv.out, "a plan with --no-refresh (the state alone) shows `orders` to be created and `invoices` no "
                         "longer declared"));
  CHECK(contains(mv.out, "`dbform state mv " + invoices + " orders` moves it back"));
  // As said: still declaring orders, a conflict; with --no-refresh, a create and an orphan.
  RunResult refreshed = sb.run({"plan"});
  INFO(refreshed.describe());
  CHECK(contains(refreshed.out, "1 conflict"));
  RunResult state_alone = sb.run({"plan", "--no-refresh"});
  INFO(state_alone.describe());
  CHECK(contains(state_alone.out, "Plan: 1 to create"));
  CHECK(contains(state_alone.out, invoices + " (id "));
  CHECK(contains(state_alone.out, "is recorded but no longer declared"));
  // Applied from the state alone, the name guard refuses the create, and says where the record went
  // (an import of that id would fail: it is recorded already).
  RunResult guarded = sb.apply({"--no-refresh"});
  INFO(guarded.describe());
  CHECK(guarded.exit_code == 1);
  CHECK(contains(guarded.all(), "is recorded as " + invoices));
  CHECK_FALSE(contains(guarded.all(), "dbform import"));
  CHECK(sb.count(kPostService) == 1);
  // Declaring invoices, both plan the rename.
  sb.write("dbform.yaml", manifest({}, {service_yaml("invoices")}));
  for (const auto& args : std::vector<std::vector<std::string>>{{"plan"}, {"plan", "--no-refresh"}}) {
    RunResult r = sb.run(args);
    INFO(r.describe());
    CHECK(contains(r.out, R"(rename {"name":"invoices"})"));
  }
}

TEST_CASE("e2e: newcomer: preview up refused by a project's max suggests a down of the oldest that keeps to that "
          "project, and pasted it makes room there only") {
  Sandbox sb(two_keys());
  sb.env["DBFORM_API_KEY_ACME_DEV"] = kDevKey;
  auto with = [](const std::string& service, int max) {
    return "    previews:\n      services: [" + service + "]\n      strategy: NOW\n      ttl: 72h\n      max: " +
           std::to_string(max) + "\n";
  };
  sb.write("dbform.yaml", manifest({}, {service_yaml("orders")}) + with("orders", 5) +
                              manifest({}, {service_yaml("web")}, kDev).substr(std::string("version: 1\nprojects:\n").size()) +
                              with("web", 1));
  RunResult applied = sb.apply();
  INFO(applied.describe());
  REQUIRE(applied.exit_code == 0);
  REQUIRE(preview(sb, {"up", "pr-1"}).exit_code == 0);  // orders-pr-1 and web-pr-1
  RunResult full = preview(sb, {"up", "pr-2"});
  INFO(full.describe());
  CHECK(full.exit_code == 1);
  CHECK(contains(full.err, "`dbform preview down pr-1 --project " + kDev + "` deletes the oldest"));
  RunResult down = run_suggestion(sb, full.err, "dbform preview down");
  INFO(down.describe());
  CHECK(down.exit_code == 0);
  CHECK(named(sb, "web-pr-1") == 0);
  CHECK(find_resource(sb.state(), preview_address("pr-1", "orders")).is_object());  // acme-prod's kept
  CHECK(preview(sb, {"up", "pr-2"}).exit_code == 0);
}
