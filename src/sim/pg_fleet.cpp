#include "sim/pg_fleet.h"

#include <arpa/inet.h>
#include <libpq-fe.h>
#include <netinet/in.h>
#include <pwd.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstring>
#include <deque>
#include <filesystem>
#include <fstream>
#include <future>
#include <optional>
#include <sstream>
#include <thread>

#include "sim/tls_cert.h"
#include "util/atomic_file.h"
#include "util/crypto.h"
#include "util/error.h"
#include "util/log.h"

namespace dbform::sim {

namespace fs = std::filesystem;

struct PostgresFleet::Db {
  std::string id;
  std::string data_dir;
  int port = 0;
  std::string password;
  bool standby = false;
  int pending = 0;             // calls whose work has not settled yet
  bool failed = false;         // a task failed: it never settles (the simulator's log says why)
  bool running = false;
  bool removed = false;
  std::deque<std::pair<Db*, Task>> tasks;
  std::thread worker;
};

namespace {

// Whether the task running on this worker thread has counted itself settled already (the
// ready-before-connectable fault). Per task, not per database: a fork's copy runs on its source's
// worker while its start may already run on its own, and a flag on the fork shared by the two once
// let the copy skip its own decrement, so the fork never settled (CONFIGURING for ever).
thread_local bool* running_task_settled = nullptr;

// The superuser only through the socket, with the fleet's password (replication only as the
// servers' own OS user, mapped to `postgres`: a standby's walreceiver and pg_basebackup); everyone
// else only over TLS with a SCRAM password, once `open`: a server starts closed, and opens once
// tsdbadmin has its password (a login in between would meet the template's, or the fork
// source's, password).
std::string hba(bool open) {
  const std::string others = open ? "scram-sha-256" : "reject";
  return "local   all          postgres                 scram-sha-256\n"
         "local   replication  postgres                 peer map=fleet\n"
         "host    all          postgres  0.0.0.0/0      reject\n"
         "host    all          postgres  ::/0           reject\n"
         "hostssl all          all       127.0.0.1/32   " + others + "\n"
         "hostssl all          all       ::1/128        " + others + "\n";
}

// The OS user the servers run as, which alone may replicate as `postgres` (peer authentication).
std::string ident(const RunAs& as) {
  std::string name = as.name;
  if (name.empty())
    if (const struct passwd* pw = ::getpwuid(::geteuid())) name = pw->pw_name;
  return "fleet   " + name + "   postgres\n";
}

struct FleetConnection {
  PGconn* conn = nullptr;
  ~FleetConnection() {
    if (conn) PQfinish(conn);
  }
};

// The superuser's connection through the socket, with the fleet's password, to `database`.
PGconn* connect_superuser(const std::string& socket, int port, const std::string& password,
                          const char* database = "postgres") {
  const std::string p = std::to_string(port);
  const char* keys[] = {"host", "port", "user", "dbname", "password", "connect_timeout", nullptr};
  const char* values[] = {socket.c_str(), p.c_str(), "postgres", database, password.c_str(), "10", nullptr};
  return PQconnectdbParams(keys, values, 0);
}

void exec(PGconn* conn, const std::string& sql, const std::string& what) {
  PGresult* result = PQexec(conn, sql.c_str());
  const bool ok = PQresultStatus(result) == PGRES_COMMAND_OK || PQresultStatus(result) == PGRES_TUPLES_OK;
  const std::string error = ok ? "" : output_tail(PQresultErrorMessage(result));
  PQclear(result);
  if (!ok) throw Error(what + " failed: " + error);
}

}  // namespace

PostgresFleet::PostgresFleet(PostgresFleetOptions options) : options_(std::move(options)) {
  bindir_ = find_pg_bindir();
  account_ = server_account();
  superuser_password_ = hex(random_bytes(24));
  if (landlock_abi() == 0)
    log::warn("sim: this kernel offers no Landlock: the PostgreSQL servers run unconfined, and SQL that gains "
              "pg_execute_server_program or pg_read_server_files reaches this machine's files");
  dir_ = options_.dir.empty() ? default_fleet_dir("sim") : options_.dir;
  take_directory();
  try {
    make_template();
  } catch (...) {
    shutdown();
    throw;
  }
}

PostgresFleet::~PostgresFleet() { shutdown(); }

void PostgresFleet::make_template() {
  const std::string tmpl = dir_ + "/template";
  // WAL segments of 1 MB instead of 16: every copy, fork and standby writes less.
  // The superuser's password reaches initdb in a file of the account's that lives only as long as it runs.
  const std::string pwfile = dir_ + "/superuser-password";
  write_file_atomically(pwfile, superuser_password_ + "\n", 0600);
  give_to(pwfile, account_);
  const ProgramResult made = tool({bindir_ + "/initdb", "-D", tmpl, "-U", "postgres", "-E", "UTF8", "--locale=C",
                                   "--auth-local=scram-sha-256", "--auth-host=reject", "--pwfile=" + pwfile, "-N",
                                   "--wal-segsize=1"});
  std::error_code removed;
  fs::remove(pwfile, removed);
  check(made, "initdb of the template");
  write_self_signed_certificate(dir_ + "/tls/server.crt", dir_ + "/tls/server.key");
  std::string conf = read_text(tmpl + "/postgresql.conf");
  conf += "\n# dbform sim --postgres\n"
          "listen_addresses = '127.0.0.1'\n"
          "unix_socket_directories = '" + socket_dir() + "'\n"
          "unix_socket_permissions = 0700\n"
          "ssl = on\n"
          "ssl_cert_file = '" + dir_ + "/tls/server.crt'\n"
          "ssl_key_file = '" + dir_ + "/tls/server.key'\n"
          "password_encryption = 'scram-sha-256'\n"
          "fsync = off\nsynchronous_commit = off\nfull_page_writes = off\n"
          "shared_buffers = '16MB'\nmax_connections = 30\nmax_wal_senders = 5\nwal_level = replica\n"
          "hot_standby = on\nlogging_collector = off\n"
          // As on the real service: statistics of statements, its extension made in tsdb below.
          "shared_preload_libraries = 'pg_stat_statements'\n"
          // Confined to its own files (sim/confine.h): dynamic shared memory in the data directory,
          // not in /dev/shm where every server's would be; no look at /proc/meminfo for huge pages.
          "dynamic_shared_memory_type = mmap\nhuge_pages = off\n";
  if (options_.log_statements) conf += "log_statement = 'all'\n";
  write_file_atomically(tmpl + "/postgresql.conf", conf, 0600);
  write_file_atomically(tmpl + "/pg_hba.conf", hba(false), 0600);
  write_file_atomically(tmpl + "/pg_ident.conf", ident(account_), 0600);
  give_to(dir_ + "/tls", account_);
  give_to(tmpl, account_);
  Db& db = add_db("template", reserve_port(), "");
  {
    std::lock_guard<std::mutex> lock(mu_);
    db.data_dir = tmpl;
  }
  start_server(db, /*standby=*/true);
  FleetConnection c;
  c.conn = connect_superuser(socket_dir(), db.port, superuser_password_);
  if (PQstatus(c.conn) != CONNECTION_OK) throw Error("connecting to the template failed: " + output_tail(PQerrorMessage(c.conn)));
  exec(c.conn, "CREATE ROLE tsdbadmin LOGIN CREATEDB CREATEROLE", "creating role tsdbadmin");
  exec(c.conn, "CREATE DATABASE tsdb OWNER tsdbadmin", "creating database tsdb");
  {
    // pg_stat_statements is not a trusted extension: tsdbadmin, who is not a superuser, could not
    // make it, so it is there from the start, as on the real service (an extension a manifest
    // declares is then found, not made).
    FleetConnection tsdb;
    tsdb.conn = connect_superuser(socket_dir(), db.port, superuser_password_, "tsdb");
    if (PQstatus(tsdb.conn) != CONNECTION_OK)
      throw Error("connecting to the template's tsdb failed: " + output_tail(PQerrorMessage(tsdb.conn)));
    exec(tsdb.conn, "CREATE EXTENSION pg_stat_statements", "creating extension pg_stat_statements in tsdb");
  }
  if (const char* v = PQparameterStatus(c.conn, "server_version")) version_ = v;
  stop_server(db, "fast");
  fs::create_directory(dir_ + "/spare");
  give_to(dir_ + "/spare", account_);
  spare_maker_ = std::thread([this] { make_spares(); });
}

void PostgresFleet::make_spares() {
  constexpr size_t kSpares = 2;
  for (int n = 0;; ++n) {
    {
      std::unique_lock<std::mutex> lock(mu_);
      wake_.wait(lock, [&] { return stopping_ || spares_.size() < kSpares; });
      if (stopping_) return;
    }
    const std::string spare = dir_ + "/spare/" + std::to_string(n);
    ProgramResult r = tool({"/bin/cp", "-a", dir_ + "/template", spare});
    if (r.exit_code != 0) {
      log::warn("sim: cannot copy the PostgreSQL template ahead (each database copies it itself): " + output_tail(r.output));
      return;
    }
    std::lock_guard<std::mutex> lock(mu_);
    spares_.push_back(spare);
  }
}

void PostgresFleet::copy_template_to(const std::string& data_dir) {
  std::string spare;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (!spares_.empty()) {
      spare = spares_.front();
      spares_.erase(spares_.begin());
    }
  }
  wake_.notify_all();
  if (!spare.empty()) {
    std::error_code ec;
    fs::rename(spare, data_dir, ec);
    if (!ec) return;
    log::warn("sim: cannot use a copy of the template made ahead (" + ec.message() + "); copying it now");
  }
  check(tool({"/bin/cp", "-a", dir_ + "/template", data_dir}), "copying the template");
}

