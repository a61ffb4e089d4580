// Previews in a team: two pipelines running `preview up` on one shared state
// at once are serialized by the state's lock, and `preview up --reset` across several projects
// deletes nothing anywhere unless every project's checks pass. Through the real binary against the
// simulator; the overlap of two runs is made with a held answer and observed through /proc, never
// with a sleep.
#include "previews_common.h"
#include "util/file_lock.h"

using namespace e2e;

namespace {

bool is_fork(const dbform::SimRequest& r) { return r.method == "POST" && contains(r.path, "/forkService"); }

std::vector<std::string> up_args(const std::string& name) {
  return {"preview", "up", name, "--poll-interval", "100ms", "--lock-timeout", "60s"};
}

// Whether process `pid` has `file` open now. FileLock::acquire keeps the lock file open from its
// first flock attempt until it gets the lock (nothing else keeps it open: the holder check of a
// plan opens and closes it), so a run that has it open and not the lock is waiting for it.
bool has_open(pid_t pid, const fs::path& file) {
  try {
    for (const auto& fd : fs::directory_iterator("/proc/" + std::to_string(pid) + "/fd")) {
      std::error_code ec;
      if (fs::read_symlink(fd.path(), ec) == file) return true;
    }
  } catch (const fs::filesystem_error&) {  // the process exited, or an fd closed while listed
  }
  return false;
}

// How many records of the state have this name.
long long records_named(const json& state, const std::string& name) {
  long long n = 0;
  for (const auto& r : state["resources"])
    if (r["name"] == name) ++n;
  return n;
}

}  // namespace

TEST_CASE("e2e: previews team: two `preview up` at once on one state wait for each other's lock - each fork made and recorded once") {
  // Two pipelines of one pull request (the same name), or of two pull requests (two names).
  const bool same_name = GENERATE(true, false);
  const std::string first = "pr-1", second = same_name ? "pr-1" : "pr-2";
  INFO("second run: preview up " << second);
  Sandbox sb;
  applied(sb, preview_manifest("[orders, billing]"));
  const fs::path lock = fs::canonical(sb.dir() / "dbform.state.json.lock");  // left by the apply, empty
  const json before = sb.counts();

  // The first run holds the lock and waits for the answer of one of its forks.
  HeldAnswer held(sb, 1, is_fork);
  auto one = sb.start(up_args(first));
  REQUIRE(held.wait());
  // The second starts, and waits on the lock the first holds: it has the lock file open, the
  // holder written there is the first run, and it has sent nothing (one key check so far).
  auto two = sb.start(up_args(second));
  REQUIRE(eventually([&] { return has_open(two->pid(), lock); }, std::chrono::seconds(30)));
  const auto holder = dbform::FileLock::holder_now(lock.string());
  REQUIRE(holder.has_value());
  const json holder_info = json::parse(*holder);
  CHECK(holder_info["pid"] == one->pid());
  CHECK(holder_info["operation"] == "preview up");
  CHECK(sb.count(kAuthInfo) - before.value(kAuthInfo, 0LL) == 1);
  held.release();

  RunResult r1 = one->wait();
  RunResult r2 = two->wait();
  INFO("first: " << r1.describe() << "\nsecond: " << r2.describe());
  REQUIRE(r1.exit_code == 0);
  REQUIRE(r2.exit_code == 0);  // it waited (--lock-timeout), it was not refused
  CHECK(!contains(r2.err, "locked by"));
  CHECK(contains(r2.err, "Waiting up to 1m00s for the state's lock, held by pid " + std::to_string(one->pid())));
  const json calls = calls_since(before, sb.counts());
  INFO(calls.dump());
  const long long previews = same_name ? 1 : 2;
  // Each preview's two services forked once, each fork's password rotated once, nothing deleted.
  CHECK(writes_of(calls) == json{{kFork, 2 * previews}, {kUpdatePassword, 2 * previews}});
  // Same name: the second run found the preview whole (read under the lock, after the first's
  // records) and made no call at all, not even the key check; two names: one key check each.
  CHECK(calls.at(kAuthInfo) == previews);
  CHECK(calls.at(kListServices) == previews);
  const json state = sb.state();
  for (const auto& name : {first, second})
    for (const std::string service : {"orders", "billing"}) {
      INFO(name << " " << service);
      CHECK(records_named(state, service + "-" + name) == 1);
      check_fork(sb, name, service);  // READY, its own password, one service of that name in the API
    }
  CHECK(contains(r1.out, "orders-" + first));
  CHECK(contains(r2.out, "orders-" + second));
  RunResult list = sb.run({"preview", "list", "--format", "json"});
  REQUIRE(list.exit_code == 0);
  CHECK(json::parse(list.out).size() == static_cast<size_t>(previews));
}

