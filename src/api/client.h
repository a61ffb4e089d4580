#pragma once
// Typed client for the calls dbform uses. Reads are retried on transient failures (connection
// errors, time-outs, 429, 5xx) with exponential backoff, jitter and Retry-After. Creates are retried
// only when the failure proves nothing was created (connection refused, 429); any other failure
// after the request may have left is reported as an ApiError with outcome_unknown() set, and the
// caller must look for the resource by name before creating it again.
#include <atomic>
#include <functional>
#include <mutex>
#include <optional>
#include <random>
#include <string>
#include <unordered_set>
#include <vector>

#include "api/models.h"
#include "http/transport.h"
#include "util/clock.h"
#include "util/error.h"

namespace dbform {

class ApiError : public Error {
 public:
  ApiError(std::string what, int status, std::string method, std::string path, std::string api_message,
           bool outcome_unknown)
      : Error(std::move(what)),
        status_(status),
        method_(std::move(method)),
        path_(std::move(path)),
        api_message_(std::move(api_message)),
        outcome_unknown_(outcome_unknown) {}
  int status() const { return status_; }  // 0 when no HTTP response arrived
  const std::string& method() const { return method_; }
  const std::string& path() const { return path_; }
  const std::string& api_message() const { return api_message_; }
  // For creates: the request may have been performed although no success was seen.
  bool outcome_unknown() const { return outcome_unknown_; }

 private:
  int status_;
  std::string method_, path_, api_message_;
  bool outcome_unknown_;
};

enum class AuthScheme { Bearer, Basic };

struct RetryPolicy {
  int max_attempts = 6;  // total tries of one call
  Duration initial_backoff{500};
  Duration max_backoff{30'000};
  unsigned seed = 0;  // jitter; 0 means seeded from the clock
};

// One HTTP exchange as the client saw it, for DBFORM_LOG=debug and trace. Every text in it is
// scrubbed (no key, no password the process knows) and a service's initial_password is masked.
struct Exchange {
  std::string method;
  std::string url;         // base URL and path, any password in it removed
  int status = 0;          // 0: no answer (`error` says why)
  Duration took{0};
  int attempt = 1;
  std::string request_id;  // from x-request-id or request-id, when the API sends one
  std::string error;
  std::string retry;       // why and how long it waits before the next attempt; "" when it does not
  std::string request_body, response_body;
};
using ExchangeLog = std::function<void(const Exchange&)>;

// Where the calls of a kind go whose API is the plain REST shape (VPCs, peerings): the path of its
// list below its project, "{parent}" standing for the id of what it lives in ("/vpcs",
// "/vpcs/{parent}/peerings"); the field of an object's id; how messages name one and a list; and
// the field names its answers are read with (nullptr: api_field_names(); a kind with fields that
// list does not hold names every field it reads here).
struct ApiRoute {
  const char* collection = nullptr;
  const char* id_field = "id";
  const char* what = "";
  const char* items = "";
  const std::unordered_set<std::string>* fields = nullptr;
};
inline constexpr ApiRoute kVpcRoute{"/vpcs", "id", "VPC", "VPCs", nullptr};
inline constexpr ApiRoute kPeeringRoute{"/vpcs/{parent}/peerings", "id", "peering", "peerings", nullptr};

class ApiClient {
 public:
  ApiClient(Transport& transport, Clock& clock, std::string base_url, AuthScheme scheme = AuthScheme::Bearer,
            RetryPolicy retry = {});

  AuthInfo auth_info(const std::string& key);
  Service create_service(const std::string& key, const std::string& project_id, const ServiceCreateRequest& req);
  // POST .../services/{source_id}/forkService with a ForkServiceCreate body: a create (sent at most
  // once, never replayed), answered with the new Service.
  Service fork_service(const std::string& key, const std::string& project_id, const std::string& source_id,
                       const nlohmann::json& body);
  std::optional<Service> get_service(const std::string& key, const std::string& project_id,
                                     const std::string& service_id);  // nullopt on 404
  std::vector<Service> list_services(const std::string& key, const std::string& project_id);
  // POST .../services/{id}/updatePassword; idempotent (the same password again changes nothing),
  // so retried like a read. The password never appears in an error message.
  void update_password(const std::string& key, const std::string& project_id, const std::string& service_id,
                       const std::string& password);

