// The binary: everything it does is in the library (dbform::cli::run, src/cli/app.cpp).
#include "cli/app.h"

int main(int argc, char** argv) { return dbform::cli::run(argc, argv); }
