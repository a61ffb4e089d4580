// `dbform state list | show | rm | pull | push`.
#include <algorithm>
#include <iostream>
#include <iterator>

#include "cli/commands.h"
#include "cli/context.h"
#include "cli/manual.h"
#include "ops/address.h"
#include "state/codec.h"
#include "state/file_store.h"
#include "state/pg_store.h"
#include "util/atomic_file.h"
#include "util/text.h"
#include "util/json_limits.h"

namespace dbform::cli {

namespace {

State read_push_source(const std::string& source, const StateCipher& cipher) {
  if (names_postgres_state(source, "state push's FILE"))
    throw UsageError("state push takes a state file, not `" + redacted_conninfo(source) +
                     "`: pull from that database first (dbform state pull --state URL > FILE), then push FILE");
  if (source == "-") {
    std::string text{std::istreambuf_iterator<char>(std::cin), std::istreambuf_iterator<char>()};
    return checked_unique(parse_state(text, "standard input", cipher), "standard input");
  }
  auto text = read_file_if_exists(source, Links::Follow, kMaxStateBytes);
  if (!text) throw UsageError("cannot push " + source + ": no such file");
  return checked_unique(parse_state(*text, source, cipher), source);
}

int push_state(const std::string& source, bool force, const StateOptions& opts) {
  auto store = open_state_store(opts);
  State incoming = read_push_source(source, store->cipher());
  auto lock = lock_state(*store, "state push", opts);
  const std::string dest = store->describe();
  if (auto current = read_state_to_repair(*store)) {
    const std::string theirs = "lineage " + current->lineage + " serial " + std::to_string(current->serial);
    const std::string ours = "lineage " + incoming.lineage + " serial " + std::to_string(incoming.serial);
    if (current->lineage != incoming.lineage && !force)
      throw UsageError(dest + " holds another state (" + theirs + ") than " + source + " (" + ours +
                       "); nothing was pushed. Check that you push to the right place; --force replaces it anyway");
    if (current->serial > incoming.serial && !force)
      throw UsageError(dest + " is newer (" + theirs + ") than " + source + " (" + ours +
                       "); nothing was pushed. Pull it first, or pass --force to replace it with the older state");
    if (serialize_state(*current) == serialize_state(incoming)) {
      std::cout << "Nothing to push: " << dest << " already holds " << source << " (" << theirs << ").\n";
      return 0;
    }
    // Written over what was just read, under the lock: the compare-and-swap of every write.
    incoming.lineage = current->lineage;
    incoming.serial = current->serial;
  }
  store->write(incoming);
  std::cout << "Pushed " << source << " (" << incoming.resources.size() << " resource(s)) to " << dest
            << ": now lineage " << incoming.lineage << " serial " << incoming.serial << ".\n";
  return 0;
}

// What encrypt, decrypt and rekey say of the key.
constexpr const char* kKeyText =
    "The key is `DBFORM_STATE_PASSPHRASE` (stretched with scrypt; its salt is stored in the state) or "
    "`DBFORM_STATE_KEY_FILE` (a file of exactly 32 random bytes: `head -c 32 /dev/urandom > state.key`). With a key "
    "set, every write of the state (the document, its `.backup`, the journal, recovery files, `state pull`) is sealed "
    "with AES-256-GCM, and reading needs the same key. Each command rewrites the whole state once, under the lock; "
    "the file store rewrites its `.backup` in the new form too.";

// `state encrypt | decrypt | rekey`: one whole write under the lock, read with one key and written
// with another (or none). The file store rewrites its .backup in the new form too.
struct Rekeying {
  const char* operation;
  std::optional<StateKey> read_with, write_with;
};

int rewrite_state(const Rekeying& how, const StateOptions& opts) {
  auto store = open_state_store(opts);
  store->set_cipher(std::make_shared<StateCipher>(how.read_with, how.write_with));
  auto lock = lock_state(*store, how.operation, opts);
  auto state = store->read();
  if (!state) throw UsageError("there is no state at " + store->describe() + " yet; nothing to " +
                               std::string(how.operation).substr(6));
  const std::string before = store->sealed_by();
  const std::string after = store->cipher().sealing_key_id();
  if (before == after) {
    std::cout << store->describe() << (after.empty() ? " is not encrypted" : " is already encrypted with key id " + after)
              << "; nothing was changed.\n";
    return 0;
  }
  store->write(*state);
  const std::string was = before.empty() ? "plain" : "key id " + before;
  const std::string now = after.empty() ? "plain (passwords readable by whoever can read it)" : "key id " + after;
  std::cout << store->describe() << ": " << was << " -> " << now << ", serial " << state->serial
            << (dynamic_cast<const FileStateStore*>(store.get()) ? "; its .backup too" : "") << ".\n";
  if (how.write_with && !before.empty())
    std::cout << "The old key no longer opens it: from now on give the new key (now in " << how.write_with->origin()
              << ") as DBFORM_STATE_PASSPHRASE or DBFORM_STATE_KEY_FILE.\n";
  if (!how.write_with)
    std::cout << "Unset DBFORM_STATE_PASSPHRASE / DBFORM_STATE_KEY_FILE, or the next write encrypts it again.\n";
  return 0;
}

// The address `text` names for a record moving from `from`: a full address, `KIND/NAME` or `NAME`,
// always of the same project and kind.
std::string moved_address(const ResourceRecord& from, const std::string& text) {
  const std::string prefix = from.project_id + "/" + kind_plural(from.kind) + "/";
  std::string name = text;
  if (text.rfind(prefix, 0) == 0) name = text.substr(prefix.size());
  else if (text.rfind(std::string(kind_plural(from.kind)) + "/", 0) == 0) name = text.substr(text.find('/') + 1);
  if (!is_valid_name(name))
    throw UsageError("`" + text + "` is not a new address for " + from.address + ": give " + prefix +
                     "NAME (same project and kind) or a bare NAME (letters, digits, - and _)");
  return prefix + name;
}

StateKey required_key(const char* operation) {
  auto key = state_key("DBFORM_STATE_PASSPHRASE", "DBFORM_STATE_KEY_FILE");
  if (!key)
    throw UsageError(std::string(operation) + " needs the state's key: set DBFORM_STATE_PASSPHRASE or "
                     "DBFORM_STATE_KEY_FILE");
  return *key;
}

}  // namespace

void add_state_command(CLI::App& app, int& exit_code) {
  auto opts = std::make_shared<StateOptions>();
  auto targets = std::make_shared<std::vector<std::string>>();
  auto* cmd = app.add_subcommand("state", "inspect or edit the state");
  cmd->require_subcommand(1);
  set_manual(*cmd, {.text = "The state records what dbform made or imported: each resource's address, id, status, "
                            "endpoints, the settings it was given and, for a service, its initial password. It is a "
                            "file (`dbform.state.json`, with a `.backup` and an intent journal beside it) or a "
                            "workspace of a PostgreSQL database (`--state postgres://...`). These commands read it or "
                            "edit it without calling the API; those that write take the state's lock, as apply does.",
                    .environment = {},
                    .examples = {{"What is recorded", "dbform state list"},
                                 {"Stop managing a database (it keeps running)", "dbform state rm acme/services/orders"}}});

  auto* list = cmd->add_subcommand("list", "addresses of every recorded resource");
  add_state_options(*list, *opts, false);
  set_manual(*list, {.text = "Prints the address of every recorded resource, one per line, sorted by address (a "
                             "project's resources together, a service's read replica sets after it): "
                             "`PROJECT/services/NAME`, `PROJECT/vpcs/NAME`, `PROJECT/services/SERVICE/replicas/NAME` "
                             "and `PROJECT/vpcs/VPC/peerings/PEER_VPC_ID`.",
                     .environment = {},
                     .examples = {{"Every address of a state in PostgreSQL", "dbform state list --state postgres://db.internal/dbform --workspace prod"}}});
  list->callback([opts, &exit_code] {
    auto store = open_state_store(*opts);
    const State state = read_recorded_state(*store, true);
    for (const ResourceRecord* r : records_by_address(state)) std::cout << r->address << "\n";
    exit_code = 0;
  });

  auto* show = cmd->add_subcommand("show", "one resource's record (password hidden)");
  add_state_options(*show, *opts, false);
  set_manual(*show, {.text = "Prints one resource's record as JSON, as the state holds it: id, status, endpoints, "
                             "the settings it was given and what the API showed at the last refresh, a pending call "
                             "or intent. Passwords are shown as `(sensitive)`; `dbform output ADDRESS.password` "
                             "prints one. ADDRESS may be short (`orders`, `services/orders`) when one record has it.",
                     .environment = {},
                     .examples = {{"One service's record", "dbform state show acme/services/orders"}}});
  show->add_option("address", *targets, "resource address")->required()->expected(1);
  show->callback([opts, targets, &exit_code] {
    auto store = open_state_store(*opts);
    State state = read_recorded_state(*store, true);
    nlohmann::json j = record_to_json(resolve_address(state, targets->front()));
    if (!j["initial_password"].get<std::string>().empty()) j["initial_password"] = "(sensitive)";
    if (j.contains("pending_password")) j["pending_password"] = "(sensitive)";
    // What the API last answered is kept scrubbed; scrubbed again here for records written before.
    std::cout << scrub(dump_json(j, 2)) << "\n";
    exit_code = 0;
  });

  auto* rm = cmd->add_subcommand("rm", "forget resources (they keep running; dbform stops managing them)");
  add_state_options(*rm, *opts, true);
  set_manual(*rm, {.text = "Forgets the given resources: they keep running, and dbform stops managing them (a "
                           "manifest that still declares one plans a create, which the refresh shows as a conflict "
                           "naming the existing id, and `dbform import` brings it back). All the addresses or none: "
                           "one that is not recorded changes nothing. Forgetting a service or a VPC forgets its read replica "
                           "sets and peerings with it. A resource whose create's outcome is unknown (an apply stopped "
                           "before its answer) is refused unless `--force`: it may exist without being listed yet, "
                           "and forgetting it lets the next apply create a second one; an apply with it declared looks "
                           "it up by name first.",
                   .environment = {},
                   .examples = {{"Forget two services", "dbform state rm acme/services/orders acme/services/billing"}}});
  rm->add_option("address", *targets, "resource addresses")->required();
  auto forget_unknown = std::make_shared<bool>(false);
  rm->add_flag("--force", *forget_unknown, "forget even a resource whose create's outcome is unknown");
  rm->callback([opts, targets, forget_unknown, &exit_code] {
    auto store = open_state_store(*opts);
    auto lock = lock_state(*store, "state rm", *opts);
    State state = read_recorded_state(*store, true);
    std::vector<std::string> addresses;
    for (const auto& t : *targets) addresses.push_back(resolve_address(state, t).address);  // all or nothing
    // What lives in a forgotten service or VPC goes with it: a record whose parent is not recorded
    // could be neither read nor deleted.
    for (const auto& r : state.resources)
      if (auto kind = parent_kind(r.kind);
          kind && std::count(addresses.begin(), addresses.end(), resource_address(r.project_id, *kind, r.parent)) &&
          !std::count(addresses.begin(), addresses.end(), r.address))
        addresses.push_back(r.address);
    std::vector<std::string> unknown;  // created, perhaps: an apply stopped before the answer
    for (const auto& a : addresses)
      if (const ResourceRecord* r = state.find(a); r->create_pending && r->id.empty()) unknown.push_back(a);
    if (!unknown.empty() && !*forget_unknown)
      throw UsageError("nothing was removed: the create of " + join(unknown, ", ") +
                       " stopped before its outcome was known, so it may exist without being listed yet, and "
                       "forgetting it lets the next apply create a second one. Apply with it declared first (it is "
                       "looked up by name and adopted), or pass --force to forget it anyway");
    for (const auto& a : addresses) state.remove(a);
    store->write(state);
    for (const auto& a : addresses)
      std::cout << "Removed " << a << " from the state. "
                << (std::count(unknown.begin(), unknown.end(), a)
                        ? "Its create's outcome was unknown: it may exist in the API, and dbform no longer looks for it.\n"
                        : "It still exists in the API; dbform no longer manages it.\n");
    exit_code = 0;
  });

  auto* mv = cmd->add_subcommand("mv", "move a record to another name of the same project and kind (no API call; the "
                                       "next plan from manifests declaring NEW renames the resource to match)");
  add_state_options(*mv, *opts, true);
  set_manual(*mv, {.text = "`dbform state mv OLD NEW` moves a record to another name of the same project and kind "
                           "(NEW is an address or a bare name), with no API call. Once the manifests declare NEW (and "
                           "no longer OLD), the next plan sees the API's name differ from the record's and plans the "
                           "`rename` call that makes it NEW; a plan from manifests that still declare OLD shows a "
                           "conflict. Declaring `renamed_from: OLD` in the manifest does the same in one reviewed "
                           "apply. A record whose create's "
                           "outcome is unknown is refused, and so are read replica sets and peerings (their "
                           "service or VPC moves, and they move along).",
                   .environment = {},
                   .examples = {{"Record orders-db as orders; the next apply renames it", "dbform state mv acme/services/orders-db orders"}}});
  auto moved = std::make_shared<std::pair<std::string, std::string>>();
  mv->add_option("old", moved->first, "the recorded address")->required();
  mv->add_option("new", moved->second, "the new address, or the new name")->required();
  mv->callback([opts, moved, &exit_code] {
    auto store = open_state_store(*opts);
    auto lock = lock_state(*store, "state mv", *opts);
    State state = read_recorded_state(*store, true);
    const ResourceRecord& from = resolve_address(state, moved->first);
    if (parent_kind(from.kind))
      throw UsageError("`" + from.address + "` is a " + kind_noun(from.kind) + ", which the API cannot rename; move " +
                       "its " + kind_noun(*parent_kind(from.kind)) + " instead, and it moves along");
    const std::string to = moved_address(from, moved->second);
    if (state.find(to)) throw UsageError("`" + to + "` is recorded already: `dbform state rm` it first, or choose another name");
    if (auto why = unmovable_reason(from); !why.empty()) throw UsageError(why);
    const std::string old_address = from.address, old_name = from.name, name = to.substr(to.rfind('/') + 1);
    move_record(state, old_address, to, name);
    store->write(state);
    std::cout << "Moved " << old_address << " to " << to << ". The API still names it `" << old_name
              << "`: once the manifests declare `" << name << "` (and no longer `" << old_name
              << "`), the next plan shows the rename call that makes it so; a plan from manifests that still "
                 "declare `" << old_name << "` shows a conflict there. `renamed_from: " << old_name
              << "` in the manifest is the reviewable way to do the same.\n";
    exit_code = 0;
  });

  auto* pull = cmd->add_subcommand("pull", "print the state document (to back it up or move it; not on a terminal)");
  set_manual(*pull, {.text = "Prints the whole state document, as stored, to standard output: to back it up or to "
                             "move it to another backend with `state push`. It holds the services' initial passwords, "
                             "so it is never printed on a terminal: redirect it. An encrypted state is printed sealed.",
                     .environment = {},
                     .examples = {{"Back the state up, readable by you only", "(umask 077; dbform state pull > backup.json)"}}});
  add_state_options(*pull, *opts, false);
  pull->callback([opts, &exit_code] {
    if (detect_terminal().stdout_tty)
      throw UsageError("refusing to print the state on a terminal: it holds the services' initial passwords. "
                       "Redirect it to a file: (umask 077; dbform state pull > backup.json)");
    auto store = open_state_store(*opts);
    auto state = read_state_to_repair(*store);
    if (!state) throw UsageError("there is no state at " + store->describe() + " yet; nothing to pull");
    std::cout << serialize_state(*state, store->cipher()) << std::flush;
    exit_code = 0;
  });

  auto source = std::make_shared<std::string>();
  auto force = std::make_shared<bool>(false);
  auto* push = cmd->add_subcommand("push", "replace the state with a state file's content (refuses another "
                                           "lineage or an older serial)");
  set_manual(*push, {.text = "Replaces the state (`--state`, `--workspace`) with the content of a state file, after "
                             "checking that it is the same state and not older: another lineage, or a lower serial "
                             "than the stored one, is refused unless `--force`. The stored serial then grows by one, "
                             "as with every write; a forced push over another lineage keeps the stored lineage. "
                             "Locks the state as apply does.",
                     .environment = {},
                     .examples = {{"Move a state file into PostgreSQL", "dbform state push dbform.state.json --state postgres://db.internal/dbform"},
                                  {"And back into a file", "dbform state pull --state postgres://db.internal/dbform > pulled.json\n"
                                                           "dbform state push pulled.json --state dbform.state.json"}}});
  add_state_options(*push, *opts, true);
  push->add_option("file", *source, "state file to push, or - for standard input")->required();
  push->add_flag("--force", *force, "push even another lineage or an older serial");
  push->callback([opts, source, force, &exit_code] { exit_code = push_state(*source, *force, *opts); });

  auto* encrypt = cmd->add_subcommand("encrypt", "encrypt the state with the key of DBFORM_STATE_PASSPHRASE or "
                                                 "DBFORM_STATE_KEY_FILE");
  set_manual(*encrypt, {.text = kKeyText,
                        .environment = {},
                        .examples = {{"Encrypt the state with a key file", "head -c 32 /dev/urandom > state.key\n"
                                                                          "DBFORM_STATE_KEY_FILE=state.key dbform state encrypt"}}});
  add_state_options(*encrypt, *opts, true);
  encrypt->callback([opts, &exit_code] {
    auto key = required_key("state encrypt");
    exit_code = rewrite_state({"state encrypt", key, key}, *opts);
  });
  auto* decrypt = cmd->add_subcommand("decrypt", "store the state as plain JSON again (its key is needed to read it)");
  set_manual(*decrypt, {.text = kKeyText,
                        .environment = {},
                        .examples = {{"Store it as plain JSON again", "DBFORM_STATE_KEY_FILE=state.key dbform state decrypt"}}});
  add_state_options(*decrypt, *opts, true);
  decrypt->callback([opts, &exit_code] {
    exit_code = rewrite_state({"state decrypt", required_key("state decrypt"), std::nullopt}, *opts);
  });
  auto* rekey = cmd->add_subcommand("rekey", "encrypt the state with a new key (DBFORM_STATE_NEW_PASSPHRASE or "
                                             "DBFORM_STATE_NEW_KEY_FILE)");
  set_manual(*rekey, {.text = std::string(kKeyText) + "\n\nThe current key is read from those variables, the new "
                              "one from `DBFORM_STATE_NEW_PASSPHRASE` or `DBFORM_STATE_NEW_KEY_FILE`.",
                      .environment = {"DBFORM_STATE_NEW_PASSPHRASE", "DBFORM_STATE_NEW_KEY_FILE"},
                      .examples = {{"Move from a passphrase to a key file", "DBFORM_STATE_NEW_KEY_FILE=new.key dbform state rekey"}}});
  add_state_options(*rekey, *opts, true);
  rekey->callback([opts, &exit_code] {
    auto next = state_key("DBFORM_STATE_NEW_PASSPHRASE", "DBFORM_STATE_NEW_KEY_FILE");
    if (!next) throw UsageError("state rekey needs the new key: set DBFORM_STATE_NEW_PASSPHRASE or "
                                "DBFORM_STATE_NEW_KEY_FILE");
    exit_code = rewrite_state({"state rekey", required_key("state rekey"), next}, *opts);
  });
}

}  // namespace dbform::cli
