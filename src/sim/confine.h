#pragma once
// A simulated server is as isolated as the real service's: whatever SQL reaches it (a pull
// request's migration that gained pg_execute_server_program or pg_read_server_files through
// tsdbadmin's CREATEROLE) may execute no program but the server itself, and read or write no file
// but its own data directory, its socket, its certificate and the system's libraries (Linux's
// Landlock, which needs no privilege and holds for every process the server forks).
#include <sys/types.h>

#include <string>
#include <vector>

#include "sim/pg_programs.h"

namespace dbform::sim {

struct Confinement {
  std::string executable;                // the one program that may be executed (the server itself)
  std::vector<std::string> loaders;      // and the dynamic loaders that run it (never /bin/sh)
  std::vector<std::string> read_only;    // trees (or files) it may read
  std::vector<std::string> read_write;   // trees it may read, change, create in and remove from
  std::vector<std::string> socket_dirs;  // where it makes its socket and the socket's lock file
};

// The Landlock ABI this kernel offers (0: none, so nothing can be confined).
int landlock_abi();

// Starts `argv` (argv[0] an absolute path) as a daemon: its own session, stdin /dev/null, stdout
// and stderr appended to `log_file`, as `as`, confined by `confinement` when landlock_abi() > 0.
// Returns its pid once it runs the program; throws Error when it cannot be started.
pid_t start_confined_daemon(const std::vector<std::string>& argv, const RunAs& as, const std::string& log_file,
                            const Confinement& confinement);

}  // namespace dbform::sim
