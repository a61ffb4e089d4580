// `dbform connect ADDRESS [--check] [-- PSQL_ARGS...]`: psql with the recorded connection, or one
// checked connection (docs/pipelines.md). Reads the state like `output`: no lock, no API call.
#include <signal.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <iostream>

#include "cli/commands.h"
#include "cli/context.h"
#include "state/previews.h"
#include "cli/manual.h"
#include "ops/address.h"
#include "ops/connections.h"
#include "ops/sealed.h"
#include "util/atomic_file.h"
#include "util/duration.h"
#include "util/env.h"
#include "util/text.h"

extern char** environ;

namespace dbform::cli {

namespace {

namespace fs = std::filesystem;

struct ConnectOptions {
  StateOptions state;
  std::string address;
  std::string role;  // a login role of the service's database, instead of tsdbadmin
  bool check = false;
  std::vector<std::string> psql_args;
};

// What psql or the check needs: the endpoint, and the password of the service it belongs to (a read
// replica set shares its service's). Refuses, naming the cause, what cannot be connected to.
struct Connection {
  std::string address;
  ConnectTarget target;
};

Connection recorded_connection(const State& state, const std::string& text, const std::string& role) {
  const ResourceRecord& r = resolve_address(state, text);
  if (!role.empty() && r.kind != ResourceKind::Service)
    throw UsageError("--role names a role of a service's database: " + r.address + " is a " + kind_noun(r.kind) +
                     " (give its service's address)");
  if (!kind_form(r.kind).connectable)
    throw UsageError(r.address + " is a " + kind_name(r.kind) + ": only services and read replica sets take "
                     "connections");
  if (is_paused_status(r.status))
    throw UsageError(r.address + " is " + r.status + " (as the state last recorded it): it refuses connections. "
                     "Declare `paused: false` and apply to start it");
  if (r.endpoint_host.empty() || !r.endpoint_port)
    throw UsageError(r.address + " has no recorded endpoint" +
                     (r.id.empty() ? " (its create's outcome is unknown)" : " (status " + (r.status.empty() ? std::string("unknown") : r.status) + ")") +
                     ": run `dbform apply` to wait until it is READY");
  const ResourceRecord* owner = password_record(state, r);
  if (!owner || owner->initial_password.empty()) {
    const std::string who = owner ? owner->address : r.address;
    throw UsageError(who + " has no known password (imported or adopted): `dbform rotate-password " + who +
                     "` sets and records one");
  }
  if (const std::string problem = unrotated_fork_problem(*owner); !problem.empty()) throw UsageError(problem);
  if (!owner->pending_password.empty())
    std::cerr << "warning: a password change of " << owner->address << " is pending (its answer was lost): the "
              << "recorded password may be refused. `dbform rotate-password " << owner->address << "` completes it\n";
  Connection c;
  c.address = r.address;
  c.target.host = r.endpoint_host;
  c.target.port = *r.endpoint_port;
  c.target.password = owner->initial_password.text();
  if (role.empty()) return c;
  const std::string address = resource_address(r.project_id, ResourceKind::Role, role, r.name);
  const ResourceRecord* login = state.find(address);
  if (!login || !is_login_role(*login)) {
    std::vector<std::string> roles;
    for (const auto& other : state.resources)
      if (is_login_role(other) && other.project_id == r.project_id && other.parent == r.name)
        roles.push_back(other.name);
    throw UsageError("`" + role + "` is not a recorded login role of " + r.address + " (" +
                     (roles.empty() ? std::string("it records none") : "recorded: " + join(roles, ", ")) +
                     "): declare it under `roles:` with `login: true` and apply");
  }
  if (login->initial_password.empty())
    throw UsageError(address + " has no recorded password yet" +
                     (login->pending_password.empty() ? "" : " (one is pending: apply sets it)") +
                     ": run `dbform apply` to make it");
  c.address = address;
  c.target.user = role;
  c.target.password = login->initial_password.text();
  return c;
}

int check(const Connection& c) {
  const ConnectAttempt attempt = libpq_check().attempt(c.target, std::chrono::seconds(10));
  const std::string where = c.target.host + ":" + std::to_string(c.target.port);
  if (attempt.verdict != ConnectAttempt::Verdict::Accepted) {
    std::cerr << "error: " << c.address << ": cannot connect to " << where << " as " << c.target.user << ": "
              << scrub(attempt.reason) << "\n";
    return 1;
  }
  std::cout << c.address << ": connected to " << where << " as " << c.target.user
            << " (database tsdb, TLS), SELECT 1 answered\n"
            << "  server version  PostgreSQL " << scrub(attempt.server_version) << "\n"
            << "  round trip      " << attempt.round_trip.count() << " ms (connect, TLS, login and SELECT 1)\n";
  return 0;
}

// `psql` on PATH: its absolute path, or an error saying how to get it.
std::string find_psql() {
  if (auto psql = find_on_path("psql")) return *psql;
  throw Error("dbform connect runs psql, which is not on PATH: install it (Debian: apt-get install "
              "postgresql-client), or use `dbform connect --check`, or `dbform output ADDRESS.connection_string`");
}

// The password goes to psql in a passfile of its own (mode 0600, removed when psql ends): never on
// its command line, never in PGPASSWORD (which any later program psql starts would inherit).
class Passfile {
 public:
  explicit Passfile(const ConnectTarget& t) {
    if (t.password.find_first_of("\r\n") != std::string::npos)
      throw Error("the recorded password holds a line break, which a passfile cannot hold: use `dbform output "
                  "ADDRESS.connection_string` instead");
    if (t.host.find_first_of("\r\n") != std::string::npos)
      throw Error("the recorded host holds a line break, which a passfile cannot hold");
    const char* tmp = std::getenv("TMPDIR");
    std::string pattern = std::string(tmp && *tmp ? tmp : "/tmp") + "/dbform-connect-XXXXXX";
    const int fd = ::mkstemp(pattern.data());
    if (fd < 0) throw Error("cannot make a passfile for psql in " + pattern + ": " + std::strerror(errno));
    path_ = pattern;
    const std::string line = pgpass_field(t.host) + ":" + std::to_string(t.port) + ":" + pgpass_field(t.database) + ":" +
                             pgpass_field(t.user) + ":" + pgpass_field(t.password) + "\n";
    const bool written = ::fchmod(fd, 0600) == 0 && ::write(fd, line.data(), line.size()) == static_cast<ssize_t>(line.size());
    ::close(fd);
    if (!written) throw Error("cannot write the passfile " + path_ + ": " + std::strerror(errno));
  }
  ~Passfile() { ::unlink(path_.c_str()); }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

volatile sig_atomic_t g_child = 0;

// SIGTERM or SIGHUP while psql runs: passed on to it, so that dbform outlives it and removes the passfile.
void forward_signal(int sig) {
  if (g_child > 0) ::kill(static_cast<pid_t>(g_child), sig);
}

int run_psql(const Connection& c, const std::vector<std::string>& extra) {
  const std::string psql = find_psql();
  Passfile passfile(c.target);
  const std::string conninfo = "host=" + c.target.host + " port=" + std::to_string(c.target.port) + " dbname=" +
                               c.target.database + " user=" + c.target.user + " sslmode=" + c.target.sslmode;
  std::vector<std::string> args = {psql, conninfo};
  args.insert(args.end(), extra.begin(), extra.end());
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  std::vector<std::string> env_strings;
  for (char** e = environ; *e; ++e) {
    const std::string entry = *e;
    if (entry.rfind("PGPASSWORD=", 0) == 0 || entry.rfind("PGPASSFILE=", 0) == 0) continue;
    env_strings.push_back(entry);
  }
  env_strings.push_back("PGPASSFILE=" + passfile.path());
  std::vector<char*> envp;
  for (auto& e : env_strings) envp.push_back(e.data());
  envp.push_back(nullptr);

  // Ctrl-C belongs to psql (it cancels a query); dbform waits, as system() does.
  struct sigaction ignore {}, forward {}, old_int {}, old_quit {}, old_term {}, old_hup {};
  ignore.sa_handler = SIG_IGN;
  forward.sa_handler = forward_signal;
  sigaction(SIGINT, &ignore, &old_int);
  sigaction(SIGQUIT, &ignore, &old_quit);
  sigaction(SIGTERM, &forward, &old_term);
  sigaction(SIGHUP, &forward, &old_hup);
  const pid_t pid = ::fork();
  if (pid == 0) {
    sigaction(SIGINT, &old_int, nullptr);
    sigaction(SIGQUIT, &old_quit, nullptr);
    signal(SIGTERM, SIG_DFL);
    signal(SIGHUP, SIG_DFL);
    signal(SIGPIPE, SIG_DFL);
    ::execve(argv[0], argv.data(), envp.data());
    ::_exit(127);
  }
  int status = 0;
  if (pid > 0) {
    g_child = pid;
    while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    g_child = 0;
  }
  sigaction(SIGINT, &old_int, nullptr);
  sigaction(SIGQUIT, &old_quit, nullptr);
  sigaction(SIGTERM, &old_term, nullptr);
  sigaction(SIGHUP, &old_hup, nullptr);
  if (pid < 0) throw Error(std::string("cannot start psql: ") + std::strerror(errno));
  if (WIFSIGNALED(status)) return 128 + WTERMSIG(status);
  return WIFEXITED(status) ? WEXITSTATUS(status) : 1;
}

}  // namespace

void add_connect_command(CLI::App& app, int& exit_code) {
  auto opts = std::make_shared<ConnectOptions>();
  auto* cmd = add_command(app, "connect", "run psql connected to a recorded service, or check that it accepts connections",
                          {.text = R"(Runs `psql` connected to the service (or read replica set) at ADDRESS as `tsdbadmin`, database `tsdb`, with TLS (`sslmode=require`), using the endpoint and password the state records; ARGS after `--` are passed to psql. The password reaches psql through a passfile of its own (mode 0600, in $TMPDIR, removed when psql ends), never on a command line or in PGPASSWORD. A read replica set uses its service's password. `--role NAME` connects as a login role of the service's database (declared under `roles:`, docs/database-objects.md) with its own recorded password: what an application sees, its grants and no more.

`--check` runs no psql: it connects once through libpq, runs `SELECT 1` and prints the server's version and the round trip; it exits 0 when that worked and 1 with libpq's reason when not.

It refuses, naming the cause, an address without a recorded endpoint, a service recorded as paused, one whose password is not known (imported or adopted: `dbform rotate-password` sets one), and a preview's fork whose password is not its own yet (`dbform preview up NAME` finishes it). Like `output` it reads the state without a lock and makes no API call: the state says where to connect, so run it after `dbform apply`.

## Exit status

psql's exit status; with `--check` 0 when the service accepted the connection, 1 otherwise.)",
                           .examples = {{"An interactive session", "dbform connect acme/services/orders"},
                                        {"A query from a pipeline", "dbform connect orders -- -c 'select count(*) from orders'"},
                                        {"Is it up, and how far away?", "dbform connect orders --check"}}});
  add_state_options(*cmd, opts->state, false);
  cmd->add_flag("--check", opts->check, "connect, run SELECT 1, print the server version and the round trip; exit 0 or 1");
  cmd->add_option("--role", opts->role,
                  "connect as this login role of the service's database (declared under `roles:`) with its own "
                  "recorded password, instead of tsdbadmin");
  cmd->add_option("address", opts->address, "the service or read replica set (ADDRESS, services/NAME or NAME)")->required();
  cmd->add_option("psql_args", opts->psql_args, "arguments for psql, after --");
  cmd->callback([opts, &exit_code] {
    if (opts->check && !opts->psql_args.empty())
      throw UsageError("--check runs no psql, so it takes no psql arguments (" + join(opts->psql_args, " ") + ")");
    auto store = open_state_store(opts->state);
    State state = read_recorded_state(*store, false);
    require_state_key(*store, state, "connect");  // it logs in with the recorded password
    const Connection c = recorded_connection(state, opts->address, opts->role);
    exit_code = opts->check ? check(c) : run_psql(c, opts->psql_args);
  });
}

}  // namespace dbform::cli
