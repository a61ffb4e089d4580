// dbform: the command line (cli/app.h). Parses arguments, runs one command, and turns any error
// into a message on stderr and exit code 1. All logic lives in the layers below src/cli/.
#include <atomic>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <new>
#include <optional>
#include <regex>
#include <string>
#include <vector>

#include "cli/app.h"
#include "cli/commands.h"
#include "cli/suggest.h"
#include "cli/context.h"
#include "cli/manual.h"
#include "cli/spellings.h"
#include "util/env.h"
#include "util/error.h"
#include "util/log.h"
#include "util/text.h"

namespace {

// What `dbform version` and `dbform --version` print, as Terraform's do.
std::string version_text() {
#if defined(__x86_64__)
  const char* arch = "amd64";
#elif defined(__aarch64__)
  const char* arch = "arm64";
#else
  const char* arch = "unknown";
#endif
  return std::string("dbform v") + DBFORM_VERSION + "\non linux_" + arch;
}

// The commands of `app`; hidden ones (the man page generator) only when asked for.
std::vector<std::string> command_names(const CLI::App& app, bool hidden = false) {
  std::vector<std::string> names;
  for (const CLI::App* sub : hidden ? app.get_subcommands([](const CLI::App*) { return true; }) : dbform::cli::visible_commands(app))
    names.push_back(sub->get_name());
  return names;
}

// "unknown command `foo`; did you mean `plan`?" and the commands there are.
std::string unknown_command(const CLI::App& parent, const std::string& word) {
  const auto names = command_names(parent);
  const std::string close = dbform::closest_match(word, names);
  const std::string where = parent.get_parent() ? parent.get_name() + " " : "";
  return "unknown command `" + where + word + "`" + (close.empty() ? "" : "; did you mean `" + where + close + "`?") +
         "\nThe commands are: " + dbform::join(names, ", ") + ". See `dbform help" +
         (parent.get_parent() ? " " + parent.get_name() : "") + "`.";
}

// The first word that is not a global option, when it names no command.
std::optional<std::string> unknown_first_word(const CLI::App& app, int argc, char** argv) {
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--log-level") {
      ++i;
      continue;
    }
    if (arg.rfind("-", 0) == 0) continue;
    for (const auto& name : command_names(app, true))
      if (name == arg) return std::nullopt;
    return arg;
  }
  return std::nullopt;
}

// The command the parse got to (`state push` for `dbform state push ...`).
const CLI::App* deepest_command(const CLI::App& app) {
  const CLI::App* command = &app;
  while (!command->get_subcommands().empty()) command = command->get_subcommands().front();
  return command;
}

// For arguments no option took: "unknown flag `--fromat` for `dbform plan`; did you mean `--format`?"
std::string unknown_flags(const CLI::App& app, const CLI::ExtrasError& e) {
  const CLI::App* command = deepest_command(app);
  std::vector<std::string> known;
  for (const CLI::App* scope = command; scope; scope = scope->get_parent())
    for (const CLI::Option* opt : scope->get_options()) {
      for (const auto& l : opt->get_lnames()) known.push_back("--" + l);
      for (const auto& s : opt->get_snames()) known.push_back("-" + s);
    }
  const std::string words = dbform::cli::command_path(*command);
  const std::string path = words.empty() ? "dbform" : "dbform " + words;
  std::string message;
  const bool takes_files = command->get_option_no_throw("--file") != nullptr;
  for (const auto& extra : command->remaining()) {
    if (extra.rfind("-", 0) != 0) {
      if (takes_files && (extra.ends_with(".yaml") || extra.ends_with(".yml") || std::filesystem::exists(extra)))
        message += "`" + extra + "` was not expected: -f takes one path each time, as every repeatable option takes "
                   "one value (`-f a.yaml -f b.yaml`, `--policy a.yaml --policy b.yaml`), so a shell glob such as "
                   "`-f manifests/*.yaml` gives it too many; name the directory instead: `-f manifests/`\n";
      else
        message += "unexpected argument `" + extra + "` for `" + path + "`\n";
      continue;
    }
    const std::string flag = extra.substr(0, extra.find('='));
    const std::string close = dbform::closest_match(flag, known);
    message += "unknown flag `" + flag + "` for `" + path + "`" + (close.empty() ? "" : "; did you mean `" + close + "`?") + "\n";
  }
  if (message.empty()) return std::string(e.what()) + "\n";
  return message + "See `dbform help" + (words.empty() ? "" : " " + words) + "`.\n";
}

std::vector<std::string> split_commas(const std::string& text) {
  std::vector<std::string> parts;
  for (size_t start = 0;;) {
    const size_t comma = text.find(',', start);
    parts.push_back(text.substr(start, comma == std::string::npos ? std::string::npos : comma - start));
    if (comma == std::string::npos) return parts;
    start = comma + 1;
  }
}

