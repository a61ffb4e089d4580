#include "ops/connections.h"

#include <unistd.h>

#include <filesystem>

#include "api/client.h"
#include "http/curl_transport.h"
#include "http/transport.h"
#include "state/file_store.h"
#include "state/pg_store.h"
#include "util/duration.h"
#include "util/error.h"
#include "util/log.h"
#include "util/text.h"

namespace dbform {

constexpr const char* kDefaultApiUrl = "https://console.cloud.tigerdata.com/public/api/v1";

namespace {

// DBFORM_LOG=debug: one line per HTTP exchange; trace: its bodies too (masked and scrubbed).
void log_exchange(const Exchange& x) {
  std::string line = x.method + " " + x.url + " -> " +
                     (x.status ? std::to_string(x.status) : "no answer (" + x.error + ")") + " in " +
                     format_duration(x.took);
  if (x.attempt > 1) line += ", attempt " + std::to_string(x.attempt);
  if (!x.request_id.empty()) line += ", request id " + x.request_id;
  if (!x.retry.empty()) line += "; " + x.retry;
  log::debug("http: " + line);
  if (!x.request_body.empty()) log::trace("http: request body: " + x.request_body);
  if (!x.response_body.empty()) log::trace("http: response body: " + x.response_body);
}

// SSL_CERT_FILE, as OpenSSL and curl read it: the CA bundle to trust instead of the system's. libcurl
// does not read it itself (its own default bundle wins), so it is handed to the transport, checked.
std::string ca_bundle(const EnvLookup& env) {
  std::optional<std::string> file = checked_env(env, "SSL_CERT_FILE");
  if (!file) return "";
  std::error_code ec;
  const auto status = std::filesystem::status(*file, ec);
  std::string problem;
  if (ec || !std::filesystem::exists(status)) problem = "does not exist";
  else if (!std::filesystem::is_regular_file(status)) problem = "is not a file";
  else if (::access(file->c_str(), R_OK) != 0) problem = "cannot be read (no permission)";
  if (!problem.empty())
    throw UsageError("SSL_CERT_FILE names " + valid_utf8(*file) + ", which " + problem +
                     ": it must name the CA bundle (PEM) to trust; nothing was sent");
  return *file;
}

// SSL_CERT_DIR, as OpenSSL reads it: directories of hashed CA certificates (c_rehash), separated by
// ':', that replace the system's directory (the bundle stays: the system's, or SSL_CERT_FILE's).
// libcurl does not read it either. Each must be a directory: a wrong one is named, not skipped.
std::string ca_directories(const EnvLookup& env) {
  std::optional<std::string> dirs = checked_env(env, "SSL_CERT_DIR");
  if (!dirs) return "";
  std::string kept;
  for (size_t at = 0; at <= dirs->size();) {
    const size_t end = std::min(dirs->find(':', at), dirs->size());
    const std::string dir = dirs->substr(at, end - at);
    at = end + 1;
    if (dir.empty()) continue;  // "a::b", a trailing ':': OpenSSL skips them too
    std::error_code ec;
    const auto status = std::filesystem::status(dir, ec);
    std::string problem;
    if (ec || !std::filesystem::exists(status)) problem = "does not exist";
    else if (!std::filesystem::is_directory(status)) problem = "is not a directory";
    else if (::access(dir.c_str(), R_OK | X_OK) != 0) problem = "cannot be read (no permission)";
    if (!problem.empty())
      throw UsageError("SSL_CERT_DIR names " + valid_utf8(dir) + ", which " + problem +
                       ": it must name directories of CA certificates (PEM, hashed by c_rehash), separated by ':'; "
                       "nothing was sent");
    kept += (kept.empty() ? "" : ":") + dir;
  }
  return kept;
}

// DBFORM_ALLOW_HTTP=1: plain http:// to any host, not only loopback.
bool plain_http_allowed(const EnvLookup& env) {
  std::optional<std::string> value = checked_env(env, "DBFORM_ALLOW_HTTP");
  if (!value || *value == "0") return false;
  if (*value == "1") return true;
  throw UsageError("DBFORM_ALLOW_HTTP must be 1 (plain http:// to any host) or 0, not `" + valid_utf8(*value) + "`");
}

// DBFORM_RETRY_BACKOFF: the ceiling of the first retry's wait (each further retry doubles it, up to
// 30s); the tests of lost answers set it low, so that their retries take milliseconds, not seconds.
RetryPolicy retry_policy(const EnvLookup& env) {
  RetryPolicy retry;
  const std::optional<std::string> value = checked_env(env, "DBFORM_RETRY_BACKOFF");
  if (!value) return retry;
  const std::optional<Duration> backoff = parse_duration(*value);
  if (!backoff || *backoff > retry.max_backoff)
    throw UsageError("DBFORM_RETRY_BACKOFF must be a duration of at most 30s (like 500ms, the default), not `" +
                     valid_utf8(*value) + "`; nothing was sent");
  retry.initial_backoff = *backoff;
  return retry;
}

}  // namespace

ApiSetup::~ApiSetup() = default;

void ApiSetup::stop_waits_on(const std::atomic<bool>* stop) { client->stop_waits_on(stop); }

const std::string& ApiSetup::base_url() const { return client->base_url(); }

std::unique_ptr<ApiSetup> api_setup(const EnvLookup& env) {
  auto setup = std::make_unique<ApiSetup>();
  TransportOptions options;
  options.ca_file = ca_bundle(env);
  options.ca_dir = ca_directories(env);
  setup->transport = std::make_unique<CurlTransport>(options);
  std::string scheme_name = env("DBFORM_AUTH_SCHEME").value_or("bearer");
  AuthScheme scheme;
  if (scheme_name == "bearer") scheme = AuthScheme::Bearer;
  else if (scheme_name == "basic") scheme = AuthScheme::Basic;
  else throw UsageError("DBFORM_AUTH_SCHEME must be `bearer` or `basic`, not `" + scheme_name + "`");
  const std::string url = checked_env(env, "DBFORM_API_URL").value_or(kDefaultApiUrl);
  if (std::string problem = base_url_problem(url, /*plain_http_anywhere=*/true); !problem.empty())
    throw UsageError("DBFORM_API_URL is not an API base URL: " + problem + "; nothing was sent");
  if (std::string problem = base_url_problem(url, plain_http_allowed(env)); !problem.empty())
    throw UsageError("DBFORM_API_URL is refused: " + problem + "; nothing was sent (DBFORM_ALLOW_HTTP=1 allows "
                     "plain http:// to any host)");
  setup->client = std::make_unique<ApiClient>(*setup->transport, setup->clock, url, scheme, retry_policy(env));
  if (log::enabled(log::Level::Debug)) setup->client->log_exchanges(log_exchange);
  return setup;
}

const ConnectionCheck& libpq_check() {
  static const std::unique_ptr<ConnectionCheck> check = libpq_connection_check();
  return *check;
}

const SqlConnector& libpq_sql() {
  static const std::unique_ptr<SqlConnector> connector = libpq_connector();
  return *connector;
}

ConnectableOptions connectable_options(bool wait_connectable_flag, const Manifest& manifest) {
  ConnectableOptions options;
  for (const auto& project : manifest.projects)
    if (wait_connectable_flag || project.wait_connectable.value_or(false)) options.projects.insert(project.id);
  if (!options.projects.empty()) options.check = &libpq_check();
  return options;
}

std::string connection_uri(const std::string& password, const std::string& host, int port) {
  return connection_uri_as("tsdbadmin", password, host, port);
}

std::string connection_uri_as(const std::string& user, const std::string& password, const std::string& host, int port) {
  return postgres_uri({user, password, host, port, "tsdb", "sslmode=require"});
}

std::unique_ptr<StateStore> state_store_at(const std::string& where, const std::string& from,
                                           const std::string& workspace, const std::string& workspace_from) {
  if (!valid_workspace_name(workspace))
    throw UsageError(workspace_from + ": `" + workspace +
                     "` is not a workspace name (1 to 128 letters, digits, '_', '-' and '.', starting with a letter "
                     "or digit)");
  if (names_postgres_state(where, from)) return std::make_unique<PgStateStore>(where, workspace);
  // A file holds one state; quietly ignoring the workspace would mix two states up.
  if (workspace != "default")
    throw UsageError(workspace_from + " `" + workspace + "` needs a PostgreSQL state (--state postgres://...); the state file " +
                     where + " holds a single state. Use another --state file instead");
  return std::make_unique<FileStateStore>(where);
}

}  // namespace dbform