PostgresFleet::Db& PostgresFleet::add_db(const std::string& id, int port, const std::string& password) {
  std::lock_guard<std::mutex> lock(mu_);
  auto& slot = dbs_[id];
  if (slot) throw Error("the simulator made database " + id + " twice");
  slot = std::make_unique<Db>();
  Db& db = *slot;
  db.id = id;
  db.port = port;
  db.password = password;
  db.data_dir = dir_ + "/db/" + id;
  if (!stopping_) db.worker = std::thread([this, &db] { work(db); });
  return db;
}

PostgresFleet::Db* PostgresFleet::find(const std::string& id) const {
  auto found = dbs_.find(id);
  return found == dbs_.end() ? nullptr : found->second.get();
}

int PostgresFleet::reserve_port() {
  for (int attempt = 0; attempt < 100; ++attempt) {
    const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0) throw Error(std::string("cannot find a free port: socket: ") + std::strerror(errno));
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t size = sizeof address;
    const bool bound = ::bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof address) == 0 &&
                       ::getsockname(fd, reinterpret_cast<sockaddr*>(&address), &size) == 0;
    ::close(fd);
    if (!bound) throw Error(std::string("cannot find a free port on 127.0.0.1: ") + std::strerror(errno));
    const int port = ntohs(address.sin_port);
    std::lock_guard<std::mutex> lock(mu_);
    if (ports_.insert(port).second) return port;
  }
  throw Error("cannot find a free port on 127.0.0.1 that the simulator has not handed out");
}

