// `dbform state list | show | rm | pull | push`.
#include <iostream>
#include <iterator>

#include "cli/address.h"
#include "cli/commands.h"
#include "cli/context.h"
#include "state/codec.h"
#include "state/pg_store.h"
#include "util/atomic_file.h"
#include "util/text.h"

namespace dbform::cli {

namespace {

constexpr const char* kPullHelp =
    "Prints the whole state document, as stored, to standard output: to back it up or move it to\n"
    "another backend with `state push`. It holds the services' initial passwords, so it is never\n"
    "printed on a terminal: redirect it, e.g. (umask 077; dbform state pull > backup.json).";

constexpr const char* kPushHelp =
    "Replaces the state (--state, --workspace) with the content of a state file, after checking that\n"
    "it is the same state and not older: another lineage, or a lower serial than the stored one, is\n"
    "refused unless --force. The stored serial then grows by one, as with every write; a forced push\n"
    "over another lineage keeps the stored lineage. Locks the state like apply does.\n"
    "  file -> PostgreSQL:  dbform state push dbform.state.json --state postgres://HOST/DB\n"
    "  PostgreSQL -> file:  dbform state pull --state postgres://HOST/DB > pulled.json\n"
    "                       dbform state push pulled.json --state dbform.state.json";

State read_push_source(const std::string& source) {
  if (is_postgres_url(source))
    throw UsageError("state push takes a state file, not `" + redact_url(source) +
                     "`: pull from that database first (dbform state pull --state URL > FILE), then push FILE");
  if (source == "-") {
    std::string text{std::istreambuf_iterator<char>(std::cin), std::istreambuf_iterator<char>()};
    return parse_state(text, "standard input");
  }
  auto text = read_file_if_exists(source);
  if (!text) throw UsageError("cannot push " + source + ": no such file");
  return parse_state(*text, source);
}

int push_state(const std::string& source, bool force, const StateOptions& opts) {
  State incoming = read_push_source(source);
  auto store = open_state_store(opts);
  auto lock = store->lock("state push", lock_timeout(opts));
  const std::string dest = store->describe();
  if (auto current = store->read()) {
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

}  // namespace

void add_state_command(CLI::App& app, int& exit_code) {
  auto opts = std::make_shared<StateOptions>();
  auto targets = std::make_shared<std::vector<std::string>>();
  auto* cmd = app.add_subcommand("state", "inspect or edit the state");
  cmd->require_subcommand(1);

  auto* list = cmd->add_subcommand("list", "addresses of every recorded resource");
  add_state_options(*list, *opts, false);
  list->callback([opts, &exit_code] {
    auto store = open_state_store(*opts);
    for (const auto& r : read_state(*store).resources) std::cout << r.address << "\n";
    exit_code = 0;
  });

  auto* show = cmd->add_subcommand("show", "one resource's record (password hidden)");
  add_state_options(*show, *opts, false);
  show->add_option("address", *targets, "resource address")->required()->expected(1);
  show->callback([opts, targets, &exit_code] {
    auto store = open_state_store(*opts);
    State state = read_state(*store);
    nlohmann::json j = record_to_json(resolve_address(state, targets->front()));
    if (!j["initial_password"].get<std::string>().empty()) j["initial_password"] = "(sensitive)";
    if (j.contains("pending_password")) j["pending_password"] = "(sensitive)";
    std::cout << j.dump(2) << "\n";
    exit_code = 0;
  });

  auto* rm = cmd->add_subcommand("rm", "forget resources (they keep running; dbform stops managing them)");
  add_state_options(*rm, *opts, true);
  rm->add_option("address", *targets, "resource addresses")->required();
  rm->callback([opts, targets, &exit_code] {
    auto store = open_state_store(*opts);
    auto lock = store->lock("state rm", lock_timeout(*opts));
    State state = read_state(*store);
    std::vector<std::string> addresses;
    for (const auto& t : *targets) addresses.push_back(resolve_address(state, t).address);  // all or nothing
    for (const auto& a : addresses) state.remove(a);
    store->write(state);
    for (const auto& a : addresses)
      std::cout << "Removed " << a << " from the state. It still exists in the API; dbform no longer manages it.\n";
    exit_code = 0;
  });

  auto* pull = cmd->add_subcommand("pull", "print the state document (to back it up or move it; not on a terminal)");
  pull->footer(kPullHelp);
  add_state_options(*pull, *opts, false);
  pull->callback([opts, &exit_code] {
    if (detect_terminal().stdout_tty)
      throw UsageError("refusing to print the state on a terminal: it holds the services' initial passwords. "
                       "Redirect it to a file: (umask 077; dbform state pull > backup.json)");
    auto store = open_state_store(*opts);
    auto state = store->read();
    if (!state) throw UsageError("there is no state at " + store->describe() + " yet; nothing to pull");
    std::cout << serialize_state(*state) << std::flush;
    exit_code = 0;
  });

  auto source = std::make_shared<std::string>();
  auto force = std::make_shared<bool>(false);
  auto* push = cmd->add_subcommand("push", "replace the state with a state file's content (refuses another "
                                           "lineage or an older serial)");
  push->footer(kPushHelp);
  add_state_options(*push, *opts, true);
  push->add_option("file", *source, "state file to push, or - for standard input")->required();
  push->add_flag("--force", *force, "push even another lineage or an older serial");
  push->callback([opts, source, force, &exit_code] { exit_code = push_state(*source, *force, *opts); });
}

}  // namespace dbform::cli
