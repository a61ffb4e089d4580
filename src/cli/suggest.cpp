#include "cli/suggest.h"

#include <regex>
#include <sstream>
#include <vector>

#include "util/text.h"

namespace dbform::cli {

namespace {

struct RunFlags {
  const CLI::App* root = nullptr;
  std::vector<std::pair<std::string, std::string>> given;  // (flag as typed, value), in order
};

RunFlags& run_flags() {
  static RunFlags flags;
  return flags;
}

// A value as the shell reads it back: quoted when it holds anything but plain path characters.
std::string shell_word(const std::string& value) {
  if (!value.empty() && value.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-./:=@,+%") ==
                            std::string::npos)
    return value;
  std::string quoted = "'";
  for (char c : value) quoted += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return quoted + "'";
}

// The command a suggestion's words name: the deepest subcommand they spell out.
const CLI::App* command_of(const std::string& words) {
  const CLI::App* command = run_flags().root;
  std::istringstream in(words);
  std::string word;
  while (command && in >> word) {
    const CLI::App* sub = nullptr;
    for (const CLI::App* s : command->get_subcommands({}))
      if (s->get_name() == word) sub = s;
    if (!sub) break;
    command = sub;
  }
  return command == run_flags().root ? nullptr : command;
}

}  // namespace

void remember_run_flags(const CLI::App& root, const CLI::App& command) {
  RunFlags& flags = run_flags();
  flags.root = &root;
  flags.given.clear();
  if (const CLI::Option* files = command.get_option_no_throw("--file"); files && files->count() > 0)
    for (const auto& f : files->as<std::vector<std::string>>()) flags.given.emplace_back("-f", f);
  for (const char* name : {"--state", "--workspace"})
    if (const CLI::Option* o = command.get_option_no_throw(name); o && o->count() > 0)
      flags.given.emplace_back(name, o->as<std::string>());
}

std::string with_run_flags(const std::string& text) {
  if (run_flags().given.empty() || !run_flags().root) return text;
  static const std::regex suggestion("`dbform ([^`\n]*)`");
  std::string out;
  auto last = text.cbegin();
  for (std::sregex_iterator it(text.begin(), text.end(), suggestion), end; it != end; ++it) {
    const std::string words = (*it)[1];
    std::string completed = words;
    if (const CLI::App* command = command_of(words))
      for (const auto& [flag, value] : run_flags().given) {
        const bool takes = command->get_option_no_throw(flag == "-f" ? "--file" : flag) != nullptr;
        const bool has = (" " + words + " ").find(" " + flag + " ") != std::string::npos;
        if (takes && !has) completed += " " + flag + " " + shell_word(value);
      }
    out.append(last, (*it)[0].first);
    out += "`dbform " + completed + "`";
    last = (*it)[0].second;
  }
  out.append(last, text.cend());
  return out;
}

}  // namespace dbform::cli
