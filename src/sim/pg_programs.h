#pragma once
// PostgreSQL's own programs (initdb, pg_ctl, pg_basebackup), found and run for the simulator's
// --postgres mode: as the `postgres` user when dbform runs as root (the server refuses root), with
// a minimal environment (nothing of dbform's, no secret) and no descriptor of dbform's inherited.
#include <sys/types.h>

#include <optional>
#include <string>
#include <vector>

namespace dbform::sim {

// Where initdb, pg_ctl and pg_basebackup are: $PG_BINDIR, else `pg_config --bindir`, else the
// newest of Debian's /usr/lib/postgresql/*/bin; the first that holds all three. Throws Error
// naming the places looked in when none does.
std::string find_pg_bindir();

// The account the servers run as: the current one, or `postgres` when running as root.
struct RunAs {
  bool switch_user = false;
  uid_t uid = 0;
  gid_t gid = 0;
  std::string name;
};
// Throws Error when running as root and there is no `postgres` user.
RunAs server_account();

struct ProgramResult {
  int exit_code = -1;  // 128 + signal when killed by one
  std::string output;  // stdout and stderr together, at most the last 64 KiB
};

// Runs `argv` (argv[0] an absolute path) as `as`, stdin /dev/null, and waits for it. Never throws
// for the program's failure (see exit_code); throws Error when it cannot be started.
ProgramResult run_program(const std::vector<std::string>& argv, const RunAs& as);

// The last `max_chars` of a program's output (or a log), on one line, for a message.
std::string output_tail(const std::string& text, size_t max_chars = 600);
// A file's whole text; "" when it cannot be read.
std::string read_text(const std::string& path);
// The postmaster a data directory's postmaster.pid names, when that process runs and is a
// PostgreSQL server (a pid reused by another program is not).
std::optional<long> live_postmaster(const std::string& data_dir);

// Gives `path` (and everything below it) to `as` when it switches user; nothing otherwise.
void give_to(const std::string& path, const RunAs& as);

}  // namespace dbform::sim
