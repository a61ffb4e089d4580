#pragma once
// Each command registers itself on the CLI11 app and, when run, stores its exit code in `exit_code`.
// Commands throw dbform::Error for anything the user must see; run() (cli/app.h) catches it once.
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

namespace dbform::cli {

void add_validate_command(CLI::App& app, int& exit_code);
void add_plan_command(CLI::App& app, int& exit_code);
void add_show_command(CLI::App& app, int& exit_code);
void add_apply_command(CLI::App& app, int& exit_code);
void add_output_command(CLI::App& app, int& exit_code);
void add_connect_command(CLI::App& app, int& exit_code);
void add_import_command(CLI::App& app, int& exit_code);
void add_rotate_password_command(CLI::App& app, int& exit_code);
void add_state_command(CLI::App& app, int& exit_code);
void add_whoami_command(CLI::App& app, int& exit_code);
void add_sim_command(CLI::App& app, int& exit_code);
void add_demo_command(CLI::App& app, int& exit_code);
void add_completion_command(CLI::App& app, int& exit_code);
void add_preview_command(CLI::App& app, int& exit_code);
void add_policy_command(CLI::App& app, int& exit_code);

// The fields of `dbform output ADDRESS.FIELD`.
const std::vector<std::string>& output_fields();

}  // namespace dbform::cli
