// `dbform sim --postgres` serves the connection pooler's endpoint (docs/simulator.md): the pooler's
// connection string, as `dbform output` and `output --format env` hand it to a pipeline, logs in to
// the same server as the service's (a read replica set's to its standby); turned off, its port is
// closed. Through the real simulator binary, with real PostgreSQL servers.
#include "postgres_sim.h"

using namespace e2e;

namespace {

std::string pooled(const std::string& name, bool pooler, const std::string& more = "") {
  return service_yaml(name) + "        connection_pooler: " + (pooler ? "true" : "false") + "\n" + more;
}

std::string output_value(Sandbox& sb, const std::string& what) {
  RunResult r = sb.run({"output", what});
  INFO(r.describe());
  REQUIRE(r.exit_code == 0);
  return r.out.substr(0, r.out.find('\n'));
}

}  // namespace

TEST_CASE("postgres: the pooler's connection string reaches the service's server, and its set's the standby, and once off it is closed",
          "[e2e][postgres]") {
  Sandbox sb;
  PostgresSim sim(sb);
  const std::string set = "        read_replicas:\n          - name: reporting\n            nodes: 1\n"
                          "            cpu_millis: 1000\n            memory_gbs: 4\n            connection_pooler: true\n";
  sb.write("m.yaml", manifest({}, {pooled("orders", true, set)}));
  RunResult applied = sb.apply({"-f", "m.yaml"});
  INFO(applied.describe());
  REQUIRE(applied.exit_code == 0);

  const std::string direct = connection_string(sb, service_address("orders"));
  const std::string pooler = output_value(sb, service_address("orders") + ".pooler_connection_string");
  CHECK(output_value(sb, service_address("orders") + ".pooler_host") == "127.0.0.1");
  CHECK(output_value(sb, service_address("orders") + ".pooler_port") != output_value(sb, service_address("orders") + ".port"));
  REQUIRE(sql(direct, "CREATE TABLE notes (v text); INSERT INTO notes VALUES ('written directly')").ok);
  SqlResult through = sql(pooler, "SELECT v FROM notes");
  INFO(through.error);
  CHECK(through.value == "written directly");
  CHECK(sql(pooler, "SELECT current_user || '@' || current_database()").value == "tsdbadmin@tsdb");
  CHECK(sql(pooler, "SELECT ssl FROM pg_stat_ssl WHERE pid = pg_backend_pid()").value == "t");
  CHECK(sql(pooler, "INSERT INTO notes VALUES ('through the pooler')").ok);
  CHECK(sql(direct, "SELECT count(*) FROM notes").value == "2");

  // As a pipeline gets it: eval "$(dbform output --format env)", then the variable.
  RunResult env = sb.run_shell("eval \"$(\"$DBFORM\" output --format env)\" && "
                               "printf '%s' \"$DBFORM_ACME_PROD_ORDERS_POOLER_CONNECTION_STRING\"");
  INFO(env.describe());
  REQUIRE(env.exit_code == 0);
  CHECK(env.out == pooler);
  CHECK(sql(env.out, "SELECT count(*) FROM notes").value == "2");

  // The read replica set's pooler reaches its standby: the service's data, read-only.
  const std::string set_pooler = output_value(sb, service_address("orders") + "/replicas/reporting.pooler_connection_string");
  CHECK(eventually([&] { return sql(set_pooler, "SELECT count(*) FROM notes").value == "2"; }, std::chrono::seconds(30)));
  CHECK_FALSE(sql(set_pooler, "INSERT INTO notes VALUES ('no')").ok);

  // Off: the port it had is closed; the service itself is untouched.
  sb.write("m.yaml", manifest({}, {pooled("orders", false, set)}));
  RunResult off = sb.apply({"-f", "m.yaml"});
  INFO(off.describe());
  REQUIRE(off.exit_code == 0);
  SqlResult refused = sql(pooler, "SELECT 1");
  CHECK_FALSE(refused.ok);
  CHECK_THAT(refused.error, Catch::Contains("refused"));
  CHECK(sql(direct, "SELECT count(*) FROM notes").value == "2");
}
