#pragma once
// Suggested commands the user can paste as they are: a message's `dbform COMMAND ...` in backticks
// gets the -f, --state, --workspace, --lock-timeout, --policy and (of a preview) --project the run
// was given, where that command takes them, so that it acts on the same manifests, state and rules.
#include <string>

#include <CLI/CLI.hpp>

#include "plan/plan_file.h"

namespace dbform::cli {

// Remembers the flags `command` (the one being run, of `root`) was given.
void remember_run_flags(const CLI::App& root, const CLI::App& command);

// `text` with each backticked `dbform ...` completed with the remembered flags its command takes
// and lacks.
std::string with_run_flags(const std::string& text);

// `dbform plan ... --out FILE` that makes `saved` again: its manifests (-f as given), --prune,
// --max-deletes, --target and --no-refresh, so that pasted it plans what the saved plan planned.
std::string plan_again_command(const PlanDocument& saved, const std::string& file);

}  // namespace dbform::cli
