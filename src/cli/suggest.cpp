#include "cli/suggest.h"

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

// `value` as the shell reads it back: as it is when it holds only plain path characters, else quoted.
std::string shell_word(const std::string& value) {
  if (!value.empty() && value.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-./:=@,+%") ==
                            std::string::npos)
    return value;
  return shell_quote(value);
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

// Whether the suggestion `words` (naming `command`) gets the run's `flag`: when its command takes it
// with the same meaning and the words give it no value of their own. --project narrows a preview
// command to a project (import's makes a whole project's manifests); --refresh-only takes no rules.
bool carries(const CLI::App& command, const std::string& words, const std::string& flag) {
  const std::string padded = " " + words + " ";
  if (!command.get_option_no_throw(flag == "-f" ? "--file" : flag)) return false;
  if (flag == "--project" && words.rfind("preview ", 0) != 0) return false;
  if (flag == "--policy" && padded.find(" --refresh-only ") != std::string::npos) return false;
  return padded.find(" " + flag + " ") == std::string::npos;
}

}  // namespace

void remember_run_flags(const CLI::App& root, const CLI::App& command) {
  RunFlags& flags = run_flags();
  flags.root = &root;
  flags.given.clear();
  // What the run acted on: its manifests, its state, its rule files and (of a preview) its project.
  // Not what it did (--auto-approve, --out, --prune, --format...): a pasted command does its own.
  for (const char* name : {"--file", "--policy"})
    if (const CLI::Option* o = command.get_option_no_throw(name); o && o->count() > 0)
      for (const auto& value : o->as<std::vector<std::string>>())
        flags.given.emplace_back(std::string(name) == "--file" ? "-f" : name, value);
  for (const char* name : {"--state", "--workspace", "--lock-timeout", "--project"})
    if (const CLI::Option* o = command.get_option_no_throw(name); o && o->count() > 0)
      flags.given.emplace_back(name, o->as<std::string>());
}

std::string with_run_flags(const std::string& text) {
  if (run_flags().given.empty() || !run_flags().root) return text;
  static const std::string kOpen = "`dbform ";
  std::string out;
  size_t last = 0;
  // Each `dbform WORDS` on one line (a backquote closes it).
  for (size_t at = text.find(kOpen); at != std::string::npos; at = text.find(kOpen, last)) {
    const size_t close = text.find_first_of("`\n", at + kOpen.size());
    if (close == std::string::npos || text[close] != '`') {
      out.append(text, last, at + 1 - last);  // not a suggestion: go on after its backquote
      last = at + 1;
      continue;
    }
    const std::string words = text.substr(at + kOpen.size(), close - at - kOpen.size());
    std::string completed = words;
    if (const CLI::App* command = command_of(words))
      for (const auto& [flag, value] : run_flags().given)
        if (carries(*command, words, flag)) completed += " " + flag + " " + shell_word(value);
    out.append(text, last, at - last);
    out += "`dbform " + completed + "`";
    last = close + 1;
  }
  out.append(text, last, std::string::npos);
  return out;
}

std::string plan_again_command(const PlanDocument& saved, const std::string& file) {
  std::string command = "dbform plan";
  const bool default_paths = saved.manifest_paths == std::vector<std::string>{"."};  // no -f: `-f .`
  for (const auto& path : saved.manifest_paths)
    if (!default_paths) command += " -f " + shell_word(path);
  if (!saved.plan.refreshed) command += " --no-refresh";
  if (saved.plan.prune) command += " --prune";
  if (saved.plan.max_deletes != kDefaultMaxDeletes) command += " --max-deletes " + std::to_string(saved.plan.max_deletes);
  for (const auto& target : saved.plan.targets) command += " --target " + shell_word(target);
  return command + " --out " + shell_word(file);
}

}  // namespace dbform::cli
