// `dbform demo`: the whole workflow on the embedded simulator, against a throwaway state.
#include <stdlib.h>
#include <unistd.h>

#include <filesystem>
#include <iostream>

#include "cli/apply_flow.h"
#include "cli/commands.h"
#include "cli/manual.h"
#include "cli/render_plan.h"
#include "plan/differ.h"
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

}  // namespace

void add_demo_command(CLI::App& app, int& exit_code) {
  auto* cmd = app.add_subcommand("demo", "apply examples/quickstart.yaml to an embedded simulator");
  set_manual(*cmd, {.text = "Starts the simulator (dbform-sim(1)) on a free loopback port, applies the quick-start "
                            "manifest to it with a state in a temporary directory, shows the progress as a real "
                            "apply does, then plans again to show that nothing is left to do, and removes the "
                            "directory. Needs no key and no network. The manifest is `examples/quickstart.yaml` of "
                            "the source tree, or the installed one (`/usr/share/dbform/examples/quickstart.yaml`).",
                    .environment = {},
                    .examples = {{"See a first apply", "dbform demo"}}});
  cmd->callback([&exit_code] {
    const std::string manifest = find_quickstart();
    const std::string key = "demo-secret-key";
    SystemClock clock;
    SimConfig config;
    config.keys.push_back({key, "demo-project", "demo-key"});
    config.queued_delay = Duration(800);
    config.configuring_delay = Duration(1500);
    Simulator sim(config, clock);
    SimServer server(sim);
    int port = server.start("127.0.0.1", 0);

    fs::path dir = fs::temp_directory_path() / ("dbform-demo-" + std::to_string(::getpid()));
    fs::create_directories(dir);
    ApplyFlowOptions opts;
    opts.manifests.files = {manifest};
    opts.state.state = (dir / "dbform.state.json").string();
    opts.auto_approve = true;
    opts.poll_interval = "1s";
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
    Plan again = make_plan(load_manifests_or_throw(opts.manifests), read_state(*store));
    std::cout << render_plan_text(again, detect_terminal());
    server.stop();
    fs::remove_all(dir);
    exit_code = again.summary.has_changes() ? 1 : 0;
  });
}

}  // namespace dbform::cli
