// dbform: the command line. Parses arguments, runs one command, and turns any error into a
// message on stderr and exit code 1. All logic lives in the libraries below src/.
#include <csignal>
#include <cstdio>
#include <iostream>

#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>

#include "cli/commands.h"
#include "cli/context.h"
#include "util/env.h"
#include "util/error.h"
#include "util/text.h"

namespace {

void setup_logging(const std::string& level_name) {
  auto logger = spdlog::stderr_color_mt("dbform");
  logger->set_pattern("%^%l%$: %v");
  spdlog::set_default_logger(logger);
  spdlog::set_level(spdlog::level::from_str(level_name.empty() ? "warn" : level_name));
}

}  // namespace

int main(int argc, char** argv) {
  // A closed pipe (`dbform apply --json | head -1`) must never kill a run that is recording what it
  // created: writes to it fail instead, and the run goes on.
  std::signal(SIGPIPE, SIG_IGN);
  CLI::App app{"dbform: declarative reconciler for managed database services", "dbform"};
  app.require_subcommand(1);
  app.set_version_flag("--version", std::string("dbform 0.1.0"));
  std::string log_level = dbform::process_env()("DBFORM_LOG").value_or("warn");
  app.add_option("--log-level", log_level, "trace, debug, info, warn, error, off (env DBFORM_LOG)")
      ->check(CLI::IsMember({"trace", "debug", "info", "warn", "error", "critical", "off"}));

  dbform::cli::add_no_color_flag(app);  // `dbform --no-color COMMAND`, as well as after each command

  int exit_code = 0;
  dbform::cli::add_validate_command(app, exit_code);
  dbform::cli::add_plan_command(app, exit_code);
  dbform::cli::add_apply_command(app, exit_code);
  dbform::cli::add_output_command(app, exit_code);
  dbform::cli::add_import_command(app, exit_code);
  dbform::cli::add_rotate_password_command(app, exit_code);
  dbform::cli::add_state_command(app, exit_code);
  dbform::cli::add_whoami_command(app, exit_code);
  dbform::cli::add_sim_command(app, exit_code);
  dbform::cli::add_demo_command(app, exit_code);
  app.parse_complete_callback([&] { setup_logging(log_level); });

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    int rc = app.exit(e);
    return rc == 0 ? 0 : 1;
  } catch (const dbform::Error& e) {
    std::fflush(stdout);
    std::cerr << "Error: " << dbform::scrub(e.what()) << "\n";
    return 1;
  } catch (const std::exception& e) {
    std::fflush(stdout);
    std::cerr << "Error: unexpected failure: " << dbform::scrub(e.what()) << "\n";
    return 1;
  }
  return exit_code;
}