// CLI11's own message of a refused parse as every other error says it: "Error: ", a value out of its
// list (`--format: markdwon not in {text,json,markdown}`) with the closest one, a flag without its
// value with what it takes, and the command's help page rather than "Run with --help".
std::string parse_error(const CLI::App& app, const CLI::ParseError& e) {
  static const std::regex not_in(R"(^(\S+): (.*) not in \{(.*)\}$)");
  static const std::regex missing(R"(^(\S+): \d+ required (\S+) missing$)");
  std::string message = e.what();
  std::smatch m;
  if (std::regex_match(message, m, not_in)) {
    const std::vector<std::string> values = split_commas(m[3].str());
    const std::string close = dbform::closest_match(m[2].str(), values);
    message = m[1].str() + ": `" + m[2].str() + "` is not one of " + dbform::join(values, ", ") +
              (close.empty() ? "" : "; did you mean `" + close + "`?");
  } else if (std::regex_match(message, m, missing)) {
    const std::string type = m[2].str();
    const size_t set = type.find(":{");
    message = m[1].str() + " needs a value" +
              (set != std::string::npos && type.back() == '}'
                   ? ": one of " + dbform::join(split_commas(type.substr(set + 2, type.size() - set - 3)), ", ")
                   : "");
  }
  const std::string words = dbform::cli::command_path(*deepest_command(app));
  return message + "\nSee `dbform help" + (words.empty() ? "" : " " + words) + "`.\n";
}

// --no-color is accepted after every command (and before it), whether or not the command colours.
void add_no_color_everywhere(CLI::App& app) {
  for (CLI::App* sub : app.get_subcommands({})) {
    dbform::cli::add_no_color_flag(*sub);
    add_no_color_everywhere(*sub);
  }
}

// Memory kept for the moment it runs out. Destroying a JSON document allocates (nlohmann/json
// frees nested values through a stack of its own), and a destructor that throws ends the process:
// when an allocation first fails, this reserve is freed before the bad_alloc is thrown, so that
// unwinding to the handler that reports it (and keeps what was recorded) has memory to work with.
std::atomic<void*> g_memory_reserve{nullptr};

void release_reserve_and_fail() {
  std::free(g_memory_reserve.exchange(nullptr));
  throw std::bad_alloc();
}

}  // namespace

