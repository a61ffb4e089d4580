#pragma once
// The databases behind the simulator's services (`dbform sim --postgres`, docs/simulator.md): the
// simulator's state machine calls this seam as the API calls come; PostgresFleet (pg_fleet.h)
// drives real PostgreSQL servers with PostgreSQL's own tools, the tests use a fake, and without
// --postgres there is none (the simulator stays in memory only).
#include <string>

namespace dbform {

class SimDatabases {
 public:
  virtual ~SimDatabases() = default;

  // The host every endpoint names, e.g. "127.0.0.1".
  virtual std::string host() const = 0;
  // A free loopback port for a new database's endpoint, never handed out twice.
  virtual int reserve_port() = 0;

  // Each of these returns at once; the work runs in the background, one operation after another
  // per database, in the order of the calls. `id` is a service id or a read replica set id.
  // A new database whose tsdbadmin logs in to tsdb with `password`.
  virtual void create(const std::string& id, int port, const std::string& password) = 0;
  // A new database from a copy of `source_id`'s data as it is now, with its own password.
  virtual void fork(const std::string& id, int port, const std::string& source_id, const std::string& password) = 0;
  // A read-only streaming standby of `primary_id`.
  virtual void replica(const std::string& id, int port, const std::string& primary_id) = 0;
  // tsdbadmin's new password; in force when this returns if the database is running (else from its
  // next start).
  virtual void set_password(const std::string& id, const std::string& password) = 0;
  virtual void stop(const std::string& id) = 0;   // connections are refused once settled
  virtual void start(const std::string& id) = 0;  // accepting connections once settled
  virtual void remove(const std::string& id) = 0;  // stopped, its files removed (its pooler closed)
  // The connection pooler (enablePooler): connections to `port` (one reserve_port gave) reach the
  // database's server, from when this returns until disable_pooler or remove.
  virtual void enable_pooler(const std::string& id, int port) = 0;
  virtual void disable_pooler(const std::string& id) = 0;

  // Whether the database is as the last call asked: running and accepting connections (or, with the
  // ready-before-connectable fault, about to be), or stopped. READY, PAUSED and a replica set's
  // `active` wait for it.
  virtual bool settled(const std::string& id) const = 0;
};

}  // namespace dbform
