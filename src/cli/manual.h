#pragma once
// The manual: a page per command (dbform(1), dbform-COMMAND(1)) and the manifest's
// (dbform-manifest(5)). A command's page is its command-line definition (synopsis, arguments,
// options, the environment its options read) and the hand-written text kept beside the command's
// code (what it does, more variables, examples). One page, three renderings: text for
// `dbform help COMMAND` and `COMMAND --help`, roff for the man pages the build installs, and
// markdown for docs/commands.md.
#include <filesystem>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

namespace dbform::cli {

struct Example {
  std::string what;     // one line: what it does
  std::string command;  // the command line(s), as typed
};

struct Manual {
  // DESCRIPTION, in the markdown the manual renders: paragraphs, `- ` lists, ``` blocks, `code`.
  std::string text = {};
  // Variables read beyond those every command (DBFORM_LOG, NO_COLOR) and --state (DBFORM_STATE...)
  // read: names of kEnvironment below. Most commands read none.
  std::vector<std::string> environment = {};
  std::vector<Example> examples = {};
};

// The variables of the API's key and address, read by every command that calls the API.
extern const std::vector<std::string> kApiEnvironment;

// Attaches `manual` to `cmd`, and makes `cmd --help` print its page.
void set_manual(CLI::App& cmd, Manual manual);
// A command of `parent` (a subcommand of `dbform`, or of a command) with its page: a visible
// command is never made without one.
CLI::App* add_command(CLI::App& parent, const std::string& name, const std::string& summary, Manual manual);

// `dbform help [COMMAND...]`: the page as text (`app` itself: dbform(1)).
std::string help_text(const CLI::App& cmd);
// `dbform help manifest`: docs/manifest.md, built into the binary.
std::string manifest_help_text();
// Writes man1/dbform.1, man1/dbform-COMMAND.1 for every visible command and man5/dbform-manifest.5.
void write_man_pages(const CLI::App& app, const std::filesystem::path& dir);
// docs/commands.md: every command's page.
std::string commands_reference(const CLI::App& app);

}  // namespace dbform::cli
