// What a pipeline does after apply, offline: `dbform sim --postgres` makes every service a real
// PostgreSQL server (docs/simulator.md), and `dbform connect` / `apply --wait-connectable` use
// them (docs/pipelines.md). These start the real simulator binary; CI runs them (they need the Debian
// packages postgresql and libpq-dev, as the state backend's tests do).
#include "postgres_sim.h"

using namespace e2e;

namespace {

std::string replica_yaml(const std::string& name) {
  return "        read_replicas:\n          - name: " + name +
         "\n            nodes: 1\n            cpu_millis: 1000\n            memory_gbs: 4\n";
}

std::string fork_yaml(const std::string& name, const std::string& from) {
  return "      - name: " + name + "\n        fork:\n          from: " + from + "\n          strategy: NOW\n";
}

std::string paused_yaml(const std::string& name, bool paused) {
  return service_yaml(name) + "        paused: " + (paused ? "true" : "false") + "\n";
}

}  // namespace

TEST_CASE("postgres: a service is a PostgreSQL server: TLS login as tsdbadmin to tsdb with the recorded password",
          "[e2e][postgres]") {
  Sandbox sb;
  PostgresSim sim(sb);
  sb.write("m.yaml", manifest({}, {service_yaml("orders")}));
  RunResult applied = sb.apply({"-f", "m.yaml"});
  REQUIRE(applied.exit_code == 0);
  const std::string url = connection_string(sb, service_address("orders"));
  CHECK(url.find("sslmode=require") != std::string::npos);
  SqlResult who = sql(url, "SELECT current_user || '@' || current_database()");
  INFO(who.error);
  CHECK(who.value == "tsdbadmin@tsdb");
  CHECK(sql(url, "SELECT ssl FROM pg_stat_ssl WHERE pid = pg_backend_pid()").value == "t");
  CHECK(sql(url, "CREATE TABLE orders (id int); INSERT INTO orders VALUES (1)").ok);
  // Not without TLS, and not with another password.
  auto output = [&](const std::string& field) {
    RunResult r = sb.run({"output", service_address("orders") + "." + field});
    REQUIRE(r.exit_code == 0);
    return r.out.substr(0, r.out.find('\n'));
  };
  const std::string host = output("host"), port = output("port"), password = output("password");
  REQUIRE(host == "127.0.0.1");
  CHECK_FALSE(sql("host=" + host + " port=" + port + " user=tsdbadmin dbname=tsdb sslmode=disable password=" + password,
                  "SELECT 1").ok);
  CHECK_FALSE(sql("host=" + host + " port=" + port + " user=tsdbadmin dbname=tsdb sslmode=require password=wrong",
                  "SELECT 1").ok);

  SECTION("connect --check") {
    RunResult check = sb.run({"connect", "orders", "--check"});
    INFO(check.describe());
    CHECK(check.exit_code == 0);
    CHECK_THAT(check.out, Catch::Contains("PostgreSQL 1"));
    CHECK_THAT(check.out, Catch::Contains("round trip"));
    CHECK(check.all().find(password) == std::string::npos);
  }
  SECTION("connect runs psql with the password in a passfile, never on its command line") {
    if (::access("/usr/bin/psql", X_OK) != 0) FAIL("psql (Debian's postgresql-client) is needed here");
    // psql runs `\!` through sh -c: the script's grandparent is psql.
    sb.write("show.sh", "#!/bin/sh\nP=$(cut -d' ' -f4 /proc/$PPID/stat)\ntr '\\0' ' ' < /proc/$P/cmdline; echo\n"
                        "echo \"pw=${PGPASSWORD:-none}\"\n");
    RunResult r = sb.run({"connect", "orders", "--", "-At", "-c", "SELECT count(*) FROM orders", "-c",
                          "\\! sh " + (sb.dir() / "show.sh").string()});
    INFO(r.describe());
    CHECK(r.exit_code == 0);
    CHECK_THAT(r.out, Catch::StartsWith("1\n"));
    CHECK_THAT(r.out, Catch::Contains("sslmode=require"));  // psql's own command line, shown by the script
    CHECK_THAT(r.out, Catch::Contains("pw=none"));
    CHECK(r.all().find(password) == std::string::npos);
  }
}

