// A pull request's files are untrusted input, links included (docs/safety.md): a manifest, a rule
// file or a migration that is a symbolic link is read only when it leads inside the repository
// tree, and no message quotes a file that is not a manifest. The runner's secret files here hold
// a password each; no run may print it, whatever the pull request added. Fails on the main it
// started from: the links were followed and the password quoted in "found the text `...`".
#include "common.h"

namespace e2e {
namespace {

const std::string kPassword = "pr_planner:Hunter2isMyPassw0rd";  // what the runner's files hold

// A repository (a directory holding .git) with its manifests in m/, and the runner's secret files
// beside it, outside it.
void make_repository(Sandbox& sb) {
  fs::create_directories(sb.dir() / "repo/.git");
  fs::create_directories(sb.dir() / "runner");
  sb.write("runner/.pgpass", "db.internal:5432:platform:" + kPassword + "\n");
  sb.write("runner/creds.yaml", "token: " + kPassword + "\n");  // a mapping: it would read as a manifest
  // A checkout keeps the token it fetched with in .git/config: inside the repository, not its work tree.
  sb.write("repo/.git/config", "[http]\n\textraheader = AUTHORIZATION: basic " + kPassword + "\n");
  sb.write("repo/m/a.yaml", manifest({}, {service_yaml("orders")}));
  sb.write("repo/shared/b.yaml", "version: 1\nprojects:\n  - id: " + kProject + "\n    services:\n" +
                                     service_yaml("billing"));
}

void check_nothing_shown(const RunResult& r) {
  CHECK(r.exit_code == 1);
  CHECK_FALSE(contains(r.all(), "Hunter2"));
  CHECK_FALSE(contains(r.all(), "db.internal"));
}

}  // namespace

TEST_CASE("e2e: pull request files: a manifest that links out of the repository is refused, naming the link, "
          "never read, and a link inside it is followed") {
  Sandbox sb;
  make_repository(sb);
  // Inside the tree: followed, both services are declared.
  fs::create_symlink("../shared/b.yaml", sb.dir() / "repo/m/b.yaml");
  RunResult inside = sb.run({"plan", "--no-refresh", "-f", "repo/m"});
  INFO(inside.describe());
  CHECK(inside.exit_code == 0);
  CHECK(contains(inside.out, "billing"));

  for (const std::string target : {"../../runner/.pgpass", "../../runner/creds.yaml", "/proc/self/environ", "../.git/config"}) {
    fs::remove(sb.dir() / "repo/m/b.yaml");
    fs::create_symlink(target, sb.dir() / "repo/m/b.yaml");
    for (const auto& args : std::vector<std::vector<std::string>>{
             {"validate", "-f", "repo/m"}, {"plan", "--no-refresh", "-f", "repo/m"}, {"plan", "-f", "repo/m/b.yaml"},
             {"apply", "--auto-approve", "--prune", "-f", "repo/m"}}) {
      RunResult r = sb.run(args, {{"DBFORM_E2E_SECRET", kPassword}});
      INFO(target << " " << args[0] << ": " << r.describe());
      check_nothing_shown(r);
      CHECK(contains(r.err, "repo/m/b.yaml: error: cannot read this manifest: a symbolic link to " + target +
                                (target == "../.git/config" ? ", which leads into the repository's .git directory"
                                                            : ", which leads outside the repository tree")));
      CHECK_FALSE(contains(r.all(), "DBFORM_E2E_SECRET"));
    }
  }
  // The manifest directory itself replaced by a link out of the tree.
  fs::create_symlink("../runner", sb.dir() / "repo/linked");
  RunResult dir = sb.run({"validate", "-f", "repo/linked"});
  INFO(dir.describe());
  check_nothing_shown(dir);
  CHECK(contains(dir.err, "repo/linked: error: cannot read this manifest directory: a symbolic link to ../runner"));
  CHECK(sb.total_requests() == 0);
}

TEST_CASE("e2e: pull request files: a file that is not a manifest is said to be so at its line, never quoted") {
  Sandbox sb;
  struct Case {
    std::string name, bytes, says;
  };
  for (const Case& c : {Case{"pgpass.yaml", "db.internal:5432:platform:" + kPassword + "\n",
                             "pgpass.yaml:1:1: error: expected a mapping (KEY: VALUE lines) describing the manifest, "
                             "found a value of"},
                        Case{"key.yaml", "-----BEGIN PRIVATE KEY-----\nHunter2" + kPassword + "\n-----END PRIVATE KEY-----\n",
                             "found a value of"},
                        Case{"list.yaml", "- db.internal\n- " + kPassword + "\n", "found a list"},
                        Case{"environ.yaml", std::string("HOME=/root\0SECRET=", 18) + kPassword + std::string("\0", 1),
                             "environ.yaml:1:11: error: the file is not text"},
                        Case{"escape.yaml", "\"db.internal \\" + kPassword + "\"\n", "YAML syntax error: unknown escape character ("},
                        Case{"latin1.yaml", "db.internal: caf\xe9 " + kPassword + "\n", "latin1.yaml:1:17: error: the file is not text"}}) {
    sb.write(c.name, c.bytes);
    for (const std::string command : {"validate", "plan"}) {
      RunResult r = sb.run({command, "-f", c.name});
      INFO(c.name << " " << command << ": " << r.describe());
      check_nothing_shown(r);
      CHECK(contains(r.err + "\n", c.says));
    }
    // The same file given as a rule file.
    RunResult policy = sb.run({"policy", "check", "--policy", c.name, "--state", "none.json"});
    INFO(c.name << " as a policy: " << policy.describe());
    CHECK(policy.exit_code != 0);
    CHECK_FALSE(contains(policy.all(), "Hunter2"));
  }
  CHECK(sb.total_requests() == 0);
}

TEST_CASE("e2e: pull request files: a rule file that links out of the repository is refused, never read") {
  Sandbox sb;
  make_repository(sb);
  sb.write("runner/rules.yaml", "version: 1\nrules:\n  - id: " + kPassword + "\n    deny: {}\n");
  fs::create_symlink("../runner/rules.yaml", sb.dir() / "repo/rules.yaml");
  RunResult r = sb.run({"plan", "--no-refresh", "-f", "repo/m", "--policy", "repo/rules.yaml"});
  INFO(r.describe());
  check_nothing_shown(r);
  CHECK(contains(r.err, "repo/rules.yaml: error: cannot read this policy file: a symbolic link to ../runner/rules.yaml, "
                        "which leads outside the repository tree"));
}

TEST_CASE("e2e: pull request files: a migration that links out of the repository stops preview up before any call") {
  Sandbox sb;
  make_repository(sb);
  sb.write("repo/m/a.yaml", manifest({}, {service_yaml("orders")}) +
                                "    previews:\n      services: [orders]\n      ttl: 72h\n      max: 2\n"
                                "      migrations: ../db\n");
  sb.write("repo/db/0001_ok.sql", "CREATE TABLE ok (v int);\n");
  sb.write("runner/evil.sql", "CREATE TABLE pwned (v int);\nSELECT " + kPassword + " FROM nowhere;\n");
  RunResult applied = sb.apply({"-f", "repo/m"});
  INFO(applied.describe());
  REQUIRE(applied.exit_code == 0);
  const long long calls = sb.total_requests();
  fs::create_symlink("../../runner/evil.sql", sb.dir() / "repo/db/0002_evil.sql");
  RunResult r = sb.run({"preview", "up", "pr-1", "-f", "repo/m"});
  INFO(r.describe());
  check_nothing_shown(r);
  CHECK(contains(r.err, "repo/db/0002_evil.sql: error: the migration file is a symbolic link to ../../runner/evil.sql, "
                        "which leads outside the repository tree"));
  CHECK(sb.total_requests() == calls);

  // The directory itself outside the tree.
  fs::remove(sb.dir() / "repo/db/0002_evil.sql");
  sb.write("repo/m/a.yaml", manifest({}, {service_yaml("orders")}) +
                                "    previews:\n      services: [orders]\n      ttl: 72h\n      max: 2\n"
                                "      migrations: ../../runner\n");
  RunResult outside = sb.run({"preview", "up", "pr-1", "-f", "repo/m"});
  INFO(outside.describe());
  check_nothing_shown(outside);
  CHECK(contains(outside.err, "lies outside the repository tree"));
  CHECK(sb.total_requests() == calls);
}

// The state database's password and libpq's are the runner's secrets: a `${NAME}` holding one is
// refused like a key, in every command, without printing it.
TEST_CASE("e2e: pull request files: ${NAME} holding the state URL's password, or a libpq password file's, is refused") {
  Sandbox sb;
  const std::string pw = "St4tePassw0rd";
  sb.write("dbform.yaml", "version: 1\nprojects:\n  - id: " + kProject +
                              "\n    services:\n      - name: orders\n        cpu_millis: 1000\n        memory_gbs: 4\n"
                              "        region_code: ${REGION}\n");
  sb.write("pgpass", "db.internal:5432:*:writer:" + pw + "\n");
  struct Case {
    std::map<std::string, std::string> env;
    std::vector<std::string> extra_args;
    std::string holds;
  };
  for (const Case& c : {Case{{{"DBFORM_STATE", "postgres://writer:" + pw + "@127.0.0.1:1/state"}}, {}, "the password of DBFORM_STATE"},
                        Case{{{"DBFORM_STATE", "host=127.0.0.1 port=1 user=writer password=" + pw}}, {}, "the password of DBFORM_STATE"},
                        Case{{}, {"--state", "postgresql://writer:" + pw + "@127.0.0.1:1/state"}, "the password of --state"},
                        Case{{{"PGPASSFILE", (sb.dir() / "pgpass").string()}}, {}, "a password of " + (sb.dir() / "pgpass").string()}}) {
    std::map<std::string, std::string> env = c.env;
    env["DBFORM_VAR_REGION"] = pw;
    for (std::vector<std::string> args : {std::vector<std::string>{"validate"}, std::vector<std::string>{"plan", "--no-refresh"}}) {
      if (args[0] == "validate" && !c.extra_args.empty()) continue;  // validate reads no state
      args.insert(args.end(), c.extra_args.begin(), c.extra_args.end());
      RunResult r = sb.run(args, env);
      INFO(c.holds << " " << args[0] << ": " << r.describe());
      CHECK(r.exit_code == 1);
      CHECK(contains(r.err, "DBFORM_VAR_REGION (read by ${REGION}) holds the same value as " + c.holds));
      CHECK_FALSE(contains(r.all(), pw));
    }
  }
  CHECK(sb.total_requests() == 0);
}

}  // namespace e2e
