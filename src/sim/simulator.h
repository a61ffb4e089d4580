#pragma once
// The local API simulator: the vendor API's calls that dbform makes, in memory, with seeded fault
// injection. Simulator is the transport-free core (testable without sockets); SimServer serves it
// over HTTP on loopback with cpp-httplib.
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "sim/databases.h"
#include "util/clock.h"

namespace dbform {

struct SimKey {
  std::string key;         // the whole secret as sent after "Bearer " (or base64-decoded after "Basic ")
  std::string project_id;  // the project the key belongs to
  std::string name = "sim-key";  // AuthInfo api_key.name
};

// A fault on every call of one route from its `from`th call on (counted as request_counts counts
// them), `times` calls long (0: every call from then on).
struct RouteFault {
  enum class Kind {
    LoseAnswer,      // performed, then the connection closes before one byte of the answer
    GatewayTimeout,  // performed, then a gateway answers 504
    Refuse,          // answered 422 before anything is done
    EmptyList,       // a list answered 200 [] without looking (a replica of the API behind the writes)
  };
  std::string route;  // e.g. "POST /projects/{project_id}/services/{service_id}/updatePassword"
  Kind kind = Kind::LoseAnswer;
  long long from = 1;
  long long times = 0;
};

struct SimFaults {
  double error_rate = 0.0;          // share of API calls answered 500 (before doing anything)
  Duration latency{0};              // added to every answer
  int rate_limit_every = 0;         // every Nth API call is answered 429 with Retry-After
  int retry_after_seconds = 1;
  // Service names (glob with *), and read replica set names likewise (creating, error, creating):
  std::vector<std::string> stuck;     // never leave CONFIGURING
  std::vector<std::string> deleted;   // end DELETED instead of READY
  std::vector<std::string> unstable;  // UNSTABLE for one configuring_delay before READY
  int drop_create_every = 0;        // every Nth create (of any kind) is performed but its connection dropped
  // The faults of real networks (docs/simulator.md). Every Nth create (of any kind, counted together
  // with drop_create_every; the first that matches decides) is performed, and then:
  int lose_answer_every = 0;      // the connection closes before one byte of the answer (a client that
                                  // re-sends on a reused connection performs it twice)
  int gateway_timeout_every = 0;  // a gateway answers 504 although the backend committed it
  Duration list_lag{0};           // lists show a new resource of any kind only this long after its create
  Duration create_answer_delay{0};  // a create's answer leaves this long after it was performed
  bool garbled_errors = false;    // error bodies carry bytes that are not valid UTF-8
  // Hostile answers (as a broken or malicious API, or a proxy, would send them):
  int deep_answer_every = 0;      // every Nth successful GET carries an unknown field nested 200,000 deep
  int huge_answer_every = 0;      // every Nth successful GET is a gzip body of 1 GiB once decompressed
  bool echo_secrets = false;      // error answers quote the request's Authorization header and body
  bool escape_statuses = false;   // statuses other than READY carry terminal escape sequences
  // Answers that echo the password inside objects a client keeps: a service's (and a fork's)
  // `metadata.details` and `connection_pooler.details`, and a read replica set's (its service's).
  bool echo_password_in_details = false;
  // A deleted peering stays listed (and readable) as `deleting` for deleting_delay, as a real
  // one does while its routes are torn down; off: it is gone at the delete's answer.
  bool peerings_linger = false;
  // Non-empty: the host every service's endpoint (VPC endpoint) is answered with (hostile text, a `*`).
  std::string endpoint_host;
  std::string vpc_endpoint_host;
  std::vector<RouteFault> routes;  // faults on the calls of one route (updates, deletes, any call)
};

struct SimConfig {
  std::vector<SimKey> keys;
  Duration queued_delay{1000};       // QUEUED for this long after the create
  Duration configuring_delay{2000};  // then CONFIGURING for this long, then READY
  Duration upgrading_delay{2000};    // UPGRADING for this long after resize, setHA, attach or detach
  Duration deleting_delay{1000};     // DELETING for this long after a delete, then gone (404)
  unsigned seed = 1;
  SimFaults faults;
};

// Reads a small YAML config: keys (key, project, name), delays, seed and faults. Throws UsageError
// naming file:line:col and, for an unknown key, the closest known one.
SimConfig load_sim_config(const std::string& path);

struct SimRequest {
  std::string method;
  std::string path;           // without the base path prefix, e.g. "/projects/p1/services"
  std::string authorization;  // the Authorization header value
  std::string body;
};

struct SimResponse {
  int status = 200;
  std::string body;  // JSON
  std::map<std::string, std::string> headers;
  bool drop_connection = false;  // the work was done but the answer must never arrive (headers, then a cut)
  bool lose_answer = false;      // the work was done and the connection closes before any byte
  Duration delay{0};             // the answer leaves this long after the work was done
};

class Simulator {
 public:
  // `databases` (not owned; may be null): the real databases behind the services (--postgres).
  Simulator(SimConfig config, Clock& clock, SimDatabases* databases = nullptr);
  ~Simulator();
  // Thread-safe. Applies the configured faults.
  SimResponse handle(const SimRequest& request);