TEST_CASE("postgres: a fork has what its source held at fork time, and nothing written after",
          "[e2e][postgres]") {
  Sandbox sb;
  PostgresSim sim(sb);
  sb.write("m.yaml", manifest({}, {service_yaml("orders")}));
  REQUIRE(sb.apply({"-f", "m.yaml"}).exit_code == 0);
  const std::string source = connection_string(sb, service_address("orders"));
  REQUIRE(sql(source, "CREATE TABLE t (v text); INSERT INTO t VALUES ('before')").ok);
  sb.write("m.yaml", manifest({}, {service_yaml("orders"), fork_yaml("orders-copy", "orders")}));
  RunResult forked = sb.apply({"-f", "m.yaml"});
  INFO(forked.describe());
  REQUIRE(forked.exit_code == 0);
  REQUIRE(sql(source, "INSERT INTO t VALUES ('after')").ok);
  const std::string fork = connection_string(sb, service_address("orders-copy"));
  CHECK(fork != source);
  SqlResult seen = sql(fork, "SELECT string_agg(v, ',' ORDER BY v) FROM t");
  INFO(seen.error);
  CHECK(seen.value == "before");
  CHECK(sql(source, "SELECT string_agg(v, ',' ORDER BY v) FROM t").value == "after,before");
  // The fork is a server of its own, with its own password and its own writes.
  CHECK(sql(fork, "INSERT INTO t VALUES ('fork only')").ok);
  CHECK(sql(source, "SELECT count(*) FROM t WHERE v = 'fork only'").value == "0");
}

TEST_CASE("postgres: a read replica set's endpoint is a read-only standby with the service's data",
          "[e2e][postgres]") {
  Sandbox sb;
  PostgresSim sim(sb);
  sb.write("m.yaml", manifest({}, {service_yaml("orders")}));
  REQUIRE(sb.apply({"-f", "m.yaml"}).exit_code == 0);
  const std::string primary = connection_string(sb, service_address("orders"));
  REQUIRE(sql(primary, "CREATE TABLE t (v int); INSERT INTO t VALUES (1), (2)").ok);
  sb.write("m.yaml", manifest({}, {service_yaml("orders") + replica_yaml("reporting")}));
  RunResult r = sb.apply({"-f", "m.yaml"});
  INFO(r.describe());
  REQUIRE(r.exit_code == 0);
  const std::string replica = connection_string(sb, service_address("orders") + "/replicas/reporting");
  CHECK(replica != primary);
  SqlResult read = sql(replica, "SELECT sum(v) FROM t");
  INFO(read.error);
  CHECK(read.value == "3");
  CHECK(sql(replica, "SELECT pg_is_in_recovery()").value == "t");
  SqlResult write = sql(replica, "INSERT INTO t VALUES (3)");
  CHECK_FALSE(write.ok);
  CHECK_THAT(write.error, Catch::Contains("read-only"));
  RunResult check = sb.run({"connect", "replicas/reporting", "--check"});  // with its service's password
  INFO(check.describe());
  CHECK(check.exit_code == 0);
  // It streams: a later write on the service shows on the standby.
  REQUIRE(sql(primary, "INSERT INTO t VALUES (10)").ok);
  CHECK(eventually([&] { return sql(replica, "SELECT sum(v) FROM t").value == "13"; }, std::chrono::seconds(20)));
}

TEST_CASE("postgres: a paused service refuses connections, a resumed one accepts them, and connect refuses it while paused",
          "[e2e][postgres]") {
  Sandbox sb;
  PostgresSim sim(sb);
  sb.write("m.yaml", manifest({}, {service_yaml("orders")}));
  REQUIRE(sb.apply({"-f", "m.yaml"}).exit_code == 0);
  const std::string url = connection_string(sb, service_address("orders"));
  REQUIRE(sql(url, "CREATE TABLE t (v int); INSERT INTO t VALUES (7)").ok);

  sb.write("m.yaml", manifest({}, {paused_yaml("orders", true)}));
  RunResult paused = sb.apply({"-f", "m.yaml"});
  INFO(paused.describe());
  REQUIRE(paused.exit_code == 0);
  SqlResult refused = sql(url, "SELECT 1");
  CHECK_FALSE(refused.ok);
  CHECK_THAT(refused.error, Catch::Contains("refused"));
  RunResult connect = sb.run({"connect", "orders", "--check"});
  CHECK(connect.exit_code == 1);
  CHECK_THAT(connect.err, Catch::Contains("PAUSED"));

  sb.write("m.yaml", manifest({}, {paused_yaml("orders", false)}));
  RunResult resumed = sb.apply({"-f", "m.yaml", "--wait-connectable"});
  INFO(resumed.describe());
  REQUIRE(resumed.exit_code == 0);
  SqlResult back = sql(url, "SELECT v FROM t");  // at once: --wait-connectable waited for it
  INFO(back.error);
  CHECK(back.value == "7");
}

TEST_CASE("postgres: after rotate-password the old password is refused and the new one accepted",
          "[e2e][postgres]") {
  Sandbox sb;
  PostgresSim sim(sb);
  sb.write("m.yaml", manifest({}, {service_yaml("orders")}));
  REQUIRE(sb.apply({"-f", "m.yaml"}).exit_code == 0);
  const std::string old_url = connection_string(sb, service_address("orders"));
  REQUIRE(sql(old_url, "SELECT 1").ok);
  RunResult rotated = sb.run({"rotate-password", "orders"});
  INFO(rotated.describe());
  REQUIRE(rotated.exit_code == 0);
  const std::string new_url = connection_string(sb, service_address("orders"));
  REQUIRE(new_url != old_url);
  SqlResult old_login = sql(old_url, "SELECT 1");  // at once: the 204 came after the ALTER ROLE
  CHECK_FALSE(old_login.ok);
  CHECK_THAT(old_login.error, Catch::Contains("password authentication failed"));
  SqlResult new_login = sql(new_url, "SELECT 1");
  INFO(new_login.error);
  CHECK(new_login.ok);
  CHECK(sb.run({"connect", "orders", "--check"}).exit_code == 0);
}

