// Every word true, round two: what a newcomer met in the team flow (a pull request's plan beside
// main's apply, previews, imports, pauses), said as it is, through the real binary.
#include "previews_common.h"

using namespace e2e;

// A saved plan refused as stale says what moved: each resource, each field, its value when the
// plan was made and now (as the new plan shows it), and what the saved plan and a plan now do.
TEST_CASE("e2e: a stale saved plan names the resource, the field and its values then and now") {
  Sandbox sb;
  apply_base(sb);
  sb.write("dbform.yaml", manifest({vpc_yaml("main")}, {service_yaml("orders", 2000, 8), service_yaml("billing"),
                                                         service_yaml("analytics")}));
  REQUIRE(sb.run({"plan", "--out", "tfplan"}).exit_code == 0);
  // In the console, after the review: billing resized, and orders resized as the plan would.
  REQUIRE(sb.sim().console(recorded_service_id(sb, "billing"), "resize", R"({"cpu_millis":2000,"memory_gbs":8})").status == 200);
  REQUIRE(sb.sim().console(recorded_service_id(sb, "orders"), "resize", R"({"cpu_millis":2000,"memory_gbs":8})").status == 200);
  const json writes = writes_of(sb.counts());
  const std::string state = sb.read("dbform.state.json");

  RunResult r = sb.run({"apply", "tfplan"});
  INFO(r.describe());
  CHECK(r.exit_code == 1);
  CHECK(contains(r.err, "what exists has changed since the plan was made: a refresh plans otherwise now for " +
                            service_address("billing") + ", " + service_address("orders") + "\n"));
  CHECK(contains(r.err, "\n    " + service_address("billing") +
                            ": cpu_millis \"1000\" when the plan was made, \"2000\" now (changed outside dbform); "
                            "memory_gbs \"4\" when the plan was made, \"8\" now (changed outside dbform); "
                            "the saved plan leaves it unchanged, a plan now updates it in place\n"));
  CHECK(contains(r.err, "\n    " + service_address("orders") +
                            ": cpu_millis \"1000\" when the plan was made, \"2000\" now; memory_gbs \"4\" when the "
                            "plan was made, \"8\" now; the saved plan updates it in place, a plan now leaves it "
                            "unchanged\n"));
  CHECK(!contains(r.err, "or the manifests read differently"));
  CHECK(writes_of(sb.counts()) == writes);
  CHECK(sb.read("dbform.state.json") == state);

  // The same manifest files reading otherwise: the declared value, then and now.
  sb.write("vars.yaml", manifest({}, {"      - name: tenant\n        cpu_millis: ${CPU}\n"}));
  REQUIRE(sb.run({"plan", "-f", "dbform.yaml", "-f", "vars.yaml", "--out", "vars.plan"}, {{"DBFORM_VAR_CPU", "1000"}}).exit_code == 0);
  RunResult reread = sb.run({"apply", "vars.plan"}, {{"DBFORM_VAR_CPU", "4000"}});
  INFO(reread.describe());
  CHECK(reread.exit_code == 1);
  CHECK(contains(reread.err, "read differently now (does an environment variable they use have another value?)"));
  CHECK(contains(reread.err, "\n    " + service_address("tenant") +
                                 ": declared cpu_millis \"1000\" when the plan was made, \"4000\" now\n"));
}

// `max` reached: the message suggests what makes room now. With nothing expired a sweep deletes
// nothing; `down` of the oldest (or a sweep keeping the open pull requests') does.
TEST_CASE("e2e: preview up refused by max suggests what makes room: down or sweep --keep, or sweep once one expired") {
  Sandbox sb;
  applied(sb, preview_manifest("[billing]", "72h", 2));
  REQUIRE(preview(sb, {"up", "pr-1"}).exit_code == 0);
  REQUIRE(preview(sb, {"up", "pr-2"}).exit_code == 0);

  RunResult full = preview(sb, {"up", "pr-3"});
  INFO(full.describe());
  CHECK(full.exit_code == 1);
  CHECK(contains(full.err, "To make room, none has expired yet, so `dbform preview sweep` alone deletes nothing: "
                           "`dbform preview down pr-1` deletes the oldest, or `dbform preview sweep --keep NAME...`, "
                           "naming the previews of the pull requests still open, deletes the others; nothing was changed"));
  CHECK(!contains(full.err, "sweep` makes room"));
  RunResult swept = preview(sb, {"sweep"});  // as said: nothing to delete
  CHECK(swept.exit_code == 0);
  CHECK(sb.count(kDeleteService) == 0);
  REQUIRE(preview(sb, {"down", "pr-1"}).exit_code == 0);  // as suggested: room for one
  RunResult made = preview(sb, {"up", "pr-3"});
  INFO(made.describe());
  CHECK(made.exit_code == 0);

  // pr-2 expired (its expiry moved into the past): now a sweep is what makes room.
  json state = sb.state();
  for (auto& rec : state["resources"])
    if (rec["address"] == preview_address("pr-2", "billing")) rec["settings"]["preview"]["expires_at"] = "2020-01-01T00:00:00Z";
  sb.write("dbform.state.json", state.dump(2));
  RunResult expired = preview(sb, {"up", "pr-4"});
  INFO(expired.describe());
  CHECK(expired.exit_code == 1);
  CHECK(contains(expired.err, "To make room, `dbform preview sweep` deletes the expired one (pr-2); nothing was changed"));
  REQUIRE(preview(sb, {"sweep"}).exit_code == 0);
  CHECK(preview(sb, {"up", "pr-4"}).exit_code == 0);
}

