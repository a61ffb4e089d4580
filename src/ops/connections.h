#pragma once
// What the command line opens before it calls an operation, made here so that the command line
// names no class below ops: the state store a location names (a file, or a workspace of a
// PostgreSQL database) and the API client over the HTTP transport, as the environment configures
// them. The command line gets the types of the layers below that it passes along or renders (the
// API client, the engine's options and events, the keys, connection strings) through this header.
#include <memory>
#include <string>

#include "api/client.h"
#include "engine/apply.h"
#include "engine/connectable.h"
#include "engine/events.h"
#include "ops/keys.h"
#include "http/curl_transport.h"
#include "http/transport.h"
#include "state/store.h"
#include "util/clock.h"
#include "util/env.h"

namespace dbform {

// The API client as configured by DBFORM_API_URL, DBFORM_AUTH_SCHEME, DBFORM_ALLOW_HTTP,
// SSL_CERT_FILE and SSL_CERT_DIR (and DBFORM_LOG=debug: one log line per exchange).
struct ApiSetup {
  std::unique_ptr<Transport> transport;
  SystemClock clock;
  std::unique_ptr<ApiClient> client;
};
// Throws UsageError naming the variable that is wrong; nothing is sent.
std::unique_ptr<ApiSetup> api_setup(const EnvLookup& env);

// The store at `where` (a state file, or a postgres:// URL and its `workspace`); `from` and
// `workspace_from` name where each came from (a flag or a variable) for messages. A workspace name
// is 1 to 128 letters, digits, '_', '-' and '.' (UsageError otherwise). A file holds one
// state: a workspace other than `default` is refused (UsageError) rather than quietly ignored.
std::unique_ptr<StateStore> state_store_at(const std::string& where, const std::string& from,
                                           const std::string& workspace, const std::string& workspace_from);

}  // namespace dbform