namespace {

// acme-prod (orders) then acme-dev (web), each with a `previews:` block; `web_more` is added to
// web's declaration.
std::string two_projects(const std::string& web_more = "") {
  const std::string block = "    previews:\n      services: [%]\n      strategy: NOW\n      ttl: 72h\n      max: 5\n";
  auto with = [&](const std::string& service) { return std::string(block).replace(block.find('%'), 1, service); };
  return manifest({}, {service_yaml("orders")}) + with("orders") +
         manifest({}, {service_yaml("web") + web_more}, kDev).substr(std::string("version: 1\nprojects:\n").size()) +
         with("web");
}

}  // namespace

TEST_CASE("e2e: previews team: up --reset in two projects deletes and forks nothing in either when one project refuses") {
  Sandbox sb(two_keys());
  sb.env["DBFORM_API_KEY_ACME_DEV"] = kDevKey;
  applied(sb, two_projects());
  REQUIRE(preview(sb, {"up", "pr-1"}).exit_code == 0);  // both projects: orders-pr-1 and web-pr-1
  REQUIRE(named(sb, "orders-pr-1") == 1);
  REQUIRE(named(sb, "web-pr-1") == 1);
  const std::string web_id = find_resource(sb.state(), service_address("web", kDev))["id"];
  const std::string prod_fork = find_resource(sb.state(), preview_address("pr-1", "orders"))["id"];

  // acme-prod comes first and passes every check; acme-dev, second, refuses. A run that checked and
  // reset one project after the other would have deleted and forked orders-pr-1 by then.
  std::string says, nothing;
  bool reads_first = false;  // whether the refusal comes from the live lists (reads, no write)
  SECTION("acme-dev's source is recorded PAUSED (a check on the state alone)") {
    applied(sb, two_projects("        paused: true\n"));
    REQUIRE(find_resource(sb.state(), service_address("web", kDev))["status"] == "PAUSED");
    says = "its service `web` is not READY (status PAUSED)";
    nothing = "nothing was changed";
  }
  SECTION("acme-dev's source was paused outside dbform (a check on the live list)") {
    REQUIRE(sb.sim().console(web_id, "stop", "").status == 200);
    says = "its service `web` is PAUSED now, not READY";
    nothing = "nothing was deleted or created";
    reads_first = true;
  }
  const json state = sb.state();
  const json before = sb.counts();
  RunResult reset = preview(sb, {"up", "pr-1", "--reset"});
  INFO(reset.describe());
  const json calls = calls_since(before, sb.counts());
  INFO(calls.dump());
  CHECK(reset.exit_code == 1);
  CHECK(contains(reset.err, "preview `pr-1` of project " + kDev + " cannot be made: " + says));
  CHECK(contains(reset.err, nothing));
  CHECK(!contains(reset.err, "of project " + kProject + " cannot"));
  CHECK(reset.out.empty());
  if (reads_first) {
    // Each project's lists (services and VPCs), and nothing else: no key check of the engine, no
    // fork, no delete, no password.
    CHECK(writes_of(calls) == json::object());
    CHECK(calls.value(kListServices, 0LL) == 2);
  } else {
    CHECK(calls == json::object());  // refused before any call
  }
  CHECK(calls.value(kDeleteService, 0LL) == 0);
  CHECK(calls.value(kFork, 0LL) == 0);
  // Both previews are still there, recorded as they were.
  CHECK(named(sb, "orders-pr-1") == 1);
  CHECK(named(sb, "web-pr-1") == 1);
  CHECK(sb.state()["resources"] == state["resources"]);
  CHECK(find_resource(sb.state(), preview_address("pr-1", "orders"))["id"] == prod_fork);
  CHECK(find_resource(sb.state(), kDev + "/previews/pr-1/services/web").is_object());
}
