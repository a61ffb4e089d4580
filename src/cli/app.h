#pragma once

namespace dbform::cli {

// The whole command line, as main() runs it: parses argv, runs the command, renders its outcome and
// returns the process's exit code. In the library (dbform_core) with the rest of the product, so
// that CLI11's code is compiled once, in its unity unit; src/cli/main.cpp only calls it.
int run(int argc, char** argv);

}  // namespace dbform::cli