bool PostgresFleet::enqueue(Db& on, Db* counted, Task task) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (stopping_ || on.removed) return false;
    if (counted) ++counted->pending;
    on.tasks.emplace_back(counted, std::move(task));
  }
  wake_.notify_all();
  return true;
}

void PostgresFleet::work(Db& db) {
  for (;;) {
    std::pair<Db*, Task> next;
    {
      std::unique_lock<std::mutex> lock(mu_);
      wake_.wait(lock, [&] { return stopping_ || !db.tasks.empty(); });
      if (stopping_) return;
      next = std::move(db.tasks.front());
      db.tasks.pop_front();
    }
    bool settled_early = false;
    running_task_settled = &settled_early;
    try {
      next.second(db);
    } catch (const std::exception& e) {
      log::warn("sim: the PostgreSQL server of " + (next.first ? next.first->id : db.id) + ": " + e.what());
      std::lock_guard<std::mutex> lock(mu_);
      if (next.first) next.first->failed = true;
    }
    running_task_settled = nullptr;
    std::lock_guard<std::mutex> lock(mu_);
    if (next.first && !settled_early) --next.first->pending;
    if (db.removed) return;
  }
}

void PostgresFleet::mark_settled(Db& db) {
  std::lock_guard<std::mutex> lock(mu_);
  if (!running_task_settled || *running_task_settled) return;
  --db.pending;
  *running_task_settled = true;
}

ProgramResult PostgresFleet::tool(const std::vector<std::string>& argv) const { return run_program(argv, account_); }

