#pragma once
// Real PostgreSQL servers behind the simulator's services (`dbform sim --postgres`,
// docs/simulator.md), driven only with PostgreSQL's own tools (initdb, pg_ctl, pg_basebackup) and libpq.
//
// Everything lives under one directory: a lock (one simulator per directory), the TLS certificate,
// one `initdb` template made when the fleet starts (each new database is a copy of it, not a new
// initdb, so it costs well under a second), the data directories, their logs and one socket
// directory. The superuser `postgres` logs in only through that socket (mode 0700), with a SCRAM
// password only the fleet knows (replication: only as the servers' own OS user); over TCP only TLS
// with a SCRAM password is accepted, and `tsdbadmin` owns database `tsdb`. Each server runs
// confined (sim/confine.h): whatever SQL reaches it runs no program and reads no file of another.
#include <atomic>
#include <condition_variable>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "sim/confine.h"

#include "sim/databases.h"
#include "sim/pg_programs.h"
#include "sim/tcp_forwarder.h"
#include "util/duration.h"

namespace dbform::sim {

struct PostgresFleetOptions {
  std::string dir;  // all its files; removed by shutdown(). Must be empty, absent or a fleet's own
  // READY is reported this long before the server accepts connections (a fault the real service
  // shows now and then): creates, forks and resumes report settled, wait, then start the server.
  Duration ready_before_connectable{0};
  // Every server logs every statement it runs (log_statement = all) to its log file.
  bool log_statements = false;
};

// The default directory of a simulator's servers: ${TMPDIR:-/tmp}/dbform-NAME-postgres-UID, so that
// a simulator started again after being killed finds (and stops) what the killed one left.
std::string default_fleet_dir(const std::string& name);

class PostgresFleet : public SimDatabases {
 public:
  // Locks `options.dir` (throws Error naming the holder when another simulator has it), stops any
  // server a killed simulator left there, empties it, makes the certificate and the template.
  // Throws Error naming the step and the program's output when one fails.
  explicit PostgresFleet(PostgresFleetOptions options);
  ~PostgresFleet() override;
  PostgresFleet(const PostgresFleet&) = delete;
  PostgresFleet& operator=(const PostgresFleet&) = delete;

  // Stops every server it started (whatever it was doing) and removes the directory. Idempotent.
  void shutdown();
  const std::string& dir() const { return dir_; }
  const std::string& server_version() const { return version_; }

  std::string host() const override { return "127.0.0.1"; }
  int reserve_port() override;
  void create(const std::string& id, int port, const std::string& password) override;
  void fork(const std::string& id, int port, const std::string& source_id, const std::string& password) override;
  void replica(const std::string& id, int port, const std::string& primary_id) override;
  void set_password(const std::string& id, const std::string& password) override;
  void stop(const std::string& id) override;
  void start(const std::string& id) override;
  void remove(const std::string& id) override;
  void enable_pooler(const std::string& id, int port) override;
  void disable_pooler(const std::string& id) override;
  bool settled(const std::string& id) const override;

 private:
  struct Db;
  using Task = std::function<void(Db&)>;

  void take_directory();
  void make_template();
  // Copies of the template made ahead, in the background (a copy costs a few tenths of a second of
  // disk writes): a new database takes one by a rename.
  void make_spares();
  void copy_template_to(const std::string& data_dir);
  Db& add_db(const std::string& id, int port, const std::string& password);
  Db* find(const std::string& id) const;
  // Runs `task` on `on`'s worker after what is queued there; `counted` (when not null) is unsettled
  // until it ends.
  bool enqueue(Db& on, Db* counted, Task task);  // false when it is stopping or `on` is removed
  void work(Db& db);
  void mark_settled(Db& db);
  // pg_ctl start; then tsdbadmin's password unless `standby`. With the fault, settled first.
  void start_server(Db& db, bool standby);
  void stop_server(Db& db, const char* mode);
  void apply_password(Db& db);
  void await_login(Db& db);
  // Waits until the server started as `pid` accepts connections (or fails: its log says why).
  void await_start(Db& db, pid_t pid);
  // What the server of `db` may read, write and execute.
  Confinement confinement_of(const Db& db) const;
  void base_backup(Db& source, Db& target, bool standby);
  // Makes `target` a copy of `source_id`'s data (`standby`: a streaming standby of it) and starts
  // it; when the source has no server, `no_source` is warned and `target` fails.
  void copy_into(Db& target, const std::string& source_id, bool standby, const std::string& no_source);
  ProgramResult tool(const std::vector<std::string>& argv) const;
  void check(const ProgramResult& result, const std::string& what, const std::string& log_file = "") const;
  std::string socket_dir() const { return dir_ + "/sock"; }
  std::string log_of(const Db& db) const;

  PostgresFleetOptions options_;
  std::string dir_;
  std::string bindir_;
  RunAs account_;
  std::string superuser_password_;  // in memory only: no file, no server's log
  std::string version_;
  int lock_fd_ = -1;

  mutable std::mutex mu_;  // guards everything below and every Db's fields
  std::map<std::string, std::unique_ptr<Db>> dbs_;
  std::set<int> ports_;
  std::map<std::string, std::unique_ptr<TcpForwarder>> poolers_;  // database id -> its pooler's endpoint
  std::vector<std::string> spares_;  // ready copies of the template
  std::thread spare_maker_;
  bool stopping_ = false;
  std::condition_variable wake_;  // a task queued, or stopping_ (the fault's wait too)
  std::once_flag shut_;
};

}  // namespace dbform::sim