// `--project` alone does nothing but fail: its help says what it does with --generate.
TEST_CASE("e2e: import's help says --project writes a manifest with --generate and records nothing") {
  Sandbox sb;
  RunResult help = sb.run({"help", "import"});
  INFO(help.describe());
  REQUIRE(help.exit_code == 0);
  // The option's entry (wrapped over lines), up to the next option's.
  const size_t at = help.out.find("`--project TEXT`:"), end = help.out.find("`--generate TEXT`:");
  REQUIRE(at != std::string::npos);
  REQUIRE(end > at);
  std::string entry;
  for (char c : help.out.substr(at, end - at))
    if (c != '\n' && (c != ' ' || entry.empty() || entry.back() != ' ')) entry += c;
    else if (entry.back() != ' ') entry += ' ';
  CHECK(contains(entry, "with --generate: list this project and declare every resource the state does not record"));
  CHECK(contains(entry, "records nothing"));
  CHECK(!contains(help.out, "import every resource of this project"));

  sb.write("dbform.yaml", base_manifest());
  RunResult alone = sb.run({"import", "--project", kProject});
  INFO(alone.describe());
  CHECK(alone.exit_code == 1);
  CHECK(contains(alone.err, "--project needs --generate FILE"));
  CHECK(sb.total_requests() == 0);
  CHECK(!sb.exists("dbform.state.json"));
}

// Paused by another tool (or the console) while dbform was not looking: the plan says so, and what
// it does: waits for PAUSED and leaves it paused unless `paused: false` is declared.
TEST_CASE("e2e: a service paused outside dbform is said to be, with what the plan does about it") {
  dbform::SimConfig config = default_sim_config();
  config.upgrading_delay = dbform::Duration(300'000);  // PAUSING for the whole test, unless the console ends it
  Sandbox sb(config);
  apply_base(sb);
  const std::string id = recorded_service_id(sb, "orders");
  REQUIRE(sb.sim().handle({"POST", "/projects/" + kProject + "/services/" + id + "/stop", "Bearer " + kKey, ""}).status == 202);

  RunResult pausing = sb.run({"plan", "--detailed-exitcode"});
  INFO(pausing.describe());
  CHECK(pausing.exit_code == 2);
  CHECK(contains(pausing.out, "  # " + service_address("orders") + " (id " + id + ") is being paused (status PAUSING)\n"
                              "  ~ service \"orders\": wait for PAUSED, no new create\n"
                              "      paused outside dbform (status PAUSING): waited for until PAUSED and left paused, "
                              "as `paused` is not declared (declare `paused: false` to have dbform start it)\n"));
  CHECK(!contains(pausing.out, "not READY yet"));
  RunResult md = sb.run({"plan", "--format", "markdown"});
  CHECK(contains(md.out, "| wait for PAUSED | id `" + id + "`, status PAUSING. paused outside dbform"));

  sb.write("alt/running.yaml", manifest({vpc_yaml("main")}, {service_yaml("orders") + "        paused: false\n",
                                                         service_yaml("billing"), service_yaml("analytics")}));
  RunResult to_start = sb.run({"plan", "-f", "alt/running.yaml", "--format", "json"});
  json orders;
  const json doc = json::parse(to_start.out);
  for (const auto& a : doc["actions"])
    if (a["address"] == service_address("orders")) orders = a;
  CHECK(orders["action"] == "wait");
  CHECK(orders["calls"].size() == 1);
  CHECK(orders["calls"][0]["call"] == "start");
  CHECK(orders["reason"] == "paused outside dbform (status PAUSING): waited for until PAUSED, then started, as "
                            "`paused: false` declares");

  // The pause done: not a change while `paused` is not declared, but said every plan.
  REQUIRE(sb.sim().console(id, "stop", "").status == 200);
  RunResult paused = sb.run({"plan", "--detailed-exitcode"});
  INFO(paused.describe());
  CHECK(paused.exit_code == 0);
  CHECK(contains(paused.out, "  # " + service_address("orders") + " (id " + id + ") is unchanged: paused outside dbform "
                             "(status PAUSED): left paused, as `paused` is not declared"));
  RunResult left = sb.apply();
  INFO(left.describe());
  CHECK(left.exit_code == 0);
  CHECK(sb.count(kStart) == 0);
  CHECK(sb.count(kResize) == 0);
  CHECK(find_resource(sb.state(), service_address("orders"))["status"] == "PAUSED");
}