void PostgresFleet::check(const ProgramResult& result, const std::string& what, const std::string& log_file) const {
  if (result.exit_code == 0) return;
  std::string message = what + " failed (exit " + std::to_string(result.exit_code) + "): " + output_tail(result.output);
  if (!log_file.empty()) message += "; the server's log ends: " + output_tail(read_text(log_file));
  throw Error(message);
}

std::string PostgresFleet::log_of(const Db& db) const { return dir_ + "/log/" + db.id + ".log"; }

void PostgresFleet::start_server(Db& db, bool standby) {
  if (options_.ready_before_connectable.count() > 0 && !standby) {
    mark_settled(db);  // READY now, connectable only after the wait and the start
    std::unique_lock<std::mutex> lock(mu_);
    if (wake_.wait_for(lock, options_.ready_before_connectable, [&] { return stopping_; })) return;
  }
  if (!standby) write_file_atomically(db.data_dir + "/pg_hba.conf", hba(false), 0600);
  give_to(db.data_dir + "/pg_hba.conf", account_);
  const pid_t pid = start_confined_daemon({bindir_ + "/postgres", "-D", db.data_dir, "-p", std::to_string(db.port)},
                                          account_, log_of(db), confinement_of(db));
  await_start(db, pid);
  {
    std::lock_guard<std::mutex> lock(mu_);
    db.running = true;
  }
  if (!standby) {
    apply_password(db);
    write_file_atomically(db.data_dir + "/pg_hba.conf", hba(true), 0600);
    give_to(db.data_dir + "/pg_hba.conf", account_);
    check(tool({bindir_ + "/pg_ctl", "reload", "-D", db.data_dir, "-s"}), "reloading pg_hba.conf", log_of(db));
    await_login(db);
  }
  log::info("sim: PostgreSQL server of " + db.id + " accepts connections on 127.0.0.1:" + std::to_string(db.port));
}

Confinement PostgresFleet::confinement_of(const Db& db) const {
  Confinement c;
  c.executable = bindir_ + "/postgres";
  // The kernel opens the ELF interpreter for execution too. A server that could run it could not
  // run a shell through it: every program SQL can start (COPY ... PROGRAM) is started by /bin/sh.
  c.loaders = {"/lib64/ld-linux-x86-64.so.2", "/lib/ld-linux-aarch64.so.1", "/lib/ld-linux-armhf.so.3"};
  c.read_only = {"/usr", "/lib", "/lib64", "/etc/ld.so.cache", "/etc/ssl", "/etc/localtime", "/etc/passwd",
                 "/etc/group", "/etc/nsswitch.conf", "/etc/hosts", dir_ + "/tls",
                 fs::path(bindir_).parent_path().string()};  // a server built elsewhere keeps its lib/ and share/
  c.read_write = {db.data_dir};
  c.socket_dirs = {socket_dir()};
  return c;
}

// What pg_ctl -w does: the server is up once the socket answers a ping (it may refuse logins while
// it starts); a server that exits meanwhile failed, and its log says why.
void PostgresFleet::await_start(Db& db, pid_t pid) {
  const std::string port = std::to_string(db.port), socket = socket_dir();
  const char* keys[] = {"host", "port", "user", "dbname", "connect_timeout", nullptr};
  const char* values[] = {socket.c_str(), port.c_str(), "postgres", "postgres", "5", nullptr};
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  while (std::chrono::steady_clock::now() < deadline) {
    if (PQpingParams(keys, values, 0) == PQPING_OK) return;
    if (::kill(pid, 0) != 0 && errno == ESRCH) break;
    std::unique_lock<std::mutex> lock(mu_);
    if (wake_.wait_for(lock, std::chrono::milliseconds(10), [&] { return stopping_; })) return;
  }
  throw Error("starting the server on port " + port + " failed; the server's log ends: " + output_tail(read_text(log_of(db))));
}

