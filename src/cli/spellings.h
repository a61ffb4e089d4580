#pragma once
// Terraform's spellings of dbform's flags: every long flag also with one dash
// (`-out=p.plan`, `-detailed-exitcode`, `-target=orders`, `-auto-approve`, `-lock-timeout=30s`,
// `-no-color`), and `-refresh=false` for `--no-refresh`, so that a pipeline written for Terraform
// reads the same. Rewritten to dbform's own spelling before the command line is parsed.
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

namespace dbform::cli {

// `args` (without the program's name) with each single-dash long flag that the command it follows
// (or a command above it) has written with two dashes, and `-refresh=BOOL` as `--refresh` or
// `--no-refresh`. Nothing after `--` changes (it belongs to another program).
std::vector<std::string> with_dbform_spellings(const CLI::App& app, const std::vector<std::string>& args);

}  // namespace dbform::cli