int dbform::cli::run(int argc, char** argv) {
  g_memory_reserve = std::malloc(size_t{32} << 20);
  std::set_new_handler(release_reserve_and_fail);
  // A closed pipe (`dbform apply --json | head -1`) must never kill a run that is recording what it
  // created: writes to it fail instead, and the run goes on.
  std::signal(SIGPIPE, SIG_IGN);
  CLI::App app{"dbform: declarative reconciler for managed database services", "dbform"};
  app.require_subcommand(1);
  app.set_version_flag("--version", version_text(), "print dbform's version (as `dbform version`)");
  std::string log_level = dbform::process_env()("DBFORM_LOG").value_or("warn");
  app.add_option("--log-level", log_level, "trace, debug, info, warn, error, off (env DBFORM_LOG)")
      ->check(CLI::IsMember({"trace", "debug", "info", "warn", "error", "critical", "off"}));

  dbform::cli::add_no_color_flag(app);  // `dbform --no-color COMMAND`, as well as after each command
  dbform::cli::set_manual(app, {.text = R"(Platform teams declare, per project, the VPCs, database services, read replica sets and peerings they want in YAML manifests (dbform-manifest(5)). `dbform plan` lists what exists, compares it and the state with the manifests and shows what would change; `dbform apply` makes it so through the managed database API, watches each change until it is done, and records ids, endpoints and initial passwords in the state (a file, or a PostgreSQL database).

dbform never creates a database twice (an unknown outcome is looked up by name, never sent again blindly), never deletes without `--prune` (and never more than `--max-deletes`, never what is protected), and refuses input it cannot trust (an unreadable manifest, a hand-edited state that points a delete at a declared database) before it acts.

`dbform help COMMAND` (or `dbform COMMAND --help`) shows a command's page, `man dbform-COMMAND` the same; `dbform help manifest` the manifest format.

## Exit status

0 success; 1 an error (bad input, a conflict, a failed resource, a refused lock); 2 with `plan --detailed-exitcode` when changes are pending; 130 when `apply` was stopped by a signal.)",
                                .examples = {{"Try it against the embedded simulator", "dbform demo"},
                                             {"Check the manifests, see the plan, apply it",
                                              "dbform validate -f manifests/\ndbform plan -f manifests/ --out tfplan\ndbform apply tfplan"},
                                             {"Connect to a database dbform made", "psql \"$(dbform output acme/services/orders.connection_string)\""}}});

  int exit_code = 0;
  dbform::cli::add_validate_command(app, exit_code);
  dbform::cli::add_plan_command(app, exit_code);
  dbform::cli::add_show_command(app, exit_code);
  dbform::cli::add_apply_command(app, exit_code);
  dbform::cli::add_output_command(app, exit_code);
  dbform::cli::add_connect_command(app, exit_code);
  dbform::cli::add_import_command(app, exit_code);
  dbform::cli::add_rotate_password_command(app, exit_code);
  dbform::cli::add_state_command(app, exit_code);
  dbform::cli::add_preview_command(app, exit_code);
  dbform::cli::add_policy_command(app, exit_code);
  dbform::cli::add_whoami_command(app, exit_code);
  dbform::cli::add_sim_command(app, exit_code);
  dbform::cli::add_demo_command(app, exit_code);
  dbform::cli::add_completion_command(app, exit_code);

  auto* help = dbform::cli::add_command(
      app, "help",
      "show the manual of dbform, of a command (`dbform help state push`) or of the manifest format (`dbform help "
      "manifest`)",
      {.text = "Prints a page of the manual, the same text as the man page "
               "(`man dbform-plan`, `man 5 dbform-manifest`) and as `dbform COMMAND --help`.",
       .examples = {{"A command's page", "dbform help apply"},
                    {"A subcommand's", "dbform help state push"},
                    {"The manifest format", "dbform help manifest"}}});
  std::vector<std::string> topic;
  help->add_option("command", topic, "a command and its subcommands, or `manifest`");
  help->callback([&] {
    if (topic == std::vector<std::string>{"manifest"}) {
      std::cout << dbform::cli::manifest_help_text();
      return;
    }
    const CLI::App* target = &app;
    for (const auto& word : topic) {
      const CLI::App* sub = nullptr;
      for (const CLI::App* s : dbform::cli::visible_commands(*target))
        if (s->get_name() == word) sub = s;
      if (!sub) throw dbform::UsageError(unknown_command(*target, word));
      target = sub;
    }
    std::cout << dbform::cli::help_text(*target);
  });
  auto* version = dbform::cli::add_command(app, "version", "show dbform's version (as --version)",
                                           {.text = "Prints dbform's version and the platform it was built for, as "
                                                    "`terraform version` does; `dbform --version` prints the same.",
                                            .examples = {{"Which dbform a pipeline runs", "dbform version"}}});
  version->callback([] { std::cout << version_text() << "\n"; });
  add_no_color_everywhere(app);
  app.parse_complete_callback([&] {
    dbform::log::setup(log_level);
    dbform::cli::remember_run_flags(app, *deepest_command(app));
  });

  // Terraform's spellings (`-out=FILE`, `-refresh=false`) as dbform's own, before anything reads them.
  std::vector<std::string> words = dbform::cli::with_dbform_spellings(app, std::vector<std::string>(argv + 1, argv + argc));
  words.insert(words.begin(), argv[0]);
  std::vector<char*> spelled;
  for (auto& w : words) spelled.push_back(w.data());
  spelled.push_back(nullptr);
  argv = spelled.data();

  if (auto word = unknown_first_word(app, argc, argv)) {
    std::cerr << "Error: " << unknown_command(app, *word) << "\n";
    return 1;
  }
  if (argc == 1) {
    std::cerr << app.help();
    return 1;
  }

  try {
    app.parse(argc, argv);
  } catch (const CLI::ExtrasError& e) {
    std::cerr << "Error: " << unknown_flags(app, e);
    return 1;
  } catch (const CLI::RequiredError& e) {
    // `dbform state pul`: a command that needs a subcommand got a word that names none.
    const CLI::App* command = deepest_command(app);
    const auto left = command->remaining();
    if (command->get_require_subcommand_min() > 0 && !left.empty() && left.front().rfind("-", 0) != 0) {
      std::cerr << "Error: " << unknown_command(*command, left.front()) << "\n";
      return 1;
    }
    if (command != &app && command->get_require_subcommand_min() > 0 && left.empty()) {
      std::cerr << "Error: `dbform " << command->get_name() << "` needs a command: "
                << dbform::join(command_names(*command), ", ") << ". See `dbform help " << command->get_name() << "`.\n";
      return 1;
    }
    std::cerr << "Error: " << parse_error(app, e);
    return 1;
  } catch (const CLI::ParseError& e) {
    if (e.get_exit_code() == 0) return app.exit(e);  // --help, --version
    std::cerr << "Error: " << parse_error(app, e);
    return 1;
  } catch (const dbform::Error& e) {
    std::fflush(stdout);
    std::cerr << "Error: " << dbform::cli::with_run_flags(dbform::scrub(e.what())) << "\n";
    return 1;
  } catch (const std::bad_alloc&) {
    // Nothing here may allocate: the message is a constant.
    std::fflush(stdout);
    std::fputs("Error: the system is out of memory; what was recorded before is in the state\n", stderr);
    return 1;
  } catch (const std::exception& e) {
    std::fflush(stdout);
    const std::string what = dbform::describe_exception(e);
    std::cerr << "Error: " << (what == e.what() ? "unexpected failure: " : "") << dbform::scrub(what) << "\n";
    return 1;
  }
  return exit_code;
}
