#include "cli/context.h"

#include <unistd.h>

#include <iostream>

#include "http/curl_transport.h"
#include "manifest/loader.h"
#include "state/file_store.h"
#include "util/duration.h"
#include "util/env.h"

namespace dbform::cli {

constexpr const char* kDefaultApiUrl = "https://console.cloud.tigerdata.com/public/api/v1";

void add_manifest_options(CLI::App& cmd, ManifestOptions& opts) {
  cmd.add_option("-f,--file", opts.files, "manifest file or directory (repeatable; default .)");
}

void add_state_options(CLI::App& cmd, StateOptions& opts, bool with_lock_timeout) {
  cmd.add_option("--state", opts.state, "state file (default $DBFORM_STATE, else dbform.state.json)");
  if (with_lock_timeout)
    cmd.add_option("--lock-timeout", opts.lock_timeout, "wait this long for another run's lock (default 0s)");
}

Manifest load_manifests_or_throw(const ManifestOptions& opts) {
  Diagnostics diags;
  Manifest m = load_manifests(opts.files, process_env(), diags);
  if (!diags.items().empty()) std::cerr << diags.str();
  if (diags.has_errors())
    throw UsageError(std::to_string(diags.error_count()) + " error(s) in the manifests; nothing was done");
  return m;
}

std::unique_ptr<StateStore> open_state_store(const StateOptions& opts) {
  std::string where = opts.state;
  if (where.empty()) where = process_env()("DBFORM_STATE").value_or("dbform.state.json");
  if (where.rfind("postgres://", 0) == 0 || where.rfind("postgresql://", 0) == 0)
    throw UsageError("the PostgreSQL state backend is not available in this build; use a state file");
  return std::make_unique<FileStateStore>(where);
}

Duration lock_timeout(const StateOptions& opts) { return parse_duration_flag("--lock-timeout", opts.lock_timeout); }

State read_state(StateStore& store) {
  auto state = store.read();
  return state ? std::move(*state) : new_state();
}

std::unique_ptr<ApiSetup> make_api() {
  auto env = process_env();
  auto setup = std::make_unique<ApiSetup>();
  setup->transport = std::make_unique<CurlTransport>();
  std::string scheme_name = env("DBFORM_AUTH_SCHEME").value_or("bearer");
  AuthScheme scheme;
  if (scheme_name == "bearer") scheme = AuthScheme::Bearer;
  else if (scheme_name == "basic") scheme = AuthScheme::Basic;
  else throw UsageError("DBFORM_AUTH_SCHEME must be `bearer` or `basic`, not `" + scheme_name + "`");
  setup->client = std::make_unique<ApiClient>(*setup->transport, setup->clock,
                                              env("DBFORM_API_URL").value_or(kDefaultApiUrl), scheme);
  return setup;
}

Duration parse_duration_flag(const std::string& flag, const std::string& value) {
  auto d = parse_duration(value);
  if (!d) throw UsageError(flag + ": `" + value + "` is not a duration (expected e.g. 30s, 10m, 1h30m, 500ms)");
  return *d;
}

Terminal detect_terminal() {
  Terminal t;
  t.stdout_tty = ::isatty(STDOUT_FILENO);
  t.stdin_tty = ::isatty(STDIN_FILENO);
  t.color = t.stdout_tty && !process_env()("NO_COLOR");
  return t;
}

std::string paint(const Terminal& t, const char* code, const std::string& text) {
  if (!t.color) return text;
  return std::string("\033[") + code + "m" + text + "\033[0m";
}

}  // namespace dbform::cli
