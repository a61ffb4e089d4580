// `dbform state list | show | rm | pull | push`.
#include <algorithm>
#include <iostream>
#include <iterator>

#include "cli/commands.h"
#include "cli/context.h"
#include "cli/manual.h"
#include "ops/address.h"
#include "ops/state_edit.h"
#include "ops/state_read.h"
#include "util/atomic_file.h"
#include "util/env.h"
#include "util/text.h"
#include "util/json_limits.h"

namespace dbform::cli {

namespace {

// How the state's commands reach it: opened from the flags, locked by the operation.
StateAccess access_of(StateStore& store, const char* operation, const StateOptions& opts) {
  return {store, operation, lock_timeout(opts), lock_wait_on_stderr(), process_env()};
}

// The read of the commands that repair a state (read_state_to_repair: duplicates said on stderr).
std::optional<State> repair_read(StateStore& store) { return read_state_to_repair(store); }

// As read_recorded_state(store, true): an empty state when none is stored, unless other workspaces
// have one (a workspace name mistyped).
std::optional<State> recorded_read(StateStore& store) { return read_recorded_state(store, true); }

int push_state(const std::string& source, bool force, const StateOptions& opts) {
  auto store = open_state_store(opts);
  State incoming = read_push_source(source, store->cipher(),
                                    [] { return std::string(std::istreambuf_iterator<char>(std::cin), {}); });
  const std::string dest = store->describe();
  const StatePushOutcome out =
      state_push_operation({access_of(*store, "state push", opts), repair_read, std::move(incoming), source, force});
  if (!out.pushed) {
    std::cout << "Nothing to push: " << dest << " already holds " << source << " (" << out.held << ").\n";
    return 0;
  }
  std::cout << "Pushed " << source << " (" << out.state.resources.size() << " resource(s)) to " << dest
            << ": now lineage " << out.state.lineage << " serial " << out.state.serial << ".\n";
  return 0;
}

// What encrypt, decrypt and rekey say of the key.
constexpr const char* kKeyText =
    "The key is `DBFORM_STATE_PASSPHRASE` (stretched with scrypt; its salt is stored in the state) or "
    "`DBFORM_STATE_KEY_FILE` (a file of exactly 32 random bytes: `head -c 32 /dev/urandom > state.key`). With a key "
    "set, each password the state holds is sealed on its own with AES-256-GCM, bound to its record (kind, project "
    "and id), in every write (the document, its `.backup`, the journal, recovery files, `state pull`); everything "
    "else reads without the key, so `plan`, `state list | show` and `output` of ids and endpoints need none. Each "
    "command rewrites the whole state once, under the lock; the file store rewrites its `.backup` in the new form "
    "too. A state sealed whole by an older dbform is read with its key, and `state encrypt` rewrites it in this "
    "form.";

// `state encrypt | decrypt | rekey`: one whole write under the lock, read with one key and written
// with another (or none). The file store rewrites its .backup in the new form too.
struct Rekeying {
  const char* operation;
  std::optional<StateKey> read_with, write_with;
};

int rewrite_state(const Rekeying& how, const StateOptions& opts) {
  auto store = open_state_store(opts);
  const StateRewriteOutcome out =
      state_rewrite_operation({access_of(*store, how.operation, opts), how.read_with, how.write_with});
  if (!out.rewritten) {
    std::cout << store->describe()
              << (out.after.empty() ? " holds no sealed password" : "'s passwords are already sealed with key id " + out.after)
              << "; nothing was changed.\n";
    return 0;
  }
  const std::string was = out.before.empty() ? "plain" : "key id " + out.before;
  const std::string now = out.after.empty() ? "plain (passwords readable by whoever can read it)" : "passwords sealed with key id " + out.after;
  std::cout << store->describe() << ": " << was << " -> " << now << ", serial " << out.serial
            << (out.backup_too ? "; its .backup too" : "") << ".\n";
  if (out.leftover)
    std::cout << "Removed the journal lines an earlier rewrite, stopped before it removed them, had left in the old "
                 "form (their passwords in clear or under the old key).\n";
  if (how.write_with && !out.before.empty() && out.before != out.after)
    std::cout << "The old key no longer opens it: from now on give the new key (now in " << how.write_with->origin()
              << ") as DBFORM_STATE_PASSPHRASE or DBFORM_STATE_KEY_FILE.\n";
  if (!how.write_with)
    std::cout << "Unset DBFORM_STATE_PASSPHRASE / DBFORM_STATE_KEY_FILE, or the next write seals them again.\n";
  return 0;
}

StateKey required_key(const char* operation) {
  auto key = state_key("DBFORM_STATE_PASSPHRASE", "DBFORM_STATE_KEY_FILE");
  if (!key)
    throw UsageError(std::string(operation) + " needs the state's key: set DBFORM_STATE_PASSPHRASE or "
                     "DBFORM_STATE_KEY_FILE");
  return *key;
}

// A subcommand of `state`, on the store of --state and --workspace; `writes`: it takes the state's
// lock, so it takes --lock-timeout too.
CLI::App* add_state_subcommand(CLI::App& state, StateOptions& opts, bool writes, const std::string& name,
                               const std::string& summary, Manual manual) {
  CLI::App* cmd = add_command(state, name, summary, std::move(manual));
  add_state_options(*cmd, opts, writes);
  return cmd;
}

}  // namespace

void add_state_command(CLI::App& app, int& exit_code) {
  auto opts = std::make_shared<StateOptions>();
  auto targets = std::make_shared<std::vector<std::string>>();
  auto* cmd = add_command(app, "state", "inspect or edit the state",
                          {.text = "The state records what dbform made or imported: each resource's address, id, status, "
                                   "endpoints, the settings it was given and, for a service, its initial password. It is a "
                                   "file (`dbform.state.json`, with a `.backup` and an intent journal beside it) or a "
                                   "workspace of a PostgreSQL database (`--state postgres://...`). These commands read it or "
                                   "edit it without calling the API; those that write take the state's lock, as apply does.",
                           .examples = {{"What is recorded", "dbform state list"},
                                        {"Stop managing a database (it keeps running)", "dbform state rm acme/services/orders"}}});
  cmd->require_subcommand(1);

  auto* list = add_state_subcommand(*cmd, *opts, false, "list", "addresses of every recorded resource",
                                    {.text = "Prints the address of every recorded resource, one per line, sorted by address (a "
                                             "project's resources together, a service's read replica sets after it): "
                                             "`PROJECT/services/NAME`, `PROJECT/vpcs/NAME`, `PROJECT/services/SERVICE/replicas/NAME` "
                                             "and `PROJECT/vpcs/VPC/peerings/PEER_VPC_ID`.",
                                     .examples = {{"Every address of a state in PostgreSQL", "dbform state list --state postgres://db.internal/dbform --workspace prod"}}});
  list->callback([opts, &exit_code] {
    auto store = open_state_store(*opts);
    const State state = read_recorded_state(*store, true);
    for (const ResourceRecord* r : records_by_address(state)) std::cout << r->address << "\n";
    exit_code = 0;
  });

  auto* show = add_state_subcommand(*cmd, *opts, false, "show", "one resource's record (password hidden)",
                                    {.text = "Prints one resource's record as JSON, as the state holds it: id, status, endpoints, "
                                             "the settings it was given and what the API showed at the last refresh, a pending call "
                                             "or intent. Passwords are shown as `(sensitive)`, `(sealed)` when sealed and no key is set "
                                             "(none is needed here), or `(not readable here)` to a PostgreSQL role that may not read "
                                             "dbform_secrets; `dbform output ADDRESS.password` prints one. ADDRESS may be short (`orders`, `services/orders`) when one record has it.",
                                     .examples = {{"One service's record", "dbform state show acme/services/orders"}}});
  show->add_option("address", *targets, "resource address")->required()->expected(1);
  show->callback([opts, targets, &exit_code] {
    auto store = open_state_store(*opts);
    State state = read_recorded_state(*store, true);
    const ResourceRecord& rec = resolve_address(state, targets->front());
    const nlohmann::json j = shown_record(rec);
    // What the API last answered is kept scrubbed; scrubbed again here for records written before.
    std::cout << scrub(dump_json(j, 2)) << "\n";
    exit_code = 0;
  });

  auto* rm = add_state_subcommand(*cmd, *opts, true, "rm", "forget resources (they keep running; dbform stops managing them)",
                                  {.text = "Forgets the given resources: they keep running, and dbform stops managing them (a "
                                           "manifest that still declares one plans a create, which the refresh shows as a conflict "
                                           "naming the existing id, and `dbform import` brings it back). All the addresses or none: "
                                           "one that is not recorded changes nothing. Forgetting a service or a VPC forgets its read replica "
                                           "sets and peerings with it. A resource whose create's outcome is unknown (an apply stopped "
                                           "before its answer) is refused unless `--force`: it may exist without being listed yet, "
                                           "and forgetting it lets the next apply create a second one; an apply with it declared looks "
                                           "it up by name first.",
                                   .examples = {{"Forget two services", "dbform state rm acme/services/orders acme/services/billing"}}});
  rm->add_option("address", *targets, "resource addresses")->required();
  auto forget_unknown = std::make_shared<bool>(false);
  rm->add_flag("--force", *forget_unknown, "forget even a resource whose create's outcome is unknown");
  rm->callback([opts, targets, forget_unknown, &exit_code] {
    auto store = open_state_store(*opts);
    const StateRmOutcome out =
        state_rm_operation({access_of(*store, "state rm", *opts), recorded_read, *targets, *forget_unknown});
    for (const auto& a : out.removed)
      std::cout << "Removed " << a << " from the state. "
                << (std::count(out.unknown.begin(), out.unknown.end(), a)
                        ? "Its create's outcome was unknown: it may exist in the API, and dbform no longer looks for it.\n"
                        : "It still exists in the API; dbform no longer manages it.\n");
    exit_code = 0;
  });

  auto* mv = add_state_subcommand(*cmd, *opts, true, "mv", "move a record to another name of the same project and kind (no API call; the "
                                                           "next plan from manifests declaring NEW renames the resource to match)",
                                  {.text = "`dbform state mv OLD NEW` moves a record to another name of the same project and kind "
                                           "(NEW is an address or a bare name), with no API call. Once the manifests declare NEW (and "
                                           "no longer OLD), the next plan sees the API's name differ from the record's and plans the "
                                           "`rename` call that makes it NEW; from manifests that still declare OLD, a plan shows a "
                                           "conflict, and one with `--no-refresh` (the state alone) a create of OLD and NEW no "
                                           "longer declared. Declaring `renamed_from: OLD` in the manifest does the same in one reviewed "
                                           "apply. A record whose create's "
                                           "outcome is unknown is refused, and so are read replica sets and peerings (their "
                                           "service or VPC moves, and they move along).",
                                   .examples = {{"Record orders-db as orders; the next apply renames it", "dbform state mv acme/services/orders-db orders"}}});
  auto moved = std::make_shared<std::pair<std::string, std::string>>();
  mv->add_option("old", moved->first, "the recorded address")->required();
  mv->add_option("new", moved->second, "the new address, or the new name")->required();
  mv->callback([opts, moved, &exit_code] {
    auto store = open_state_store(*opts);
    const StateMvOutcome out =
        state_mv_operation({access_of(*store, "state mv", *opts), recorded_read, moved->first, moved->second});
    // What each plan will show, as it does: a refreshing plan reads the API's name, one with
    // --no-refresh knows only the state, where the record is NEW and nothing is named OLD.
    std::cout << "Moved " << out.from << " to " << out.to << ". The API still names it `" << out.old_name
              << "`: once the manifests declare `" << out.name << "` (and no longer `" << out.old_name
              << "`), the next plan (with or without --no-refresh) shows the rename call that makes it so. From "
                 "manifests that still declare `" << out.old_name << "`, a plan shows a conflict there, and a "
                 "plan with --no-refresh (the state alone) shows `" << out.old_name << "` to be created and `"
              << out.name << "` no longer declared (its apply creates nothing: a service of that name exists); `dbform state mv " << out.to << " " << out.old_name
              << "` moves it back. `renamed_from: " << out.old_name
              << "` in the manifest is the reviewable way to do the same.\n";
    exit_code = 0;
  });

  auto* pull = add_state_subcommand(*cmd, *opts, false, "pull", "print the state document (to back it up or move it; not on a terminal)",
                                    {.text = "Prints the whole state document, as stored, to standard output: to back it up or to "
                                             "move it to another backend with `state push`. It holds the services' initial passwords, "
                                             "so it is never printed on a terminal: redirect it. An encrypted state is printed sealed. A "
                                             "PostgreSQL role that may not read dbform_secrets may not pull (its copy would lack the "
                                             "passwords, and pushed back would lose them).",
                                     .examples = {{"Back the state up, readable by you only", "(umask 077; dbform state pull > backup.json)"}}});
  pull->callback([opts, &exit_code] {
    if (detect_terminal().stdout_tty)
      throw UsageError("refusing to print the state on a terminal: it holds the services' initial passwords. "
                       "Redirect it to a file: (umask 077; dbform state pull > backup.json)");
    auto store = open_state_store(*opts);
    std::cout << state_pull_operation(*store, read_state_to_repair) << std::flush;
    exit_code = 0;
  });

  auto source = std::make_shared<std::string>();
  auto force = std::make_shared<bool>(false);
  auto* push = add_state_subcommand(*cmd, *opts, true, "push", "replace the state with a state file's content (refuses another "
                                                               "lineage or an older serial)",
                                    {.text = "Replaces the state (`--state`, `--workspace`) with the content of a state file, after "
                                             "checking that it is the same state and not older: another lineage, or a lower serial "
                                             "than the stored one, is refused unless `--force`. The stored serial then grows by one, "
                                             "as with every write; a forced push over another lineage keeps the stored lineage. "
                                             "Locks the state as apply does.",
                                     .examples = {{"Move a state file into PostgreSQL", "dbform state push dbform.state.json --state postgres://db.internal/dbform"},
                                                  {"And back into a file", "dbform state pull --state postgres://db.internal/dbform > pulled.json\n"
                                                                           "dbform state push pulled.json --state dbform.state.json"}}});
  push->add_option("file", *source, "state file to push, or - for standard input")->required();
  push->add_flag("--force", *force, "push even another lineage or an older serial");
  push->callback([opts, source, force, &exit_code] { exit_code = push_state(*source, *force, *opts); });

  auto* encrypt = add_state_subcommand(*cmd, *opts, true, "encrypt", "seal the state's passwords with the key of DBFORM_STATE_PASSPHRASE or "
                                                                     "DBFORM_STATE_KEY_FILE",
                                       {.text = kKeyText,
                                        .examples = {{"Seal the state's passwords with a key file", "head -c 32 /dev/urandom > state.key\n"
                                                                                          "DBFORM_STATE_KEY_FILE=state.key dbform state encrypt"}}});
  encrypt->callback([opts, &exit_code] {
    auto key = required_key("state encrypt");
    exit_code = rewrite_state({"state encrypt", key, key}, *opts);
  });
  auto* decrypt = add_state_subcommand(*cmd, *opts, true, "decrypt", "store the state's passwords in clear again (its key is needed to open them)",
                                       {.text = kKeyText,
                                        .examples = {{"Store its passwords in clear again", "DBFORM_STATE_KEY_FILE=state.key dbform state decrypt"}}});
  decrypt->callback([opts, &exit_code] {
    exit_code = rewrite_state({"state decrypt", required_key("state decrypt"), std::nullopt}, *opts);
  });
  auto* rekey = add_state_subcommand(*cmd, *opts, true, "rekey", "seal the state's passwords with a new key (DBFORM_STATE_NEW_PASSPHRASE or "
                                                                 "DBFORM_STATE_NEW_KEY_FILE)",
                                     {.text = std::string(kKeyText) + "\n\nThe current key is read from those variables, the new "
                                              "one from `DBFORM_STATE_NEW_PASSPHRASE` or `DBFORM_STATE_NEW_KEY_FILE`.",
                                      .environment = {"DBFORM_STATE_NEW_PASSPHRASE", "DBFORM_STATE_NEW_KEY_FILE"},
                                      .examples = {{"Move from a passphrase to a key file", "DBFORM_STATE_NEW_KEY_FILE=new.key dbform state rekey"}}});
  rekey->callback([opts, &exit_code] {
    auto next = state_key("DBFORM_STATE_NEW_PASSPHRASE", "DBFORM_STATE_NEW_KEY_FILE");
    if (!next) throw UsageError("state rekey needs the new key: set DBFORM_STATE_NEW_PASSPHRASE or "
                                "DBFORM_STATE_NEW_KEY_FILE");
    exit_code = rewrite_state({"state rekey", required_key("state rekey"), next}, *opts);
  });
}

}  // namespace dbform::cli