// The reload is asynchronous: the server is settled once tsdbadmin's login over TLS works.
void PostgresFleet::await_login(Db& db) {
  std::string password;
  {
    std::lock_guard<std::mutex> lock(mu_);
    password = db.password;
  }
  const std::string port = std::to_string(db.port);
  const char* keys[] = {"host", "port", "user", "dbname", "password", "sslmode", "connect_timeout", nullptr};
  const char* values[] = {"127.0.0.1", port.c_str(), "tsdbadmin", "tsdb", password.c_str(), "require", "5", nullptr};
  std::string last;
  for (int attempt = 0; attempt < 500; ++attempt) {
    FleetConnection c;
    c.conn = PQconnectdbParams(keys, values, 0);
    if (PQstatus(c.conn) == CONNECTION_OK) return;
    last = output_tail(PQerrorMessage(c.conn));
    std::unique_lock<std::mutex> lock(mu_);
    if (wake_.wait_for(lock, std::chrono::milliseconds(10), [&] { return stopping_; })) return;
  }
  throw Error("tsdbadmin cannot log in after the start: " + last);
}

void PostgresFleet::stop_server(Db& db, const char* mode) {
  check(tool({bindir_ + "/pg_ctl", "stop", "-D", db.data_dir, "-m", mode, "-w", "-t", "60", "-s"}),
        "stopping the server", log_of(db));
  std::lock_guard<std::mutex> lock(mu_);
  db.running = false;
}

// The password is turned into a SCRAM verifier here (PQencryptPasswordConn): the server, its log
// and the statement never see it in the clear.
void PostgresFleet::apply_password(Db& db) {
  std::string password;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (!db.running) return;  // set by its next start
    password = db.password;
  }
  FleetConnection c;
  c.conn = connect_superuser(socket_dir(), db.port, superuser_password_);
  if (PQstatus(c.conn) != CONNECTION_OK) throw Error("setting the password: " + output_tail(PQerrorMessage(c.conn)));
  char* verifier = PQencryptPasswordConn(c.conn, password.c_str(), "tsdbadmin", "scram-sha-256");
  if (!verifier) throw Error("setting the password: " + output_tail(PQerrorMessage(c.conn)));
  char* literal = PQescapeLiteral(c.conn, verifier, std::strlen(verifier));
  PQfreemem(verifier);
  if (!literal) throw Error("setting the password: " + output_tail(PQerrorMessage(c.conn)));
  const std::string sql = std::string("ALTER ROLE tsdbadmin PASSWORD ") + literal;
  PQfreemem(literal);
  exec(c.conn, sql, "setting the password");
}

void PostgresFleet::base_backup(Db& source, Db& target, bool standby) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (!source.running) throw Error("copying " + source.id + ": it is not running");
  }
  std::vector<std::string> argv = {bindir_ + "/pg_basebackup", "-D", target.data_dir, "-h", socket_dir(), "-p",
                                   std::to_string(source.port), "-U", "postgres", "-c", "fast", "-X", "stream", "-N"};
  if (standby) argv.push_back("-R");
  check(tool(argv), "pg_basebackup of " + source.id);
}

void PostgresFleet::create(const std::string& id, int port, const std::string& password) {
  Db& db = add_db(id, port, password);
  enqueue(db, &db, [this](Db& d) {
    copy_template_to(d.data_dir);
    start_server(d, false);
  });
}

void PostgresFleet::fork(const std::string& id, int port, const std::string& source_id, const std::string& password) {
  copy_into(add_db(id, port, password), source_id, false,
            "sim: cannot fork " + source_id + " into " + id + ": it has no PostgreSQL server");
}

void PostgresFleet::replica(const std::string& id, int port, const std::string& primary_id) {
  copy_into(add_db(id, port, ""), primary_id, true,
            "sim: cannot make a standby of " + primary_id + " for " + id + ": it has no PostgreSQL server");
}

void PostgresFleet::copy_into(Db& target, const std::string& source_id, bool standby, const std::string& no_source) {
  Db* source = nullptr;
  {
    std::lock_guard<std::mutex> lock(mu_);
    target.standby = standby;
    source = find(source_id);
  }
  if (!source) {
    log::warn(no_source);
    std::lock_guard<std::mutex> lock(mu_);
    target.failed = true;
    return;
  }
  // On the source's worker, after what it was asked before: the copy is of its data at this call.
  const bool queued = enqueue(*source, &target, [this, &target, standby](Db& s) {
    base_backup(s, target, standby);
    enqueue(target, &target, [this, standby](Db& t) { start_server(t, standby); });
  });
  if (!queued) {  // its source is being removed (or the fleet stops): the copy never settles
    std::lock_guard<std::mutex> lock(mu_);
    target.failed = true;
  }
}

