// `dbform rotate-password`: a new password for a service, recorded before it is sent, never printed.
#include <iostream>
#include <iterator>

#include "cli/commands.h"
#include "cli/context.h"
#include "cli/manual.h"
#include "ops/connections.h"
#include "ops/rotate_password.h"
#include "util/env.h"
#include "util/text.h"

namespace dbform::cli {

void add_rotate_password_command(CLI::App& app, int& exit_code) {
  struct Options {
    ManifestOptions manifests;
    StateOptions state;
    std::string address;
    bool from_stdin = false;
  };
  auto opts = std::make_shared<Options>();
  auto* cmd = add_command(app, "rotate-password", "set a new password on a service or a login role (never printed: `dbform output "
                                                  "ADDRESS.password` prints it)",
                          {.text = R"(Sets a new password on a service with `updatePassword`: 32 letters and digits from OpenSSL's generator, or with `--password-stdin` the one line read from standard input (a trailing newline dropped; at least 8 characters; empty input or a control character is refused). The password is never printed; `dbform output ADDRESS.password` prints it.

It is recorded as pending in the state before the call and as the password once the API confirmed it, so a run killed in between loses nothing: the next `apply` or `rotate-password` sets the pending one first (it may be the one the service has, if the answer was lost), and only then a new one. This is how an imported or adopted service, whose password nobody knows, gets a known one. A read replica set shares its service's password.

A login role of a service's database (`PROJECT/services/S/roles/NAME`) gets its new password the way apply sets one: recorded as pending first, then sent to the database as a SCRAM-SHA-256 verifier in one transaction as the service's `tsdbadmin` (no API call), and recorded once committed. The role is made as its record says (its limit, memberships and settings as last applied), and its service must be READY with its own password recorded.)",
                           .environment = kApiEnvironment,
                           .examples = {{"A new random password", "dbform rotate-password acme/services/orders"},
                                        {"A new password for the application's role", "dbform rotate-password acme/services/orders/roles/app"},
                                        {"A password of your own, from a secret store", "vault kv get -field=password secret/orders | dbform rotate-password orders --password-stdin"}}});
  add_manifest_and_state_options(*cmd, opts->manifests, opts->state, true);
  cmd->add_option("address", opts->address, "the service, or a login role of its database")->required();
  cmd->add_flag("--password-stdin", opts->from_stdin,
                "read the new password from standard input instead of generating 32 random characters");
  cmd->callback([opts, cmd, &exit_code] {
    const Manifest manifest = manifests_if_any(opts->manifests, cmd->count("--file") > 0);
    const std::string password =
        opts->from_stdin ? checked_password(std::string(std::istreambuf_iterator<char>(std::cin), {}))
                         : random_password();
    auto store = open_state_store(opts->state);
    std::unique_ptr<ApiSetup> api;
    SystemClock clock;
    const RotatePasswordOutcome out = rotate_password_operation(
        {StateAccess{*store, "rotate-password", lock_timeout(opts->state), lock_wait_on_stderr(), process_env()},
         manifest,
         [&api]() -> ApiClient& {
           api = make_api();
           return *api->client;
         },
         clock, opts->address, password, &libpq_sql()});
    const std::string& address = out.address;
    if (!out.clear_warning.empty()) std::cerr << "warning: " << out.clear_warning << "\n";
    std::cout << "The password of " << address << " was changed and recorded. `dbform output " << address
              << ".password` prints it.\n";
    exit_code = 0;
  });
}

}  // namespace dbform::cli
