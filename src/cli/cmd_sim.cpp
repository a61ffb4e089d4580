// `dbform sim`: the local API simulator (docs/simulator.md) on a port, until SIGINT or SIGTERM.
#include <signal.h>
#include <sys/prctl.h>
#include <unistd.h>

#include <iostream>
#include <limits>
#include <memory>
#include <optional>


#include "cli/commands.h"
#include "cli/context.h"
#include "cli/manual.h"
#include "sim/pg_fleet.h"
#include "sim/simulator.h"
#include "util/log.h"
#include "util/atomic_file.h"
#include "util/duration.h"
#include "util/error.h"

namespace dbform::cli {

namespace {

struct SimFlags {
  std::string listen = "127.0.0.1:8080";
  std::string config_file;
  std::vector<std::string> keys;  // KEY=PROJECT
  std::string queued_delay, configuring_delay, upgrading_delay, deleting_delay, latency, retry_after;
  unsigned seed = 1;
  double error_rate = 0;
  int rate_limit_every = 0, drop_create_every = 0, lose_answer_every = 0, gateway_timeout_every = 0;
  std::string list_lag, create_answer_delay, connection_delay;
  bool garbled_errors = false;
  std::vector<std::string> stuck, deleted, unstable;
  std::string port_file;
  std::string tls_cert, tls_key;
  bool postgres = false;         // a real PostgreSQL server behind every service
  std::string postgres_dir;      // their files ("" = default_fleet_dir("sim"))
  bool log_statements = false;   // every server logs every statement (log_statement = all)
  std::string ready_before_connectable;
  // Options whose presence matters: given on the command line, they override the config file.
  CLI::Option *seed_opt = nullptr, *error_rate_opt = nullptr, *rate_limit_opt = nullptr, *drop_opt = nullptr,
              *lose_opt = nullptr, *gateway_opt = nullptr;
};

struct ListenAddress {
  std::string host;
  int port = 0;
};

// "HOST:PORT", "[::1]:PORT" or ":PORT" (loopback).
ListenAddress parse_listen(const std::string& text) {
  auto bad = [&text] {
    return UsageError("--listen " + text + ": expected HOST:PORT, e.g. 127.0.0.1:8080, [::1]:8080 or :0 for a free port");
  };
  size_t colon = text.rfind(':');
  if (colon == std::string::npos) throw bad();
  ListenAddress address{text.substr(0, colon), 0};
  std::string port = text.substr(colon + 1);
  if (port.empty() || port.size() > 5 || port.find_first_not_of("0123456789") != std::string::npos) throw bad();
  address.port = std::stoi(port);
  if (address.port > 65535) throw bad();
  if (address.host.size() >= 2 && address.host.front() == '[' && address.host.back() == ']') {
    address.host = address.host.substr(1, address.host.size() - 2);
  }
  if (address.host.empty()) address.host = "127.0.0.1";
  return address;
}

bool is_loopback(const std::string& host) {
  return host == "localhost" || host == "::1" || host.rfind("127.", 0) == 0;
}

Duration duration_flag(const std::string& flag, const std::string& text) {
  auto parsed = parse_duration(text);
  if (!parsed) throw UsageError(flag + " " + text + ": expected a duration such as 500ms, 2s or 1m");
  return *parsed;
}

SimKey key_flag(const std::string& text) {
  // Split at the last '=': a key may contain '=' (base64 padding), a project id does not.
  size_t eq = text.rfind('=');
  if (eq == std::string::npos || eq == 0 || eq + 1 == text.size()) {
    throw UsageError("--key expects KEY=PROJECT, e.g. --key my-secret=proj-1 (the value given is not shown)");
  }
  return SimKey{text.substr(0, eq), text.substr(eq + 1)};
}

void append(std::vector<std::string>& to, const std::vector<std::string>& more) {
  to.insert(to.end(), more.begin(), more.end());
}

// The config file first, then every flag given on the command line on top of it.
SimConfig build_config(const SimFlags& flags) {
  SimConfig config = flags.config_file.empty() ? SimConfig{} : load_sim_config(flags.config_file);
  for (const auto& key : flags.keys) config.keys.push_back(key_flag(key));
  if (!flags.queued_delay.empty()) config.queued_delay = duration_flag("--queued-delay", flags.queued_delay);
  if (!flags.configuring_delay.empty()) {
    config.configuring_delay = duration_flag("--configuring-delay", flags.configuring_delay);
  }
  if (!flags.upgrading_delay.empty())
    config.upgrading_delay = duration_flag("--upgrading-delay", flags.upgrading_delay);
  if (!flags.deleting_delay.empty()) config.deleting_delay = duration_flag("--deleting-delay", flags.deleting_delay);
  if (flags.seed_opt->count()) config.seed = flags.seed;
  SimFaults& faults = config.faults;
  if (flags.error_rate_opt->count()) faults.error_rate = flags.error_rate;
  if (!flags.latency.empty()) faults.latency = duration_flag("--latency", flags.latency);
  if (flags.rate_limit_opt->count()) faults.rate_limit_every = flags.rate_limit_every;
  if (!flags.retry_after.empty()) {
    faults.retry_after_seconds =
        static_cast<int>((duration_flag("--retry-after", flags.retry_after).count() + 999) / 1000);
  }
  if (flags.drop_opt->count()) faults.drop_create_every = flags.drop_create_every;
  if (flags.lose_opt->count()) faults.lose_answer_every = flags.lose_answer_every;
  if (flags.gateway_opt->count()) faults.gateway_timeout_every = flags.gateway_timeout_every;
  if (!flags.list_lag.empty()) faults.list_lag = duration_flag("--list-lag", flags.list_lag);
  if (!flags.create_answer_delay.empty())
    faults.create_answer_delay = duration_flag("--create-answer-delay", flags.create_answer_delay);
  if (flags.garbled_errors) faults.garbled_errors = true;
  append(faults.stuck, flags.stuck);
  append(faults.deleted, flags.deleted);
  append(faults.unstable, flags.unstable);
  if (config.keys.empty()) {
    throw UsageError("dbform sim needs at least one API key: pass --key KEY=PROJECT (repeatable), or a --config "
                     "file with `keys: [{key: ..., project: ...}]`");
  }
  return config;
}

// --postgres: a parent that dies takes the simulator (and so its servers) with it, as SIGTERM does.
void stop_with_parent() {
  const pid_t parent = ::getppid();
  ::prctl(PR_SET_PDEATHSIG, SIGTERM);
  if (::getppid() != parent) ::raise(SIGTERM);  // it died before the request was made
}

void run_sim(const SimFlags& flags) {
  SimConfig config = build_config(flags);
  ListenAddress address = parse_listen(flags.listen);
  if (!flags.postgres && (!flags.postgres_dir.empty() || !flags.ready_before_connectable.empty() || flags.log_statements))
    throw UsageError(std::string(!flags.postgres_dir.empty()              ? "--postgres-dir"
                                 : !flags.ready_before_connectable.empty() ? "--ready-before-connectable"
                                                                           : "--log-statements") +
                     " needs --postgres (it is about the PostgreSQL servers behind the services)");
  if (!is_loopback(address.host)) {
    log::warn("serving the simulator on " + address.host + ": anyone who can reach it can use its keys");
  }
  // Block the stop signals before any server thread exists, so that every thread inherits the
  // mask and this thread alone takes them, synchronously, with sigwait.
  sigset_t stop_signals;
  sigemptyset(&stop_signals);
  sigaddset(&stop_signals, SIGINT);
  sigaddset(&stop_signals, SIGTERM);
  if (flags.postgres) sigaddset(&stop_signals, SIGHUP);  // a closed terminal must not leave servers behind
  pthread_sigmask(SIG_BLOCK, &stop_signals, nullptr);
  if (flags.postgres) stop_with_parent();

  std::unique_ptr<sim::PostgresFleet> fleet;
  if (flags.postgres) {
    sim::PostgresFleetOptions options;
    options.dir = flags.postgres_dir;
    options.log_statements = flags.log_statements;
    if (!flags.ready_before_connectable.empty())
      options.ready_before_connectable = duration_flag("--ready-before-connectable", flags.ready_before_connectable);
    fleet = std::make_unique<sim::PostgresFleet>(options);
    std::cout << "dbform sim: every service is a PostgreSQL " << fleet->server_version() << " server on 127.0.0.1, "
              << "files in " << fleet->dir() << std::endl;
  }
  SystemClock clock;
  Simulator sim(config, clock, fleet.get());
  std::optional<SimTls> tls;
  if (!flags.tls_cert.empty()) tls = SimTls{flags.tls_cert, flags.tls_key};
  SimServer server(sim,
                   flags.connection_delay.empty() ? Duration(0)
                                                  : duration_flag("--connection-delay", flags.connection_delay),
                   tls);
  int port = server.start(address.host, address.port);
  if (!flags.port_file.empty()) write_file_atomically(flags.port_file, std::to_string(port) + "\n", 0644);
  std::string host = address.host.find(':') != std::string::npos ? "[" + address.host + "]" : address.host;
  std::cout << "dbform sim listening on " << (tls ? "https" : "http") << "://" << host << ":" << port
            << "/public/api/v1" << std::endl;
  log::info("sim: " + std::to_string(config.keys.size()) + " key(s), seed " + std::to_string(config.seed));

  int received = 0;
  sigwait(&stop_signals, &received);
  log::info("sim: signal " + std::to_string(received) + " received, stopping");
  server.stop();
  if (fleet) fleet->shutdown();  // every server it started is stopped, its directory removed
}

}  // namespace

void add_sim_command(CLI::App& app, int& exit_code) {
  auto flags = std::make_shared<SimFlags>();
  auto* cmd = add_command(app, "sim", "serve a local simulator of the managed database API (for demos and tests)",
                          {.text = "Serves the calls of the vendor's API that dbform makes, on loopback, until SIGINT or "
                                   "SIGTERM: services with their statuses and delays, VPCs, read replica sets and "
                                   "peerings, keys and projects, request bodies validated as strictly as the published "
                                   "API document, and faults as unkind as a real network (500s, 429s with Retry-After, "
                                   "lost and late answers, 504s after the create was made, lists that lag behind writes, "
                                   "costly new connections, bytes that are not UTF-8), all repeatable with `--seed`. "
                                   "`/_sim/requests` counts the calls it saw. With `--postgres` every service is a real "
                                   "PostgreSQL server on 127.0.0.1 (its endpoint's port, TLS on): `tsdbadmin` with the "
                                   "service's password logs in to `tsdb`, a pause stops the server, a fork copies its data, "
                                   "a read replica set is a streaming standby, a new password is an ALTER ROLE; every "
                                   "server is stopped and its files removed when the simulator stops (SIGINT, SIGTERM, "
                                   "SIGHUP, its parent's death, or the next start on the same `--postgres-dir` after a "
                                   "kill). The simulator's own documentation is docs/simulator.md.",
                           .examples = {{"A simulator for one project, and an apply against it",
                                         "dbform sim --listen 127.0.0.1:8080 --key demo-secret=demo-project &\n"
                                         "DBFORM_API_URL=http://127.0.0.1:8080/public/api/v1 DBFORM_API_KEY=demo-secret dbform apply -f examples/quickstart.yaml --auto-approve"},
                                        {"An unkind network: every third create's answer lost, lists 6s behind",
                                         "dbform sim --key k=p --lose-answer-every 3 --list-lag 6s --port-file sim.port"},
                                        {"Over HTTPS, with a certificate of your own CA that dbform is told to trust",
                                         "dbform sim --key k=p --listen 127.0.0.1:8443 --tls-cert sim.pem --tls-key sim.key &\n"
                                         "SSL_CERT_FILE=my-ca.pem DBFORM_API_URL=https://127.0.0.1:8443/public/api/v1 DBFORM_API_KEY=k dbform whoami"},
                                        {"Databases you can connect to, READY a little before they accept connections",
                                         "dbform sim --key k=p --postgres --ready-before-connectable 2s"}}});
  cmd->add_option("--listen", flags->listen, "HOST:PORT to serve on; port 0 picks a free one")
      ->capture_default_str();
  cmd->add_option("--config", flags->config_file, "YAML file with keys, delays, seed and faults")
      ->check(CLI::ExistingFile);
  one_value_per_use(cmd->add_option("--key", flags->keys, "an API key and its project, KEY=PROJECT (repeatable)"));
  cmd->add_option("--queued-delay", flags->queued_delay, "how long a new service stays QUEUED (default 1s)");
  cmd->add_option("--configuring-delay", flags->configuring_delay, "then how long CONFIGURING (default 2s)");
  cmd->add_option("--upgrading-delay", flags->upgrading_delay,
                  "how long UPGRADING after a resize, setHA, attach or detach (default 2s)");
  cmd->add_option("--deleting-delay", flags->deleting_delay, "how long DELETING after a delete (default 1s)");
  flags->seed_opt = cmd->add_option("--seed", flags->seed, "seed for ids, passwords and faults (default 1)")
                       ->check(whole_number(0, std::numeric_limits<unsigned>::max(),
                                            "a whole number from 0 to " +
                                                std::to_string(std::numeric_limits<unsigned>::max())));
  flags->error_rate_opt = cmd->add_option("--error-rate", flags->error_rate, "share of calls answered 500 (0 to 1)")
                              ->check(number_between(0.0, 1.0, "a number from 0 to 1"));
  cmd->add_option("--latency", flags->latency, "delay added to every answer, e.g. 50ms");
  cmd->add_option("--connection-delay", flags->connection_delay,
                  "what each new connection costs before its first answer, as a TLS handshake with a remote API "
                  "would, e.g. 50ms");
  flags->rate_limit_opt = cmd->add_option("--rate-limit-every", flags->rate_limit_every,
                                          "answer every Nth call 429 with Retry-After")
                              ->check(whole_number(0, std::numeric_limits<int>::max(), "a whole number, 0 or more"));
  cmd->add_option("--retry-after", flags->retry_after, "the Retry-After of those 429s (default 1s)");
  one_value_per_use(cmd->add_option("--stuck", flags->stuck, "service name (glob) that never leaves CONFIGURING (repeatable)"));
  one_value_per_use(cmd->add_option("--deleted", flags->deleted, "service name (glob) that ends DELETED (repeatable)"));
  one_value_per_use(cmd->add_option("--unstable", flags->unstable, "service name (glob) that goes UNSTABLE before READY (repeatable)"));
  flags->drop_opt = cmd->add_option("--drop-create-every", flags->drop_create_every,
                                    "perform every Nth create but drop its connection before the answer")
                        ->check(whole_number(0, std::numeric_limits<int>::max(), "a whole number, 0 or more"));
  flags->lose_opt = cmd->add_option("--lose-answer-every", flags->lose_answer_every,
                                    "perform every Nth create, then close the connection before any byte of the answer")
                        ->check(whole_number(0, std::numeric_limits<int>::max(), "a whole number, 0 or more"));
  flags->gateway_opt = cmd->add_option("--gateway-timeout-every", flags->gateway_timeout_every,
                                       "perform every Nth create, then answer 504 as a gateway would")
                           ->check(whole_number(0, std::numeric_limits<int>::max(), "a whole number, 0 or more"));
  cmd->add_option("--list-lag", flags->list_lag, "lists show a new resource only this long after its create, e.g. 6s");
  cmd->add_option("--create-answer-delay", flags->create_answer_delay,
                  "a create's answer leaves this long after it was performed, e.g. 3s");
  cmd->add_flag("--garbled-errors", flags->garbled_errors, "error bodies carry bytes that are not valid UTF-8");
  cmd->add_option("--port-file", flags->port_file, "write the bound port to this file (atomically) once listening");
  auto* tls_cert = cmd->add_option("--tls-cert", flags->tls_cert,
                                   "serve HTTPS with this certificate (PEM, the chain after it); needs --tls-key")
                       ->check(CLI::ExistingFile);
  auto* tls_key =
      cmd->add_option("--tls-key", flags->tls_key, "the private key (PEM) of --tls-cert")->check(CLI::ExistingFile);
  tls_cert->needs(tls_key);
  tls_key->needs(tls_cert);
  cmd->add_flag("--postgres", flags->postgres,
                "make every service a real PostgreSQL server on 127.0.0.1 (its endpoint), with forks, standbys, "
                "pauses and passwords that work");
  cmd->add_option("--postgres-dir", flags->postgres_dir,
                  "with --postgres: the directory of the servers' files, removed on exit (default "
                  "$TMPDIR/dbform-sim-postgres-UID)");
  cmd->add_option("--ready-before-connectable", flags->ready_before_connectable,
                  "with --postgres: report READY this long before the server accepts connections, e.g. 2s");
  cmd->add_flag("--log-statements", flags->log_statements,
                "with --postgres: every server writes every statement it runs to its log, DIR/log/SERVICE_ID.log "
                "(log_statement = all): what a server log would keep of dbform's SQL");
  cmd->callback([flags, &exit_code] {
    run_sim(*flags);
    exit_code = 0;
  });
}

}  // namespace dbform::cli