  // An update on a service: POST .../services/{id}/{action} (resize, setEnvironment, setHA,
  // attachToVPC, detachFromVPC, enablePooler, disablePooler) with `body`, or no body when null.
  // Idempotent, so retried like a read. The Service when the answer is one (resize and setHA
  // answer it), else nullopt (a SuccessMessage).
  std::optional<Service> update_service(const std::string& key, const std::string& project_id,
                                        const std::string& service_id, const std::string& action,
                                        const nlohmann::json& body);

  // DELETE of a service (202, then DELETING until gone). Idempotent, so retried like a read.
  // False when it was gone already (404).
  bool delete_service(const std::string& key, const std::string& project_id, const std::string& service_id);

  // A service's read replica sets (.../services/{service_id}/replicaSets). The document has no GET
  // of one set: the list answers for it. The create is a create (sent at most once, never
  // replayed); the calls after .../replicaSets/{id}/ (resize, enablePooler, disablePooler,
  // setEnvironment) answer a SuccessMessage and are retried like reads, as is the delete (false
  // when it was gone already).
  ReplicaSet create_replica_set(const std::string& key, const std::string& project_id, const std::string& service_id,
                                const ReplicaSetCreateRequest& req);
  std::vector<ReplicaSet> list_replica_sets(const std::string& key, const std::string& project_id,
                                            const std::string& service_id);
  void update_replica_set(const std::string& key, const std::string& project_id, const std::string& service_id,
                          const std::string& set_id, const std::string& action, const nlohmann::json& body);
  bool delete_replica_set(const std::string& key, const std::string& project_id, const std::string& service_id,
                          const std::string& set_id);

  // A kind's calls by its route (ApiRoute), `parent_id` the id of what it lives in ("" for a
  // project's own). The create is a create (sent at most once, never replayed; an answer without
  // the id is an unknown outcome); the list, the get (nullopt on 404), an action (POST
  // .../{id}/{action} with `body`, or none when null; its answer is not read) and the delete (false
  // when it was gone already) are retried like reads. VPCs and peerings are these with their
  // routes (kVpcRoute, kPeeringRoute).
  ApiObject create_at(const std::string& key, const ApiRoute& route, const std::string& project_id,
                      const std::string& parent_id, const nlohmann::json& body);
  std::vector<ApiObject> list_at(const std::string& key, const ApiRoute& route, const std::string& project_id,
                                 const std::string& parent_id);
  std::optional<ApiObject> get_at(const std::string& key, const ApiRoute& route, const std::string& project_id,
                                  const std::string& parent_id, const std::string& id);
  void act_at(const std::string& key, const ApiRoute& route, const std::string& project_id,
              const std::string& parent_id, const std::string& id, const std::string& action,
              const nlohmann::json& body);
  bool delete_at(const std::string& key, const ApiRoute& route, const std::string& project_id,
                 const std::string& parent_id, const std::string& id);

  const std::string& base_url() const { return base_url_; }
  // A set flag ends every back-off and Retry-After wait at once: the call fails instead of waiting.
  void stop_waits_on(const std::atomic<bool>* stop) { stop_ = stop; }
  // Called after every exchange (and with `retry` set before each wait). Not called when unset.
  void log_exchanges(ExchangeLog log) { log_ = std::move(log); }

 private:
  enum class CallKind { Read, Create };  // Read: any idempotent call, retried on transient failures
  // Sends with retries as the kind allows; returns the 2xx response (or 404 when allow_404).
  HttpResponse call(CallKind kind, const std::string& method, const std::string& path, const std::string& key,
                    const std::string* body, bool allow_404 = false, const std::string& secret = "");
  Duration backoff(int attempt, const HttpResponse* response);
  // Sleeps `wait` unless stopped; a stop throws ApiError(`failure`), the call not retried.
  void wait_before_retry(Duration wait, const std::string& failure, const std::string& method,
                         const std::string& path, int status = 0);
  std::string authorization(const std::string& key) const;

  Transport& transport_;
  Clock& clock_;
  std::string base_url_;
  AuthScheme scheme_;
  RetryPolicy retry_;
  const std::atomic<bool>* stop_ = nullptr;
  ExchangeLog log_;
  std::mutex rng_mu_;
  std::mt19937_64 rng_;
};

}  // namespace dbform