void PostgresFleet::set_password(const std::string& id, const std::string& password) {
  Db* db = nullptr;
  {
    std::lock_guard<std::mutex> lock(mu_);
    db = find(id);
    if (!db) return;
    db->password = password;
  }
  // In force when the call returns, as the API's 204 promises (unless the server is busy starting).
  auto done = std::make_shared<std::promise<void>>();
  auto future = done->get_future();
  const bool queued = enqueue(*db, nullptr, [this, done](Db& d) {
    try {
      apply_password(d);
    } catch (...) {
      done->set_value();
      throw;
    }
    done->set_value();
  });
  if (queued) future.wait_for(std::chrono::seconds(10));
}

void PostgresFleet::stop(const std::string& id) {
  std::unique_lock<std::mutex> lock(mu_);
  Db* db = find(id);
  lock.unlock();
  if (db) enqueue(*db, db, [this](Db& d) { stop_server(d, "fast"); });
}

void PostgresFleet::start(const std::string& id) {
  std::unique_lock<std::mutex> lock(mu_);
  Db* db = find(id);
  lock.unlock();
  if (db) enqueue(*db, db, [this](Db& d) { start_server(d, d.standby); });
}

void PostgresFleet::remove(const std::string& id) {
  disable_pooler(id);
  std::unique_lock<std::mutex> lock(mu_);
  Db* db = find(id);
  lock.unlock();
  if (!db) return;
  enqueue(*db, db, [this](Db& d) {
    if (live_postmaster(d.data_dir)) stop_server(d, "immediate");
    fs::remove_all(d.data_dir);
    fs::remove(log_of(d));
    std::lock_guard<std::mutex> lock(mu_);
    d.removed = true;
  });
}

void PostgresFleet::enable_pooler(const std::string& id, int port) {
  std::lock_guard<std::mutex> lock(mu_);
  const Db* db = find(id);
  if (!db || stopping_ || poolers_.count(id)) return;
  try {
    poolers_[id] = std::make_unique<TcpForwarder>(port, db->port);
  } catch (const std::exception& e) {
    log::warn("sim: the pooler of " + id + ": " + e.what());
  }
}

void PostgresFleet::disable_pooler(const std::string& id) {
  std::unique_ptr<TcpForwarder> pooler;  // stopped outside the lock: it joins its threads
  {
    std::lock_guard<std::mutex> lock(mu_);
    auto found = poolers_.find(id);
    if (found == poolers_.end()) return;
    pooler = std::move(found->second);
    poolers_.erase(found);
  }
}

bool PostgresFleet::settled(const std::string& id) const {
  std::lock_guard<std::mutex> lock(mu_);
  const Db* db = find(id);
  return db && !db->failed && db->pending == 0;
}

void PostgresFleet::shutdown() {
  std::call_once(shut_, [this] {
    {
      std::lock_guard<std::mutex> lock(mu_);
      stopping_ = true;
    }
    wake_.notify_all();
    std::map<std::string, std::unique_ptr<TcpForwarder>> poolers;
    {
      std::lock_guard<std::mutex> lock(mu_);
      poolers.swap(poolers_);
    }
    poolers.clear();  // each stops accepting and cuts its connections
    if (spare_maker_.joinable()) spare_maker_.join();
    for (auto& [id, db] : dbs_)
      if (db->worker.joinable()) db->worker.join();
    // Every server it started, side by side: an immediate stop, since their files go next.
    std::vector<std::thread> stoppers;
    for (auto& [id, db] : dbs_) {
      if (!live_postmaster(db->data_dir)) continue;
      stoppers.emplace_back([this, data_dir = db->data_dir] {
        ProgramResult r = tool({bindir_ + "/pg_ctl", "stop", "-D", data_dir, "-m", "immediate", "-w", "-t", "60", "-s"});
        if (r.exit_code != 0 && live_postmaster(data_dir))
          log::warn("sim: could not stop the PostgreSQL server in " + data_dir + ": " + output_tail(r.output));
      });
    }
    for (auto& t : stoppers) t.join();
    std::error_code ec;
    fs::remove_all(dir_, ec);
    if (ec) log::warn("sim: could not remove " + dir_ + ": " + ec.message());
    if (lock_fd_ >= 0) ::close(lock_fd_);
    lock_fd_ = -1;
  });
}

}  // namespace dbform::sim
