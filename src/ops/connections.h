#pragma once
// What the command line opens before it calls an operation, made here so that the command line
// names no class below ops: the state store a location names (a file, or a workspace of a
// PostgreSQL database) and the API client over the HTTP transport, as the environment configures
// them, and the libpq check of apply's --wait-connectable and `connect --check`. The command line
// only passes the API client along (to the operations' requests), so it sees its name here and
// nothing of the API or the transport: both are complete in the .cpp.
#include <atomic>
#include <memory>
#include <string>

#include "manifest/model.h"
#include "plan/run.h"
#include "sql/connection_check.h"
#include "sql/session.h"
#include "state/store.h"
#include "util/clock.h"
#include "util/env.h"

namespace dbform {

class ApiClient;
class Transport;

// The API client as configured by DBFORM_API_URL, DBFORM_AUTH_SCHEME, DBFORM_ALLOW_HTTP,
// SSL_CERT_FILE and SSL_CERT_DIR (and DBFORM_LOG=debug: one log line per exchange).
struct ApiSetup {
  std::unique_ptr<Transport> transport;
  SystemClock clock;
  std::unique_ptr<ApiClient> client;
  ~ApiSetup();  // in the .cpp, where the client and the transport are complete
  // `stop` (a signal's flag) ends the client's retry waits at once (ApiClient::stop_waits_on).
  void stop_waits_on(const std::atomic<bool>* stop);
  const std::string& base_url() const;  // DBFORM_API_URL's, or the default
};
// Throws UsageError naming the variable that is wrong; nothing is sent.
std::unique_ptr<ApiSetup> api_setup(const EnvLookup& env);

// The store at `where` (a state file, or a postgres:// URL and its `workspace`); `from` and
// `workspace_from` name where each came from (a flag or a variable) for messages. A workspace name
// is 1 to 128 letters, digits, '_', '-' and '.' (UsageError otherwise). A file holds one
// state: a workspace other than `default` is refused (UsageError) rather than quietly ignored.
std::unique_ptr<StateStore> state_store_at(const std::string& where, const std::string& from,
                                           const std::string& workspace, const std::string& workspace_from);

// What `apply` waits for with --wait-connectable (every project's services), else `wait_connectable:
// true` (those of the projects that declare it): checked through libpq.
ConnectableOptions connectable_options(bool wait_connectable_flag, const Manifest& manifest);

// The libpq check (sql/connection_check.h), one for the process: apply's waits, `connect --check`.
const ConnectionCheck& libpq_check();
// Connections to the services' databases through libpq (the objects inside them, the previews').
const SqlConnector& libpq_sql();

// What `dbform output` and `preview --format env` write for a database: postgres://tsdbadmin:
// PASSWORD@HOST:PORT/tsdb?sslmode=require, the password percent-encoded as libpq decodes it
// (postgres_uri, libcurl's URL API).
std::string connection_uri(const std::string& password, const std::string& host, int port);
// The same for a login role of the service's database (`user`), with its own password.
std::string connection_uri_as(const std::string& user, const std::string& password, const std::string& host, int port);

}  // namespace dbform