TEST_CASE("postgres: a deleted service's server is stopped and its files removed", "[e2e][postgres]") {
  Sandbox sb;
  PostgresSim sim(sb);
  sb.write("m.yaml", manifest({}, {service_yaml("orders"), service_yaml("old")}));
  REQUIRE(sb.apply({"-f", "m.yaml"}).exit_code == 0);
  const std::string url = connection_string(sb, service_address("old"));
  const std::string id = find_resource(sb.state(), service_address("old"))["id"];
  REQUIRE(sql(url, "SELECT 1").ok);
  REQUIRE(fs::exists(sim.dir() + "/db/" + id));
  sb.write("m.yaml", manifest({}, {service_yaml("orders")}));
  RunResult pruned = sb.apply({"-f", "m.yaml", "--prune"});
  INFO(pruned.describe());
  REQUIRE(pruned.exit_code == 0);
  CHECK(eventually([&] { return !fs::exists(sim.dir() + "/db/" + id); }, std::chrono::seconds(20)));
  CHECK_FALSE(sql(url, "SELECT 1").ok);
  CHECK(processes_under(sim.dir() + "/db/" + id).empty());
  CHECK(sql(connection_string(sb, service_address("orders")), "SELECT 1").ok);  // the other one runs on
}

TEST_CASE("postgres: READY before the server accepts connections (the fault), and apply --wait-connectable waits for it",
          "[e2e][postgres]") {
  Sandbox sb;
  PostgresSim sim(sb, {"--ready-before-connectable", "3s"});
  // Without the flag apply ends at READY, and a connection right after it fails.
  sb.write("m.yaml", manifest({}, {service_yaml("early")}));
  RunResult plain = sb.apply({"-f", "m.yaml"});
  INFO(plain.describe());
  REQUIRE(plain.exit_code == 0);
  SqlResult too_early = sql(connection_string(sb, service_address("early")), "SELECT 1");
  CHECK_FALSE(too_early.ok);
  CHECK(eventually([&] { return sql(connection_string(sb, service_address("early")), "SELECT 1").ok; },
                   std::chrono::seconds(30)));  // it does come up, later

  // With it, apply reports the service ready only once it accepts a connection.
  sb.write("m.yaml", manifest({}, {service_yaml("early"), service_yaml("waited")}));
  RunResult waited = sb.apply({"-f", "m.yaml", "--wait-connectable"});
  INFO(waited.describe());
  REQUIRE(waited.exit_code == 0);
  CHECK_THAT(waited.out, Catch::Contains("p/services/waited: READY, checking it is accepting connections") ||
                             Catch::Contains(service_address("waited") + ": READY, checking it is accepting connections"));
  SqlResult at_once = sql(connection_string(sb, service_address("waited")), "SELECT 1");
  INFO(at_once.error);
  CHECK(at_once.ok);

  SECTION("wait_connectable: true in the manifest does the same") {
    sb.write("m.yaml", "version: 1\nprojects:\n  - id: " + kProject + "\n    wait_connectable: true\n    services:\n" +
                           service_yaml("early") + service_yaml("waited") + service_yaml("declared"));
    RunResult declared = sb.apply({"-f", "m.yaml"});
    INFO(declared.describe());
    REQUIRE(declared.exit_code == 0);
    CHECK(sql(connection_string(sb, service_address("declared")), "SELECT 1").ok);
  }
}

TEST_CASE("postgres: connect refuses what it cannot connect to, naming the cause", "[e2e][postgres]") {
  Sandbox sb;
  PostgresSim sim(sb);
  sb.write("m.yaml", manifest({vpc_yaml("main")}, {service_yaml("orders")}));
  REQUIRE(sb.apply({"-f", "m.yaml"}).exit_code == 0);
  RunResult vpc = sb.run({"connect", "vpcs/main", "--check"});
  CHECK(vpc.exit_code == 1);
  CHECK_THAT(vpc.err, Catch::Contains("only services and read replica sets"));
  // An imported service: no known password.
  const std::string id = sim.console_service("legacy");
  sb.write("m.yaml", manifest({vpc_yaml("main")}, {service_yaml("orders"), "      - name: legacy\n"}));
  RunResult imported = sb.run({"import", service_address("legacy"), id, "-f", "m.yaml"});
  INFO(imported.describe());
  REQUIRE(imported.exit_code == 0);
  RunResult unknown = sb.run({"connect", "legacy", "--check"});
  CHECK(unknown.exit_code == 1);
  CHECK_THAT(unknown.err, Catch::Contains("no known password"));
  CHECK_THAT(unknown.err, Catch::Contains("rotate-password"));
}