  // Calls per route template, e.g. {"POST /projects/{project_id}/services": 3}; debug route
  // GET /_sim/requests serves the same.
  nlohmann::json request_counts() const;
  // Every service of every project, as the API shows it (GET /_sim/services).
  nlohmann::json all_services() const;
  nlohmann::json all_vpcs() const;  // GET /_sim/vpcs; each Vpc with its project_id added
  // The password a service has now (its initial one, or the last set by updatePassword); "" for an
  // unknown id. For tests: never served over HTTP.
  std::string current_password(const std::string& service_id) const;
  // The body of the last request on a route ("POST /projects/{project_id}/services/{service_id}/forkService"),
  // "" when none came. For tests: never served over HTTP.
  std::string last_body(const std::string& route) const;
  // Every call of the API the simulator serves, as counted ("POST /projects/{project_id}/services"):
  // docs/simulator.md lists exactly these.
  static const std::vector<std::string>& served_calls();
  // A change made "outside dbform" (in the console): `action` is one of resize ({"cpu_millis",
  // "memory_gbs"}, numbers or digit strings), setEnvironment, setHA, enablePooler, disablePooler,
  // attachToVPC, detachFromVPC, rename (bodies as in the API), stop, start (no body: PAUSED or
  // READY at once) or delete. Done at once, without UPGRADING or DELETING, without a key (POST
  // /_sim/services/{id}/{action}). Returns the answer: 200 with the service, or an error.
  SimResponse console(const std::string& service_id, const std::string& action, const std::string& body);
  // A service or VPC created "outside dbform" (POST /_sim/projects/{project_id}/services or /vpcs,
  // bodies as in the API), READY at once, without a key; not counted as an API call. The answer
  // carries the new resource (a service's initial password included) or the 400.
  SimResponse console_create(const std::string& project_id, const std::string& kind, const std::string& body);
  // A change to a read replica set or peering made in the console (POST /_sim/replica_sets/{id}/
  // {action} or /_sim/peerings/{id}/{action}): a replica set takes the actions of `console` that
  // it has (resize, setEnvironment, enablePooler, disablePooler, delete), at once; a peering is
  // accepted by its peer (`accept`: active) or fails (`fail`, {"error_message"}). `kind` is
  // "replica_sets" or "peerings". Returns 200 with the resource, or an error.
  SimResponse console_nested(const std::string& kind, const std::string& id, const std::string& action,
                             const std::string& body);
  // Every live read replica set with its service_id (GET /_sim/replica_sets); every peering with
  // its vpc_id (GET /_sim/peerings).
  nlohmann::json all_replica_sets() const;
  nlohmann::json all_peerings() const;
  // Replaces the route faults from the next call on (a test changing the network mid-way).
  void set_route_faults(std::vector<RouteFault> faults);
  // How often each injected fault happened, e.g. {"lost answer": 2} (GET /_sim/faults).
  nlohmann::json fault_counts() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// The certificate (chain) and private key, PEM files, of a simulator that serves HTTPS.
struct SimTls {
  std::string cert_file, key_file;
};

// Serves a Simulator over HTTP at base path /public/api/v1 (and at /, for convenience); over
// HTTPS when given `tls`.
class SimServer {
 public:
  // `connection_delay`: what a new connection costs, spent before its first request is answered
  // (a TLS handshake with a remote API costs tens of milliseconds; loopback costs nothing).
  // Throws Error naming the files when `tls`'s certificate and key cannot be loaded.
  explicit SimServer(Simulator& sim, Duration connection_delay = Duration(0),
                     const std::optional<SimTls>& tls = std::nullopt);
  ~SimServer();
  // Binds host:port (port 0 picks a free one), starts serving on a background thread and returns
  // the bound port. Throws Error when it cannot bind.
  int start(const std::string& host, int port);
  void stop();
  // Blocks serving until stop() is called from another thread or a signal handler.
  void wait();
  // The connections that were charged connection_delay (each new one, when it is set).
  long long connections_charged() const;
  // Called on the serving thread of every API request (not the /_sim/ routes) once the simulator
  // has performed it and before its answer is written, so that a test can act at an observed point
  // (kill the client while that answer is on its way) and hold the answer back until it has.
  // Empty: none. Safe to change while serving.
  void set_observer(std::function<void(const SimRequest&)> observer);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace dbform
