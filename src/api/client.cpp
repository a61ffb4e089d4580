#include "api/client.h"

#include <algorithm>
#include <cctype>

#include "api/http_text.h"
#include "util/duration.h"
#include "util/json_limits.h"
#include "util/crypto.h"
#include "util/env.h"

namespace dbform {
namespace {

using nlohmann::json;

constexpr const char* kUserAgent = "dbform/0.1.0";
// However long a server asks us to wait, a run should not stall for longer than this per try.
constexpr Duration kMaxRetryAfter = std::chrono::minutes(5);

// Percent-encodes everything but RFC 3986 unreserved characters, so an id can never change the path.
std::string escape_path_segment(const std::string& segment) {
  static const char* hex = "0123456789ABCDEF";
  std::string out;
  for (unsigned char c : segment) {
    if (std::isalnum(c) || c == '-' || c == '.' || c == '_' || c == '~') {
      out += static_cast<char>(c);
    } else {
      out += '%';
      out += hex[c >> 4];
      out += hex[c & 0x0F];
    }
  }
  return out;
}

std::string project_path(const std::string& project_id, const std::string& rest) {
  return "/projects/" + escape_path_segment(project_id) + rest;
}

// Error text may echo what was sent: the key, its secret half and its Basic form are remembered
// as secrets, which scrub() removes from every text shown.
void remember_key(const std::string& key) {
  remember_secret(key);
  auto colon = key.find(':');
  if (colon != std::string::npos) remember_secret(key.substr(colon + 1));
  remember_secret(base64_encode(key));
}

bool is_success(int status) { return status >= 200 && status < 300; }

// An answer as a trace may show it: initial_password masked wherever a service carries one, then
// scrubbed of every secret the process knows.
std::string masked_body(const std::string& body) {
  std::string problem;
  json j = parse_json_within(body, JsonLimits{body.size(), kMaxAnswerDepth}, problem);
  if (j.is_discarded()) return scrub(one_line_excerpt(body, 2000));
  auto mask = [](json& o) {
    if (o.is_object() && o.contains("initial_password")) o["initial_password"] = "***";
  };
  mask(j);
  if (j.is_array())
    for (auto& item : j) mask(item);
  return scrub(dump_json(j));
}

std::string status_text(int status) {
  std::string reason = status_reason(status);
  return reason.empty() ? std::to_string(status) : std::to_string(status) + " " + reason;
}

json parse_body(const std::string& method, const std::string& path, const HttpResponse& response,
                const std::unordered_set<std::string>* names = nullptr) {
  // No excerpt of the body and no parser message: a service body holds a password, and the
  // parser's "last read" text could quote it.
  std::string problem;
  JsonProblem kind;
  json body = parse_json_within(response.body,
                                JsonLimits{response.body.size(), kMaxAnswerDepth, names ? names : &api_field_names()},
                                problem, &kind);
  if (kind == JsonProblem::TooDeep)
    throw Error(method + " " + path + ": the API answered " + std::to_string(response.status) +
                " with a body " + problem + "; it was not read");
  if (body.is_discarded()) {
    std::string type = one_line_excerpt(response.header("content-type"), 80);
    throw Error(method + " " + path + ": the API answered " + std::to_string(response.status) +
                " but the body is not valid JSON (" + std::to_string(response.body.size()) + " bytes" +
                (type.empty() ? "" : ", content-type " + type) + "); is DBFORM_API_URL the API's base URL?");
  }
  return body;
}

json& require_array(const std::string& method, const std::string& path, json& body, const char* items) {
  if (!body.is_array()) {
    throw Error(method + " " + path + ": expected a JSON array of " + items + ", but the API sent " +
                body.type_name());
  }
  return body;
}

// Parses with `parse`, prefixing mapping errors with the call so the message says where they came from.
template <typename T, typename Parse>
T map_response(const std::string& method, const std::string& path, json j, Parse parse) {
  try {
    return parse(std::move(j));
  } catch (const ApiError&) {
    throw;
  } catch (const Error& e) {
    throw Error(method + " " + path + ": " + e.what());
  }
}

// The items of a list answer, each mapped with `parse`.
template <typename T, typename Parse>
std::vector<T> map_list(const std::string& path, const HttpResponse& response, Parse parse, const char* items,
                        const std::unordered_set<std::string>* names = nullptr) {
  json body = parse_body("GET", path, response, names);
  std::vector<T> out;
  for (json& item : require_array("GET", path, body, items)) out.push_back(map_response<T>("GET", path, std::move(item), parse));
  return out;
}

// The 2xx answer to a create that cannot be read still means the resource was (probably) made:
// report it as an unknown outcome so the caller adopts by name instead of creating it twice.
template <typename T, typename Parse>
T map_create_response(const std::string& path, const HttpResponse& response, Parse parse,
                             std::string T::*id_field, const char* id_name,
                             const std::unordered_set<std::string>* names = nullptr) {
  try {
    T created = map_response<T>("POST", path, parse_body("POST", path, response, names), parse);
    if ((created.*id_field).empty()) throw Error("POST " + path + ": the response has no `" + id_name + "`");
    return created;
  } catch (const ApiError&) {
    throw;
  } catch (const Error& e) {
    throw ApiError(std::string(e.what()) + "; the resource may have been created", response.status, "POST", path,
                   "", true);
  }
}

}  // namespace

ApiClient::ApiClient(Transport& transport, Clock& clock, std::string base_url, AuthScheme scheme, RetryPolicy retry)
    : transport_(transport), clock_(clock), base_url_(std::move(base_url)), scheme_(scheme), retry_(retry) {
  while (!base_url_.empty() && base_url_.back() == '/') base_url_.pop_back();
  retry_.max_attempts = std::max(1, retry_.max_attempts);
  auto seed = retry_.seed != 0 ? static_cast<unsigned long long>(retry_.seed)
                               : static_cast<unsigned long long>(clock_.wall_now().time_since_epoch().count());
  rng_.seed(seed);
}

std::string ApiClient::authorization(const std::string& key) const {
  // Checked where keys are read (naming the variable); here too, before base64 could hide it.
  if (has_control_character(key))
    throw ApiError("the API key holds a control character (a line break?): it was not sent", 0, "", "", "", false);
  return scheme_ == AuthScheme::Basic ? "Basic " + base64_encode(key) : "Bearer " + key;
}

Duration ApiClient::backoff(int attempt, const HttpResponse* response) {
  // Full jitter (a uniform wait up to the exponential ceiling) spreads out clients that failed
  // together, e.g. many parallel creates hitting the same 503.
  Duration ceiling = retry_.initial_backoff;
  for (int i = 1; i < attempt && ceiling < retry_.max_backoff; ++i) ceiling *= 2;
  ceiling = std::min(ceiling, retry_.max_backoff);
  Duration wait;
  {
    std::lock_guard<std::mutex> lock(rng_mu_);
    std::uniform_int_distribution<Duration::rep> jitter(0, std::max<Duration::rep>(0, ceiling.count()));
    wait = Duration(jitter(rng_));
  }
  if (response) {
    if (auto asked = parse_retry_after(response->header("retry-after"), clock_.wall_now())) {
      wait = std::max(wait, std::min(*asked, kMaxRetryAfter));
    }
  }
  return wait;
}

void ApiClient::wait_before_retry(Duration wait, const std::string& failure, const std::string& method,
                                  const std::string& path, int status) {
  if (!clock_.sleep_for_unless(wait, stop_))
    throw ApiError(failure + "; stopped instead of trying again", status, method, path, "", false);
}

HttpResponse ApiClient::call(CallKind kind, const std::string& method, const std::string& path,
                             const std::string& key, const std::string* body, bool allow_404,
                             const std::string& secret) {
  remember_key(key);
  remember_secret(secret);
  HttpRequest request{method, base_url_ + path, {}, body ? *body : std::string()};
  request.headers = {{"Authorization", authorization(key)}, {"Accept", "application/json"}, {"User-Agent", kUserAgent}};
  if (body) request.headers.emplace_back("Content-Type", "application/json");
  const bool is_create = kind == CallKind::Create;
  request.never_replay = is_create;
  const std::string call_name = method + " " + path;

  for (int attempt = 1;; ++attempt) {
    const bool last_attempt = attempt >= retry_.max_attempts;
    const std::string tries = attempt > 1 ? " (after " + std::to_string(attempt) + " attempts)" : "";
    HttpResponse response;
    Exchange seen;
    seen.method = method;
    seen.url = redact_url(request.url);
    seen.attempt = attempt;
    if (log_) seen.request_body = scrub(request.body);
    const auto started = clock_.now();
    auto log = [&](Duration wait, const std::string& why) {
      if (!log_) return;
      seen.took = std::chrono::duration_cast<Duration>(clock_.now() - started);
      if (wait.count() > 0 || !why.empty()) seen.retry = why + ", trying again in " + format_duration(wait);
      log_(seen);
    };
    try {
      response = transport_.send(request);
    } catch (const TransportError& e) {
      std::string detail = scrub(e.what());
      seen.error = detail;
      const bool outcome_unknown = is_create && e.may_have_reached_server();
      // A refused certificate is refused again on every try: no retry.
      const bool given_up = last_attempt || !e.worth_retrying();
      if (given_up || outcome_unknown) log(Duration(0), "");
      if (outcome_unknown) {
        throw ApiError(call_name + ": no response, but the request may have reached the API, so the resource may "
                                   "or may not exist; it is not sent again blindly: " + detail,
                       0, method, path, "", true);
      }
      if (given_up) {
        throw ApiError(call_name + ": could not reach the API" + tries + ": " + detail, 0, method, path, "", false);
      }
      const Duration wait = backoff(attempt, nullptr);
      log(wait, "no answer");
      wait_before_retry(wait, call_name + ": could not reach the API: " + detail, method, path);
      continue;
    }
    seen.status = response.status;
    for (const char* header : {"x-request-id", "request-id"})
      if (seen.request_id.empty()) seen.request_id = scrub(response.header(header));
    if (log_) seen.response_body = masked_body(response.body);
    const bool done = is_success(response.status) || (allow_404 && response.status == 404);
    const bool retried = !done && !last_attempt && (response.status == 429 || (!is_create && response.status >= 500));
    const Duration wait = retried ? backoff(attempt, &response) : Duration(0);
    log(wait, retried ? status_text(response.status) : "");
    if (done) return response;

    // Secrets go before the body is cut short: one that straddles the cut would escape otherwise.
    std::string message = scrub(summarize_error_body(scrub(response.body)));
    std::string what = call_name + ": " + status_text(response.status) + (message.empty() ? "" : ": " + message);
    // A 5xx answer to a create says nothing about whether the resource was made: never re-send it.
    if (is_create && response.status >= 500) {
      throw ApiError(what + "; the resource may or may not have been created", response.status, method, path,
                     message, true);
    }
    // 429 means the server refused before doing anything, so even a create may be retried.
    bool transient = response.status == 429 || (!is_create && response.status >= 500);
    // The service's console gives a key in two halves that it takes as Basic credentials today,
    // where gateways and the simulator take a Bearer token: a good key sent the other way is a 401.
    if (response.status == 401)
      what += std::string(". A 401 for a key that is right usually means the other scheme: this request sent it as ") +
              (scheme_ == AuthScheme::Basic ? "Basic (DBFORM_AUTH_SCHEME=basic); try DBFORM_AUTH_SCHEME=bearer"
                                            : "a Bearer token; try DBFORM_AUTH_SCHEME=basic with the key as "
                                              "public:secret");
    if (!transient || last_attempt) {
      throw ApiError(what + (transient ? tries : ""), response.status, method, path, message, false);
    }
    wait_before_retry(wait, what, method, path, response.status);
  }
}

AuthInfo ApiClient::auth_info(const std::string& key) {
  const std::string path = "/auth/info";
  try {
    HttpResponse response = call(CallKind::Read, "GET", path, key, nullptr);
    return map_response<AuthInfo>("GET", path, parse_body("GET", path, response), parse_auth_info);
  } catch (const ApiError& e) {
    // The first call of every run: a route the server does not know means the base URL is wrong.
    if (e.status() != 404 && e.status() != 405) throw;
    throw ApiError(std::string(e.what()) + ". " + redact_url(base_url_) + path +
                       " is not the API's key check: is DBFORM_API_URL the API's base URL (e.g. "
                       "https://console.cloud.tigerdata.com/public/api/v1)?",
                   e.status(), e.method(), e.path(), e.api_message(), false);
  } catch (const Error& e) {
    if (dynamic_cast<const ApiError*>(&e)) throw;
    throw Error(std::string(e.what()) + " (asked " + redact_url(base_url_) + path + ")");  // not JSON: a web page?
  }
}

Service ApiClient::create_service(const std::string& key, const std::string& project_id,
                                  const ServiceCreateRequest& req) {
  const std::string path = project_path(project_id, "/services");
  const std::string body = to_json(req).dump();
  HttpResponse response = call(CallKind::Create, "POST", path, key, &body);
  return map_create_response<Service>(path, response, parse_service, &Service::service_id, "service_id");
}

Service ApiClient::fork_service(const std::string& key, const std::string& project_id, const std::string& source_id,
                                const json& body) {
  const std::string path = project_path(project_id, "/services/" + escape_path_segment(source_id) + "/forkService");
  const std::string text = body.dump();
  HttpResponse response = call(CallKind::Create, "POST", path, key, &text);
  return map_create_response<Service>(path, response, parse_service, &Service::service_id, "service_id");
}

std::optional<Service> ApiClient::get_service(const std::string& key, const std::string& project_id,
                                              const std::string& service_id) {
  const std::string path = project_path(project_id, "/services/" + escape_path_segment(service_id));
  HttpResponse response = call(CallKind::Read, "GET", path, key, nullptr, /*allow_404=*/true);
  if (response.status == 404) return std::nullopt;
  return map_response<Service>("GET", path, parse_body("GET", path, response), parse_service);
}

std::vector<Service> ApiClient::list_services(const std::string& key, const std::string& project_id) {
  const std::string path = project_path(project_id, "/services");
  return map_list<Service>(path, call(CallKind::Read, "GET", path, key, nullptr), parse_service, "services");
}

void ApiClient::update_password(const std::string& key, const std::string& project_id, const std::string& service_id,
                                const std::string& password) {
  const std::string path = project_path(project_id, "/services/" + escape_path_segment(service_id) + "/updatePassword");
  const std::string body = nlohmann::json{{"password", password}}.dump();
  call(CallKind::Read, "POST", path, key, &body, /*allow_404=*/false, password);
}

bool ApiClient::delete_service(const std::string& key, const std::string& project_id, const std::string& service_id) {
  const std::string path = project_path(project_id, "/services/" + escape_path_segment(service_id));
  return call(CallKind::Read, "DELETE", path, key, nullptr, /*allow_404=*/true).status != 404;
}

std::optional<Service> ApiClient::update_service(const std::string& key, const std::string& project_id,
                                                 const std::string& service_id, const std::string& action,
                                                 const json& body) {
  const std::string path = project_path(project_id, "/services/" + escape_path_segment(service_id) + "/" + action);
  const std::string text = body.is_null() ? std::string() : body.dump();
  HttpResponse response = call(CallKind::Read, "POST", path, key, body.is_null() ? nullptr : &text);
  // A SuccessMessage, an empty 204 or an answer that cannot be read: the caller reads the service back.
  std::string problem;
  json answer = parse_json_within(response.body, JsonLimits{response.body.size(), kMaxAnswerDepth, &api_field_names()},
                                  problem);
  if (!answer.is_object() || !answer.contains("service_id")) return std::nullopt;
  return map_response<Service>("POST", path, answer, parse_service);
}

namespace {

std::string replica_sets_path(const std::string& project_id, const std::string& service_id) {
  return project_path(project_id, "/services/" + escape_path_segment(service_id) + "/replicaSets");
}

}  // namespace

ReplicaSet ApiClient::create_replica_set(const std::string& key, const std::string& project_id,
                                         const std::string& service_id, const ReplicaSetCreateRequest& req) {
  const std::string path = replica_sets_path(project_id, service_id), body = to_json(req).dump();
  HttpResponse response = call(CallKind::Create, "POST", path, key, &body);
  return map_create_response<ReplicaSet>(path, response, parse_replica_set, &ReplicaSet::id, "id");
}

std::vector<ReplicaSet> ApiClient::list_replica_sets(const std::string& key, const std::string& project_id,
                                                     const std::string& service_id) {
  const std::string path = replica_sets_path(project_id, service_id);
  return map_list<ReplicaSet>(path, call(CallKind::Read, "GET", path, key, nullptr), parse_replica_set,
                              "replica sets");
}

void ApiClient::update_replica_set(const std::string& key, const std::string& project_id, const std::string& service_id,
                                   const std::string& set_id, const std::string& action, const json& body) {
  const std::string path = replica_sets_path(project_id, service_id) + "/" + escape_path_segment(set_id) + "/" + action;
  const std::string text = body.is_null() ? std::string() : body.dump();
  call(CallKind::Read, "POST", path, key, body.is_null() ? nullptr : &text);
}

bool ApiClient::delete_replica_set(const std::string& key, const std::string& project_id, const std::string& service_id,
                                   const std::string& set_id) {
  const std::string path = replica_sets_path(project_id, service_id) + "/" + escape_path_segment(set_id);
  return call(CallKind::Read, "DELETE", path, key, nullptr, /*allow_404=*/true).status != 404;
}

namespace {

std::string route_path(const ApiRoute& route, const std::string& project_id, const std::string& parent_id) {
  std::string rest = route.collection;
  if (const size_t at = rest.find("{parent}"); at != std::string::npos)
    rest.replace(at, 8, escape_path_segment(parent_id));
  return project_path(project_id, rest);
}

}  // namespace

ApiObject ApiClient::create_at(const std::string& key, const ApiRoute& route, const std::string& project_id,
                               const std::string& parent_id, const json& body) {
  const std::string path = route_path(route, project_id, parent_id), text = body.dump();
  HttpResponse response = call(CallKind::Create, "POST", path, key, &text);
  return map_create_response<ApiObject>(
      path, response, [&](json j) { return parse_api_object(std::move(j), route.what, route.id_field); },
      &ApiObject::id, route.id_field, route.fields);
}

std::vector<ApiObject> ApiClient::list_at(const std::string& key, const ApiRoute& route, const std::string& project_id,
                                          const std::string& parent_id) {
  const std::string path = route_path(route, project_id, parent_id);
  return map_list<ApiObject>(
      path, call(CallKind::Read, "GET", path, key, nullptr),
      [&](json j) { return parse_api_object(std::move(j), route.what, route.id_field); }, route.items, route.fields);
}

std::optional<ApiObject> ApiClient::get_at(const std::string& key, const ApiRoute& route, const std::string& project_id,
                                           const std::string& parent_id, const std::string& id) {
  const std::string path = route_path(route, project_id, parent_id) + "/" + escape_path_segment(id);
  HttpResponse response = call(CallKind::Read, "GET", path, key, nullptr, /*allow_404=*/true);
  if (response.status == 404) return std::nullopt;
  return map_response<ApiObject>("GET", path, parse_body("GET", path, response, route.fields),
                                 [&](json j) { return parse_api_object(std::move(j), route.what, route.id_field); });
}

void ApiClient::act_at(const std::string& key, const ApiRoute& route, const std::string& project_id,
                       const std::string& parent_id, const std::string& id, const std::string& action,
                       const json& body) {
  const std::string path =
      route_path(route, project_id, parent_id) + "/" + escape_path_segment(id) + "/" + action;
  const std::string text = body.is_null() ? std::string() : body.dump();
  call(CallKind::Read, "POST", path, key, body.is_null() ? nullptr : &text);
}

bool ApiClient::delete_at(const std::string& key, const ApiRoute& route, const std::string& project_id,
                          const std::string& parent_id, const std::string& id) {
  const std::string path = route_path(route, project_id, parent_id) + "/" + escape_path_segment(id);
  return call(CallKind::Read, "DELETE", path, key, nullptr, /*allow_404=*/true).status != 404;
}
}  // namespace dbform
