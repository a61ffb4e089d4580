#pragma once
// The connection pooler's endpoint under `dbform sim --postgres`: connections to a port of
// 127.0.0.1 reach another port of 127.0.0.1 (the service's PostgreSQL server), byte for byte. TLS
// and the SCRAM login pass through untouched, so the pooler's connection string logs in exactly as
// the service's does, to the same data. (The real pooler is PgBouncer in transaction mode; what a
// pipeline needs of it offline is that its endpoint reaches the service.) A PostgreSQL server
// listens on one port only, hence a forwarder rather than a second port of the server.
#include <netinet/in.h>

#include <atomic>
#include <memory>
#include <mutex>
#include <set>
#include <thread>
#include <vector>

namespace dbform::sim {

// The address of 127.0.0.1:`port` (0: any free port, when bound).
sockaddr_in loopback_address(int port);

class TcpForwarder {
 public:
  // Listens on 127.0.0.1:`listen_port` at once; throws Error naming the port when it cannot.
  TcpForwarder(int listen_port, int target_port);
  // Stops accepting, cuts every connection it carries and joins its threads.
  ~TcpForwarder();
  TcpForwarder(const TcpForwarder&) = delete;
  TcpForwarder& operator=(const TcpForwarder&) = delete;

  int listen_port() const { return listen_port_; }

 private:
  void accept_loop();
  // Copies bytes both ways until either side closes; then closes both.
  void carry(int client, int server);

  int listen_port_;
  int target_port_;
  int listener_ = -1;
  std::mutex mu_;  // guards everything below
  bool stopping_ = false;
  std::set<int> open_;  // the sockets of the connections carried now (cut by the destructor)
  struct Carrier {
    std::thread thread;
    std::shared_ptr<std::atomic<bool>> done;  // its connection ended: joined at the next accept
  };
  std::vector<Carrier> carriers_;
  std::thread acceptor_;
};

}  // namespace dbform::sim
