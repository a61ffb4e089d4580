// `dbform sim --postgres` is as isolated as the real service (docs/simulator.md): tsdbadmin may
// create roles (so it may grant itself pg_execute_server_program or pg_read_server_files on
// PostgreSQL 15), but whatever SQL reaches a server runs no program and reads no file outside the
// server's own data directory, and the superuser has no password-less way in through the socket.
// The adversary's own path: a pull request's migration on a preview fork that tries to write to
// the source through `COPY ... FROM PROGRAM 'psql ...'`. Fails on the main it started from: the
// migration ran and the source held the table it wrote.
#include "postgres_sim.h"
#include "previews_common.h"

using namespace e2e;

namespace {

const std::string kEscapeBlock = "    previews:\n      services: [orders]\n      strategy: NOW\n      ttl: 72h\n      max: 3\n"
                           "      migrations: db/migrations\n";

// The value of `key=` in a libpq keyword connection string, or of the URL's port.
std::string port_in(const std::string& conninfo) {
  if (auto at = conninfo.find("port="); at != std::string::npos) return conninfo.substr(at + 5, conninfo.find(' ', at) - at - 5);
  const auto host_end = conninfo.find('/', conninfo.find('@'));
  const auto colon = conninfo.rfind(':', host_end);
  return conninfo.substr(colon + 1, host_end - colon - 1);
}

}  // namespace

TEST_CASE("postgres: a migration that grants itself pg_execute_server_program runs no program - the source is "
          "untouched, and no file outside the fork's own can be read",
          "[e2e][postgres]") {
  Sandbox sb;
  PostgresSim sim(sb);
  sb.write("dbform.yaml", manifest({}, {service_yaml("orders")}) + kEscapeBlock);
  RunResult applied = sb.apply({"--wait-connectable"});
  INFO(applied.describe());
  REQUIRE(applied.exit_code == 0);
  const std::string source = connection_string(sb, service_address("orders"));
  const std::string socket = sim.dir() + "/sock", port = port_in(source);

  // As on the real service: tsdbadmin creates roles and owns tsdb, and is no superuser.
  CHECK(sql(source, "SELECT rolsuper::text || ',' || rolcreaterole::text FROM pg_roles WHERE rolname = 'tsdbadmin'").value ==
        "false,true");
  // The socket lets nobody in as the superuser without the fleet's password.
  const SqlResult as_superuser = sql("host=" + socket + " port=" + port + " user=postgres dbname=tsdb", "SELECT 1");
  CHECK_FALSE(as_superuser.ok);
  CHECK_THAT(as_superuser.error, Catch::Contains("password"));

  sb.write("runner-secret.txt", "runner's secret\n");
  sb.write("db/migrations/0001_escape.sql",
           "GRANT pg_execute_server_program TO tsdbadmin;\n"
           "CREATE TABLE pwned (line text);\n"
           "COPY pwned FROM PROGRAM 'psql -h " + socket + " -p " + port +
               " -U postgres -d tsdb -c \"CREATE TABLE written_by_pr (v int)\"';\n");
  RunResult up = preview(sb, {"up", "pr-1"});
  INFO(up.describe());
  CHECK(up.exit_code == 1);
  // (popen reports the refused exec of /bin/sh with whatever errno its spawn saw.)
  CHECK_THAT(up.err, Catch::Contains("0001_escape.sql:3:1") && Catch::Contains("could not execute command"));
  CHECK(sql(source, "SELECT coalesce(to_regclass('written_by_pr')::text, 'none')").value == "none");

  // On the fork, tsdbadmin may make itself a reader of the server's files, and still reads none but
  // its own: not the runner's, not the source's data directory.
  const std::string fork = connection_string(sb, preview_address("pr-1", "orders"));
  REQUIRE(sql(source, "GRANT pg_read_all_settings TO tsdbadmin").ok);
  const std::string source_data = sql(source, "SHOW data_directory").value;
  REQUIRE_FALSE(source_data.empty());
  REQUIRE(sql(fork, "GRANT pg_read_server_files, pg_read_all_settings TO tsdbadmin").ok);
  const std::string fork_data = sql(fork, "SHOW data_directory").value;
  auto read_file = [&](const std::string& path) {
    return sql(fork, "CREATE TEMP TABLE f (line text); COPY f FROM '" + path + "'; SELECT string_agg(line, '|') FROM f");
  };
  const SqlResult own = read_file(fork_data + "/PG_VERSION");
  INFO(own.error);
  CHECK(own.ok);  // the server reads its own files: what fails below is the confinement
  for (const std::string path : {(sb.dir() / "runner-secret.txt").string(), source_data + "/PG_VERSION",
                                 std::string("/proc/1/environ")}) {
    const SqlResult other = read_file(path);
    INFO(path << ": " << other.error);
    CHECK_FALSE(other.ok);
    CHECK_THAT(other.error, Catch::Contains("Permission denied"));
  }
}
