#include "cli/spellings.h"

#include <cctype>

namespace dbform::cli {

namespace {

bool has_long_flag(const CLI::App* command, const std::string& name) {
  for (; command; command = command->get_parent())
    for (const CLI::Option* opt : command->get_options())
      for (const auto& l : opt->get_lnames())
        if (l == name) return true;
  return false;
}

const CLI::App* subcommand_named(const CLI::App* command, const std::string& word) {
  for (const CLI::App* sub : command->get_subcommands([](const CLI::App*) { return true; }))
    if (sub->get_name() == word) return sub;
  return nullptr;
}

}  // namespace

std::vector<std::string> with_dbform_spellings(const CLI::App& app, const std::vector<std::string>& args) {
  std::vector<std::string> out;
  out.reserve(args.size());
  const CLI::App* command = &app;
  bool passed_through = false;
  for (const std::string& arg : args) {
    if (passed_through || arg == "--") {
      passed_through = true;
      out.push_back(arg);
      continue;
    }
    if (const CLI::App* sub = arg.empty() || arg[0] == '-' ? nullptr : subcommand_named(command, arg)) command = sub;
    const bool one_dash = arg.size() > 2 && arg[0] == '-' && std::isalpha(static_cast<unsigned char>(arg[1]));
    const bool two_dashes = arg.rfind("--", 0) == 0;
    const std::string word = one_dash ? arg.substr(1) : two_dashes ? arg.substr(2) : "";
    const std::string name = word.substr(0, word.find('='));
    if (name == "refresh" && has_long_flag(command, "no-refresh")) {
      const std::string value = word.size() > name.size() ? word.substr(name.size() + 1) : "true";
      if (value == "false") out.push_back("--no-refresh");
      else if (value == "true") out.push_back("--refresh");
      else out.push_back(arg);  // refused by the parser, with the flag named
      continue;
    }
    out.push_back(one_dash && has_long_flag(command, name) ? "-" + arg : arg);
  }
  return out;
}

}  // namespace dbform::cli
