// A service's objects step through the real binary, killed (SIGKILL, delivered by strace) before
// each message it sends and before each write it makes: between two such calls neither the
// database nor the state changes, so this kills it at every point that can leave something
// different behind (the pending passwords journaled, a statement of the transaction sent, the
// COMMIT sent, the records written after it). The next apply must finish from there: every object
// made once, each login role's recorded password the one it has, nothing left to do. And two applies
// of the same objects at once end with each made once and every recorded password working.
#include "postgres_sim.h"

using namespace e2e;

namespace {

// Declared under `orders` in every run: a group role that owns a schema.
const std::string kKillBase = R"(        roles:
          - name: orders_rw
)";
const std::string kKillSchemas = R"(        schemas:
          - name: orders
            owner: orders_rw
)";

// The base with a login role, a schema and two grants of their own, named after `n`.
std::string kill_objects(const std::string& n) {
  return kKillBase + "          - name: worker_" + n + "\n            login: true\n            connection_limit: 3\n" +
         "            member_of: [orders_rw]\n" + kKillSchemas + "          - name: jobs_" + n +
         "\n            owner: orders_rw\n" + "        grants:\n" + "          - role: worker_" + n +
         "\n            schema: jobs_" + n + "\n            privileges: [USAGE]\n" + "          - role: worker_" + n +
         "\n            schema: jobs_" + n + "\n            tables: all\n            privileges: [SELECT]\n";
}

void copy_files(const fs::path& from, const fs::path& to, const std::vector<std::string>& names) {
  for (const auto& name : names) {
    std::error_code ec;
    fs::remove(to / name, ec);
    if (fs::exists(from / name)) fs::copy_file(from / name, to / name);
  }
}

const std::vector<std::string> kStateFiles = {"dbform.state.json", "dbform.state.json.journal"};

// The next apply finished the objects of `n`: each recorded once, the login role's recorded password
// opens its own connection, and the plan has nothing left to do.
void check_finished(Sandbox& sb, const std::string& n) {
  const json state = sb.state();
  const std::string orders = service_address("orders");
  for (const std::string& address : {orders + "/roles/worker_" + n, orders + "/schemas/jobs_" + n,
                                     orders + "/grants/worker_" + n + "/jobs_" + n,
                                     orders + "/grants/worker_" + n + "/jobs_" + n + "/tables"}) {
    INFO(address);
    int records = 0;
    for (const auto& r : state["resources"]) records += r["address"] == address;
    CHECK(records == 1);
  }
  const json worker = find_resource(state, orders + "/roles/worker_" + n);
  CHECK(worker.value("pending_password", std::string()).empty());
  const SqlResult as_worker = sql(connection_string(sb, orders + "/roles/worker_" + n), "SELECT current_user");
  INFO(as_worker.error);
  CHECK(as_worker.value == "worker_" + n);
  const std::string admin = connection_string(sb, orders);
  CHECK(sql(admin, "SELECT has_schema_privilege('worker_" + n + "', 'jobs_" + n + "', 'USAGE')").value == "t");
  CHECK(sql(admin, "SELECT rolconnlimit FROM pg_roles WHERE rolname = 'worker_" + n + "'").value == "3");
  RunResult plan = sb.run({"plan", "-f", "m.yaml", "--detailed-exitcode"});
  INFO(plan.describe());
  CHECK(plan.exit_code == 0);
}

}  // namespace

TEST_CASE("database objects: an apply killed before any send or write of its objects' step leaves a state the next apply finishes from with each object made once",
          "[e2e][postgres]") {
  if (kSanitized) {
    WARN("not run in a sanitized build: LeakSanitizer does not run under strace");
    return;
  }
  Sandbox sb;
  PostgresSim sim(sb);
  sb.write("m.yaml", manifest({}, {service_yaml("orders") + kKillBase + kKillSchemas}));
  REQUIRE(sb.apply({"-f", "m.yaml"}).exit_code == 0);
  const fs::path base = sb.dir() / "base";
  fs::create_directories(base);
  copy_files(sb.dir(), base, kStateFiles);

  // strace counts the calls it injects into per thread: the n-th send (or write) of whichever thread
  // reaches it first. The loop goes on until a run ends before its n-th: every point was killed.
  // Each run adds objects of names of its own, so that one run's leave no trace in the next.
  // Sends: the API's calls and every statement. The state's writes: its journal's appends (the
  // pending passwords before the transaction, the records after it) and the renames of its whole
  // rewrite after the run. Each with the fewest kills that reach every one of those.
  const std::vector<std::pair<std::string, int>> calls = {{"sendto", 10}, {"pwrite64", 2}, {"rename", 2}};
  int runs = 0;
  for (const auto& [call, fewest] : calls) {
    int killed = 0;
    for (int n = 1; n <= 300; ++n) {
      const std::string tag = call.substr(0, 1) + std::to_string(n);
      copy_files(base, sb.dir(), kStateFiles);
      sb.write("m.yaml", manifest({}, {service_yaml("orders") + kill_objects(tag)}));
      RunResult r = sb.run_shell("strace -f -qq -o /dev/null -e trace=" + call + " -e inject=" + call +
                                 ":signal=KILL:when=" + std::to_string(n) +
                                 " \"$DBFORM\" apply -f m.yaml --auto-approve --poll-interval 100ms");
      INFO("killed before " << call << " #" << n << "\n" << r.describe());
      const bool was_killed = r.exit_code != 0;
      RunResult next = sb.apply({"-f", "m.yaml"});
      INFO(next.describe());
      REQUIRE(next.exit_code == 0);
      check_finished(sb, tag);
      ++runs;
      if (!was_killed) break;
      ++killed;
    }
    INFO(call);
    CHECK(killed >= fewest);
  }
  CHECK(runs > 20);
}

TEST_CASE("database objects: two applies of the same objects at once end with each made once and every recorded password working",
          "[e2e][postgres]") {
  Sandbox sb;
  PostgresSim sim(sb);
  sb.write("m.yaml", manifest({}, {service_yaml("orders") + kKillBase + kKillSchemas}));
  REQUIRE(sb.apply({"-f", "m.yaml"}).exit_code == 0);
  sb.write("m.yaml", manifest({}, {service_yaml("orders") + kill_objects("raced")}));
  const std::vector<std::string> args = {"apply", "-f", "m.yaml", "--auto-approve", "--poll-interval", "100ms",
                                         "--lock-timeout", "60s"};
  auto one = sb.start(args);
  auto two = sb.start(args);
  RunResult r1 = one->wait();
  RunResult r2 = two->wait();
  INFO("first: " << r1.describe() << "\nsecond: " << r2.describe());
  CHECK(r1.exit_code == 0);
  CHECK(r2.exit_code == 0);
  // Whichever took the lock first made them; the other, planning under the lock, found them made.
  const int made = contains(r1.out, "/roles/worker_raced: created") + contains(r2.out, "/roles/worker_raced: created");
  CHECK(made == 1);
  check_finished(sb, "raced");
}
