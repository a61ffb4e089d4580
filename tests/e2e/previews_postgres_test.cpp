// A preview's fork against `dbform sim --postgres`: it holds the data its source had when
// it was forked, it opens with its own password (the env report's URL), and its source's password
// does not open it. Fails on main: there is no `preview` command.
#include "postgres_sim.h"

using namespace e2e;

TEST_CASE("postgres: a preview's fork holds its source's data and opens with its own password, never its source's",
          "[e2e][postgres]") {
  Sandbox sb;
  PostgresSim sim(sb);
  sb.write("dbform.yaml", manifest({}, {service_yaml("orders") + "        environment_tag: PROD\n"}) +
                              "    previews:\n      services: [orders]\n      strategy: NOW\n      ttl: 72h\n      max: 2\n");
  REQUIRE(sb.apply().exit_code == 0);
  const std::string source = connection_string(sb, service_address("orders"));
  REQUIRE(sql(source, "CREATE TABLE t (v text); INSERT INTO t VALUES ('before')").ok);

  RunResult up = sb.run({"preview", "up", "pr-1", "--format", "env", "--poll-interval", "100ms"});
  INFO(up.describe());
  REQUIRE(up.exit_code == 0);
  REQUIRE(up.out.rfind("DATABASE_URL_ORDERS='", 0) == 0);
  const std::string url = up.out.substr(21, up.out.rfind('\'') - 21);
  REQUIRE(sql(source, "INSERT INTO t VALUES ('after')").ok);
  SqlResult seen = sql(url, "SELECT string_agg(v, ',' ORDER BY v) FROM t");
  INFO(seen.error);
  CHECK(seen.value == "before");

  // The source's password does not open the fork: it was rotated before the preview was reported.
  const std::string address = kProject + "/previews/pr-1/services/orders";
  auto output = [&](const std::string& what) {
    RunResult r = sb.run({"output", what});
    REQUIRE(r.exit_code == 0);
    return r.out.substr(0, r.out.find('\n'));
  };
  const std::string source_password = output(service_address("orders") + ".password");
  SqlResult with_source = sql("host=" + output(address + ".host") + " port=" + output(address + ".port") +
                                  " user=tsdbadmin dbname=tsdb sslmode=require password=" + source_password,
                              "SELECT 1");
  CHECK_FALSE(with_source.ok);
  CHECK_THAT(with_source.error, Catch::Contains("password authentication failed"));
  CHECK(output(address + ".password") != source_password);
  RunResult check = sb.run({"connect", address, "--check"});
  INFO(check.describe());
  CHECK(check.exit_code == 0);
  // Deleting the preview stops its server; the source keeps everything.
  REQUIRE(sb.run({"preview", "down", "pr-1", "--poll-interval", "100ms"}).exit_code == 0);
  CHECK_FALSE(sql(url, "SELECT 1").ok);
  CHECK(sql(source, "SELECT count(*) FROM t").value == "2");
}
