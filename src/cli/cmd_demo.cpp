// `dbform demo`: the whole workflow on the embedded simulator, against a throwaway state.
#include <stdlib.h>
#include <unistd.h>

#include <libpq-fe.h>

#include <filesystem>
#include <iostream>
#include <memory>

#include "cli/apply_flow.h"
#include "cli/commands.h"
#include "cli/manual.h"
#include "cli/render_plan.h"
#include "ops/operation.h"
#include "sim/pg_fleet.h"
#include "sim/simulator.h"

namespace dbform::cli {

namespace {

namespace fs = std::filesystem;

// examples/quickstart.yaml from the working directory, beside the binary's build tree, where an
// installed binary's package put it (PREFIX/share/dbform/examples), or the source tree this binary
// was built from.
std::string find_quickstart() {
  std::vector<fs::path> candidates = {"examples/quickstart.yaml"};
  std::error_code ec;
  fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  if (!ec) {
    for (fs::path dir = exe.parent_path(); !dir.empty() && dir != dir.root_path(); dir = dir.parent_path())
      candidates.push_back(dir / "examples/quickstart.yaml");
    candidates.push_back(exe.parent_path().parent_path() / "share/dbform/examples/quickstart.yaml");
  }
#ifdef DBFORM_SOURCE_DIR
  candidates.push_back(fs::path(DBFORM_SOURCE_DIR) / "examples/quickstart.yaml");
#endif
  for (const auto& c : candidates)
    if (fs::exists(c, ec)) return c.string();
  throw Error("cannot find examples/quickstart.yaml; run `dbform demo` from the dbform source directory");
}

void section(const std::string& title) { std::cout << "\n==> " << title << "\n\n" << std::flush; }

// --postgres: a query on a service the demo made, through its recorded connection string (TLS,
// tsdbadmin, the recorded password), as a program of the user's would connect.
int query_a_service(const State& state, const std::string& address) {
  const ResourceRecord* r = state.find(address);
  if (!r || r->endpoint_host.empty() || !r->endpoint_port || r->initial_password.empty()) {
    std::cerr << "error: " << address << " has no recorded endpoint and password to connect with\n";
    return 1;
  }
  const std::string port = std::to_string(*r->endpoint_port);
  const char* keys[] = {"host", "port", "user", "dbname", "password", "sslmode", nullptr};
  const char* values[] = {r->endpoint_host.c_str(), port.c_str(), "tsdbadmin", "tsdb", r->initial_password.text().c_str(),
                          "require", nullptr};
  std::unique_ptr<PGconn, void (*)(PGconn*)> conn(PQconnectdbParams(keys, values, 0), PQfinish);
  if (PQstatus(conn.get()) != CONNECTION_OK) {
    std::cerr << "error: cannot connect to " << address << ": " << PQerrorMessage(conn.get());
    return 1;
  }
  const char* sql =
      "SELECT current_user, current_database(), (SELECT ssl FROM pg_stat_ssl WHERE pid = pg_backend_pid()), version()";
  std::cout << "tsdb=> " << sql << ";\n";
  std::unique_ptr<PGresult, void (*)(PGresult*)> result(PQexec(conn.get(), sql), PQclear);
  if (PQresultStatus(result.get()) != PGRES_TUPLES_OK) {
    std::cerr << "error: the query failed: " << PQresultErrorMessage(result.get());
    return 1;
  }
  std::cout << "  user " << PQgetvalue(result.get(), 0, 0) << ", database " << PQgetvalue(result.get(), 0, 1)
            << ", TLS " << (std::string(PQgetvalue(result.get(), 0, 2)) == "t" ? "on" : "off") << "\n  "
            << PQgetvalue(result.get(), 0, 3) << "\n";
  return 0;
}

}  // namespace

void add_demo_command(CLI::App& app, int& exit_code) {
  auto postgres = std::make_shared<bool>(false);
  auto* cmd = add_command(app, "demo", "apply examples/quickstart.yaml to an embedded simulator",
                          {.text = "Starts the simulator (dbform-sim(1)) on a free loopback port, applies the quick-start "
                                   "manifest to it with a state in a temporary directory, shows the progress as a real "
                                   "apply does, then plans again to show that nothing is left to do, and removes the "
                                   "directory. Needs no key and no network. The manifest is `examples/quickstart.yaml` of "
                                   "the source tree, or the installed one (`/usr/share/dbform/examples/quickstart.yaml`). "
                                   "With `--postgres` every service is a real PostgreSQL server on 127.0.0.1 (as `dbform "
                                   "sim --postgres` makes them; it needs PostgreSQL's server programs, Debian's "
                                   "`postgresql` package), and the demo ends by connecting to one it made and running a "
                                   "query; the servers are stopped and their files removed when it ends.",
                           .examples = {{"See a first apply", "dbform demo"},
                                        {"The same with databases you can connect to", "dbform demo --postgres"}}});
  cmd->add_flag("--postgres", *postgres,
                "make every service a real PostgreSQL server, and end by connecting to one and running a query");
  cmd->callback([postgres, &exit_code] {
    const std::string manifest = find_quickstart();
    const std::string key = "demo-secret-key";
    SystemClock clock;
    SimConfig config;
    config.keys.push_back({key, "demo-project", "demo-key"});
    config.queued_delay = Duration(800);
    config.configuring_delay = Duration(1500);
    std::unique_ptr<sim::PostgresFleet> fleet;
    if (*postgres) {
      fleet = std::make_unique<sim::PostgresFleet>(sim::PostgresFleetOptions{sim::default_fleet_dir("demo"), {}});
      std::cout << "dbform demo: every service is a PostgreSQL " << fleet->server_version()
                << " server on 127.0.0.1 (files in " << fleet->dir() << ", removed at the end).\n";
    }
    Simulator sim(config, clock, fleet.get());
    SimServer server(sim);
    int port = server.start("127.0.0.1", 0);

    fs::path dir = fs::temp_directory_path() / ("dbform-demo-" + std::to_string(::getpid()));
    fs::create_directories(dir);
    ApplyFlowOptions opts;
    opts.manifests.files = {manifest};
    opts.state.state = (dir / "dbform.state.json").string();
    opts.auto_approve = true;
    opts.wait.poll_interval = "1s";
    ::setenv("DBFORM_API_URL", ("http://127.0.0.1:" + std::to_string(port) + "/public/api/v1").c_str(), 1);
    ::setenv("DBFORM_API_KEY", key.c_str(), 1);
    ::setenv("DBFORM_AUTH_SCHEME", "bearer", 1);

    std::cout << "dbform demo: a simulator of the managed database API is listening on 127.0.0.1:" << port
              << ".\nManifest: " << manifest << "\nState:    " << opts.state.state << "\n";
    section("dbform apply --auto-approve -f " + manifest);
    int rc = run_apply(opts, std::cout);
    if (rc != 0) {
      exit_code = rc;
      return;
    }
    section("dbform plan (again): nothing left to do");
    std::cout << "\n";
    auto store = open_state_store(opts.state);
    SystemClock plan_clock;
    PlanSettings from_state;
    from_state.refresh = false;
    const Manifest declared = load_manifests_or_throw(opts.manifests);
    Plan again = plan_operation({declared, *store, nullptr, plan_clock, process_env(), from_state}).plan;
    std::cout << render_plan_text(again, detect_terminal());
    int queried = 0;
    if (fleet) {
      const std::string orders = "demo-project/services/orders";
      section("a query on " + orders + ", through its recorded connection (`dbform connect ADDRESS` opens psql so)");
      queried = query_a_service(read_state(*store), orders);
    }
    server.stop();
    if (fleet) fleet->shutdown();
    fs::remove_all(dir);
    exit_code = again.summary.has_changes() || queried != 0 ? 1 : 0;
  });
}

}  // namespace dbform::cli
