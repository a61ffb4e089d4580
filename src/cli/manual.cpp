// The manual's pages, from the command-line definition and the hand-written text beside each
// command, rendered as text, roff and markdown from one markdown source.
#include "cli/manual.h"

#include <algorithm>
#include <cctype>
#include <fstream>
#include <map>
#include <optional>
#include <set>
#include <sstream>

#include "cli/context.h"
#include "util/error.h"
#include "util/text.h"

namespace dbform::cli {

extern const char* const kManifestDoc;  // docs/manifest.md, generated into the build (CMakeLists.txt)

const std::vector<std::string> kApiEnvironment = {"DBFORM_API_URL",     "DBFORM_API_KEY", "DBFORM_API_KEY_<PROJECT>",
                                                  "DBFORM_AUTH_SCHEME", "SSL_CERT_FILE",  "SSL_CERT_DIR",
                                                  "DBFORM_ALLOW_HTTP",  "DBFORM_RETRY_BACKOFF"};

namespace {

struct Variable {
  std::string name;
  std::string meaning;
};

// Every variable dbform reads, in the order pages list them.
const std::vector<Variable> kEnvironment = {
    {"DBFORM_API_URL", "the API's base URL, an `https://` URL with a host (default "
                       "`https://console.cloud.tigerdata.com/public/api/v1`); plain `http://` only to a loopback "
                       "address (127.0.0.0/8, ::1, localhost: the simulator) unless DBFORM_ALLOW_HTTP=1"},
    {"DBFORM_API_KEY", "the API key of every project without a key of its own"},
    {"DBFORM_API_KEY_<PROJECT>", "the key of project PROJECT: its id upper-cased, every character other than A-Z "
                                 "and 0-9 turned into `_` (a project's `api_key_env` names another variable instead)"},
    {"DBFORM_VAR_<NAME>", "the value of `${NAME}` in a manifest, which reads no other variable (dbform-manifest(5))"},
    {"DBFORM_AUTH_SCHEME", "`bearer` (the default: `Authorization: Bearer KEY`) or `basic` (KEY is `public:secret`)"},
    {"SSL_CERT_FILE", "the CA bundle (PEM) the API's certificate must chain to, instead of the system's; a "
                      "certificate that fails (unknown issuer, wrong host, expired) fails the command at once, "
                      "before anything is sent"},
    {"SSL_CERT_DIR", "directories of CA certificates (PEM, hashed by `c_rehash`), separated by `:`, trusted "
                     "instead of the system's directory and beside the bundle, as OpenSSL reads it"},
    {"DBFORM_ALLOW_HTTP", "`1`: plain `http://` to any host, the API key in clear text (by default only to loopback)"},
    {"DBFORM_RETRY_BACKOFF", "the longest wait before the first retry of a failed call (default `500ms`, at most "
                             "`30s`), doubled for each further retry up to 30s; the wait is a random part of it, or "
                             "the API's Retry-After"},
    {"DBFORM_STATE", "the state, instead of `--state`: a file, a `postgres://` URL or a libpq keyword string "
                     "(`host=... dbname=...`)"},
    {"DBFORM_WORKSPACE", "which state of a PostgreSQL database, instead of `--workspace` (default `default`)"},
    {"DBFORM_STATE_PASSPHRASE", "the passphrase the state's passwords are sealed with (stretched with scrypt); only "
                                "the commands that read or record a password need it"},
    {"DBFORM_STATE_KEY_FILE", "a file of exactly 32 random bytes the state's passwords are sealed with"},
    {"DBFORM_STATE_NEW_PASSPHRASE", "`state rekey`: the new passphrase"},
    {"DBFORM_STATE_NEW_KEY_FILE", "`state rekey`: the new key file"},
    {"DBFORM_POLICY", "the rule files every plan is checked against, instead of `--policy`: a `:`-separated list "
                      "of paths (see dbform-policy(1))"},
    {"DBFORM_LOG", "the log level on stderr: `trace` (HTTP bodies, secrets masked), `debug` (every HTTP exchange), "
                   "`info`, `warn` (the default), `error`, `off`; or `--log-level`"},
    {"NO_COLOR", "set to anything: no colour even on a terminal; or `--no-color`"},
};

const std::vector<std::string> kEveryCommandEnvironment = {"DBFORM_LOG", "NO_COLOR"};
const std::vector<std::string> kStateEnvironment = {"DBFORM_STATE", "DBFORM_WORKSPACE", "DBFORM_STATE_PASSPHRASE",
                                                    "DBFORM_STATE_KEY_FILE"};

std::map<const CLI::App*, Manual>& manuals() {
  static std::map<const CLI::App*, Manual> m;
  return m;
}

// ---- one page, as sections of markdown -------------------------------------------------------

struct Section {
  std::string title;  // upper case, as man pages have them
  std::string markdown;
};

struct Page {
  std::string name;     // dbform-state-push
  std::string title;    // dbform state push
  std::string summary;  // one line
  int man_section = 1;
  std::vector<Section> sections;
  std::vector<std::string> see_also;  // dbform(1), ...
};

// `markdown` cut at its `## ` headings, the part before the first titled `first`; a `# ` title is
// left out (the page's name says it).
std::vector<Section> sections_of(const std::string& markdown, const std::string& first) {
  std::vector<Section> sections;
  Section current{first, ""};
  bool fenced = false;
  std::istringstream in(markdown);
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("```", 0) == 0) fenced = !fenced;
    if (!fenced && line.rfind("# ", 0) == 0) continue;
    if (!fenced && line.rfind("## ", 0) == 0) {
      if (!current.markdown.empty()) sections.push_back(current);
      current = {upper(line.substr(3)), ""};
      continue;
    }
    current.markdown += line + "\n";
  }
  if (!current.markdown.empty()) sections.push_back(current);
  return sections;
}

std::string flag_names(const CLI::Option& opt) {
  std::vector<std::string> names;
  for (const auto& s : opt.get_snames()) names.push_back("-" + s);
  for (const auto& l : opt.get_lnames()) names.push_back("--" + l);
  std::string type = opt.get_type_size() == 0 ? "" : opt.get_type_name();
  if (const auto colon = type.find(':'); colon != std::string::npos) type = type.substr(0, colon);
  return "`" + join(names, "`, `") + (type.empty() ? "" : " " + type) + "`";
}

bool is_help(const CLI::Option& opt) { return opt.get_name() == "--help" || opt.get_name() == "-h,--help"; }

std::string synopsis(const CLI::App& cmd) {
  std::string line = "dbform" + (command_path(cmd).empty() ? "" : " " + command_path(cmd));
  bool flags = false;
  std::string args;
  for (const CLI::Option* opt : cmd.get_options()) {
    if (is_help(*opt)) continue;
    if (!opt->get_positional()) {
      flags = true;
      continue;
    }
    std::string arg = upper(opt->get_name()) + (opt->get_expected_max() > 1 ? "..." : "");
    args += " " + (opt->get_required() ? arg : "[" + arg + "]");
  }
  if (!visible_commands(cmd).empty()) return "```text\n" + line + (flags ? " [OPTIONS]" : "") + " COMMAND [ARGS]\n```\n";
  return "```text\n" + line + (flags ? " [OPTIONS]" : "") + args + "\n```\n";
}

std::string variables(const std::vector<std::string>& names) {
  std::string out;
  for (const auto& v : kEnvironment)
    if (std::find(names.begin(), names.end(), v.name) != names.end()) out += "- `" + v.name + "`: " + v.meaning + "\n";
  return out;
}

std::string examples(const std::vector<Example>& list) {
  std::vector<std::string> blocks;
  for (const auto& e : list) blocks.push_back("# " + e.what + "\n" + e.command + "\n");
  return blocks.empty() ? "" : "```sh\n" + join(blocks, "\n") + "```\n";
}

Page command_page(const CLI::App& cmd) {
  const bool root = cmd.get_parent() == nullptr;
  const std::string path = command_path(cmd);
  Page page;
  page.title = root ? "dbform" : "dbform " + path;
  page.name = page.title;
  std::replace(page.name.begin(), page.name.end(), ' ', '-');
  page.summary = cmd.get_description();
  if (root) page.summary = page.summary.substr(page.summary.find(": ") + 2);
  const auto found = manuals().find(&cmd);
  const Manual manual = found == manuals().end() ? Manual{} : found->second;

  page.sections.push_back({"SYNOPSIS", synopsis(cmd)});
  std::vector<Section> written = sections_of(manual.text, "DESCRIPTION");  // and EXIT STATUS, ...
  if (!written.empty() && written.front().title == "DESCRIPTION") {
    page.sections.push_back(written.front());
    written.erase(written.begin());
  }
  std::string commands, arguments, options;
  for (const CLI::App* sub : visible_commands(cmd)) {
    commands += "- `" + sub->get_name() + "`: " + sub->get_description() + "\n";
    page.see_also.push_back(page.name + "-" + sub->get_name() + "(1)");
  }
  std::vector<std::string> environment = root ? std::vector<std::string>{} : kEveryCommandEnvironment;
  for (const CLI::Option* opt : cmd.get_options()) {
    if (is_help(*opt)) continue;
    if (opt->get_positional()) arguments += "- `" + upper(opt->get_name()) + "`: " + opt->get_description() + "\n";
    else options += "- " + flag_names(*opt) + ": " + opt->get_description() + "\n";
    if (opt->get_name() == "--state") environment.insert(environment.end(), kStateEnvironment.begin(), kStateEnvironment.end());
    if (opt->get_name() == "--policy") environment.push_back("DBFORM_POLICY");
    if (opt->get_name() == "--file") environment.push_back("DBFORM_VAR_<NAME>");
  }
  if (root)
    for (const auto& v : kEnvironment) environment.push_back(v.name);
  environment.insert(environment.end(), manual.environment.begin(), manual.environment.end());
  if (!commands.empty()) page.sections.push_back({"COMMANDS", commands});
  if (!arguments.empty()) page.sections.push_back({"ARGUMENTS", arguments});
  if (!options.empty()) page.sections.push_back({"OPTIONS", options});
  page.sections.insert(page.sections.end(), written.begin(), written.end());
  page.sections.push_back({"ENVIRONMENT", variables(environment)});
  if (!manual.examples.empty()) page.sections.push_back({"EXAMPLES", examples(manual.examples)});
  if (!root) page.see_also.insert(page.see_also.begin(), "dbform(1)");
  if (root || cmd.get_option_no_throw("--file")) page.see_also.push_back("dbform-manifest(5)");
  return page;
}

// docs/manifest.md as a page: its `## ` headings are the sections.
Page manifest_page() {
  return {"dbform-manifest", "dbform manifest", "the manifests dbform reads: projects, VPCs, services and what they hold",
          5, sections_of(kManifestDoc, "DESCRIPTION"), {"dbform(1)", "dbform-validate(1)", "dbform-plan(1)"}};
}

// ---- the markdown the manual is written in ---------------------------------------------------

struct Block {
  enum Kind { Heading, Paragraph, Item, Code, Row } kind;
  std::string text;                // joined lines (Code: as written)
  std::vector<std::string> cells;  // Row
  bool header = false;             // Row: a table's first row
};

bool is_table_separator(const std::string& line) {
  return line.rfind("|", 0) == 0 && line.find_first_not_of("|-: ") == std::string::npos;
}

std::vector<std::string> cells_of(const std::string& line) {
  std::vector<std::string> cells;
  std::string cell;
  bool code = false;
  for (size_t i = 1; i < line.size(); ++i) {  // past the leading |
    if (line[i] == '`') code = !code;
    if (line[i] == '|' && !code) {
      cells.push_back(trim(cell));
      cell.clear();
    } else {
      cell += line[i];
    }
  }
  return cells;
}

std::vector<Block> parse_blocks(const std::string& markdown) {
  std::vector<std::string> lines;
  std::istringstream in(markdown);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  std::vector<Block> blocks;
  auto starts_block = [](const std::string& l) {
    return l.empty() || l.rfind("```", 0) == 0 || l.rfind("#", 0) == 0 || l.rfind("- ", 0) == 0 || l.rfind("|", 0) == 0;
  };
  for (size_t i = 0; i < lines.size();) {
    const std::string& line = lines[i];
    if (trim(line).empty()) {
      ++i;
    } else if (line.rfind("```", 0) == 0) {
      Block b{Block::Code, "", {}};
      for (++i; i < lines.size() && lines[i].rfind("```", 0) != 0; ++i) b.text += lines[i] + "\n";
      ++i;
      blocks.push_back(b);
    } else if (line.rfind("#", 0) == 0) {
      blocks.push_back({Block::Heading, trim(line.substr(line.find(' '))), {}});
      ++i;
    } else if (line.rfind("|", 0) == 0) {
      const bool header = i + 1 < lines.size() && is_table_separator(lines[i + 1]);
      if (!is_table_separator(line)) blocks.push_back({Block::Row, "", cells_of(line), header});
      ++i;
    } else {
      const bool item = line.rfind("- ", 0) == 0;
      Block b{item ? Block::Item : Block::Paragraph, trim(item ? line.substr(2) : line), {}};
      for (++i; i < lines.size() && !starts_block(lines[i]) && (!item || lines[i].rfind("  ", 0) == 0); ++i)
        b.text += " " + trim(lines[i]);
      blocks.push_back(b);
    }
  }
  return blocks;
}

// At `i`, a markdown link `[text](target)`: its text, and where its `)` is.
std::optional<std::pair<std::string, size_t>> link_at(const std::string& s, size_t i) {
  if (s[i] != '[') return std::nullopt;
  const size_t close = s.find(']', i);
  if (close == std::string::npos || close + 1 >= s.size() || s[close + 1] != '(') return std::nullopt;
  const size_t end = s.find(')', close);
  if (end == std::string::npos) return std::nullopt;
  return std::pair(s.substr(i + 1, close - i - 1), end);
}

// `code`, **bold** and *emphasis* as roff fonts, [text](link) as its text; `\` and `-` escaped.
std::string roff_inline(const std::string& s) {
  std::string out;
  bool code = false, bold = false, italic = false;
  for (size_t i = 0; i < s.size(); ++i) {
    const char c = s[i];
    if (c == '`') {
      out += (code = !code) ? "\\fB" : "\\fR";
    } else if (!code && c == '*' && i + 1 < s.size() && s[i + 1] == '*') {
      out += (bold = !bold) ? "\\fB" : "\\fR";
      ++i;
    } else if (!code && c == '*' && (italic || (i + 1 < s.size() && std::isalnum(static_cast<unsigned char>(s[i + 1]))))) {
      out += (italic = !italic) ? "\\fI" : "\\fR";
    } else if (auto link = code ? std::nullopt : link_at(s, i)) {
      out += roff_inline(link->first);
      i = link->second;
    } else if (c == '\\') {
      out += "\\e";
    } else if (c == '-') {
      out += "\\-";
    } else {
      out += c;
    }
  }
  if (code || bold || italic) out += "\\fR";
  return out;
}

// A roff text line may not start with a control character.
std::string roff_line(const std::string& s) {
  return (!s.empty() && (s[0] == '.' || s[0] == '\'')) ? "\\&" + s : s;
}

std::string to_roff(const std::string& markdown) {
  std::string out;
  for (const Block& b : parse_blocks(markdown)) switch (b.kind) {
      case Block::Heading: out += ".SS " + roff_inline(b.text) + "\n"; break;
      case Block::Paragraph: out += ".PP\n" + roff_line(roff_inline(b.text)) + "\n"; break;
      case Block::Item: out += ".IP \\(bu 2\n" + roff_line(roff_inline(b.text)) + "\n"; break;
      case Block::Code: {
        out += ".PP\n.RS 4\n.nf\n";
        std::istringstream in(b.text);
        for (std::string line; std::getline(in, line);) {
          std::string escaped;
          for (char c : line) escaped += c == '\\' ? std::string("\\e") : c == '-' ? std::string("\\-") : std::string(1, c);
          out += roff_line(escaped) + "\n";
        }
        out += ".fi\n.RE\n";
        break;
      }
      case Block::Row:
        if (b.header || b.cells.empty()) break;
        out += ".TP\n" + roff_line(roff_inline(b.cells[0])) + "\n";
        for (size_t c = 1; c < b.cells.size(); ++c) out += roff_line(roff_inline(b.cells[c])) + "\n";
        break;
    }
  return out;
}

// **bold**, *emphasis* and [text](link) as plain text; `code` keeps its backquotes.
std::string text_inline(const std::string& s) {
  std::string out;
  bool code = false;
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '`') {
      code = !code;
      out += s[i];
    } else if (code) {
      out += s[i];
    } else if (s.compare(i, 2, "**") == 0) {
      ++i;
    } else if (s[i] == '*' && ((i + 1 < s.size() && std::isalnum(static_cast<unsigned char>(s[i + 1]))) ||
                               (i > 0 && std::isalnum(static_cast<unsigned char>(s[i - 1]))))) {
      // *emphasis*: its words
    } else if (auto link = link_at(s, i)) {
      out += link->first;
      i = link->second;
    } else {
      out += s[i];
    }
  }
  return out;
}

// `text` filled to 80 columns: the first line after `first`, the others indented by `indent`.
std::string filled(const std::string& text, const std::string& first, size_t indent) {
  std::string out = first, word;
  size_t column = first.size();
  bool line_empty = true;
  std::istringstream words(text);
  while (words >> word) {
    if (!line_empty && column + 1 + word.size() > 80) {
      out += "\n" + std::string(indent, ' ');
      column = indent;
      line_empty = true;
    }
    out += (line_empty ? "" : " ") + word;
    column += (line_empty ? 0 : 1) + word.size();
    line_empty = false;
  }
  return out + "\n";
}

std::string to_text(const std::string& markdown) {
  std::string out;
  bool first = true;
  for (const Block& b : parse_blocks(markdown)) {
    if (!first && !(b.kind == Block::Item || b.kind == Block::Row)) out += "\n";
    first = false;
    switch (b.kind) {
      case Block::Heading: out += "  " + text_inline(b.text) + "\n"; break;
      case Block::Paragraph: out += filled(text_inline(b.text), "    ", 4); break;
      case Block::Item: out += filled(text_inline(b.text), "    - ", 6); break;
      case Block::Code: {
        std::istringstream in(b.text);
        for (std::string line; std::getline(in, line);) out += (line.empty() ? "" : "        " + line) + "\n";
        break;
      }
      case Block::Row:
        if (b.header || b.cells.empty()) break;
        out += "    " + text_inline(b.cells[0]) + "\n";
        for (size_t c = 1; c < b.cells.size(); ++c) out += filled(text_inline(b.cells[c]), "        ", 8);
        break;
    }
  }
  return out;
}

std::string as_text(const Page& page) {
  std::string out = "NAME\n" + filled(page.title + " - " + page.summary, "    ", 4);
  for (const auto& s : page.sections) out += "\n" + s.title + "\n" + to_text(s.markdown);
  return out;
}

std::string as_roff(const Page& page) {
  std::string out = ".TH " + upper(page.name) + " " + std::to_string(page.man_section) + " \"\" \"dbform " +
                    DBFORM_VERSION + "\" \"dbform Manual\"\n.SH NAME\n" + roff_inline(page.name) + " \\- " +
                    roff_inline(page.summary) + "\n";
  for (const auto& s : page.sections) out += ".SH " + s.title + "\n" + to_roff(s.markdown);
  if (!page.see_also.empty()) {
    std::vector<std::string> refs;
    for (const auto& r : page.see_also) refs.push_back("\\fB" + roff_inline(r.substr(0, r.find('('))) + "\\fR" + r.substr(r.find('(')));
    out += ".SH SEE ALSO\n" + join(refs, ",\n") + "\n.PP\nThe README of dbform and its docs/ (the manifest, pipelines, the state, "
           "safety), installed in /usr/share/doc/dbform.\n";
  }
  return out;
}

std::string title_case(const std::string& upper_title) {
  std::string t = upper_title;
  for (size_t i = 1; i < t.size(); ++i) t[i] = static_cast<char>(std::tolower(static_cast<unsigned char>(t[i])));
  return t;
}

// Every page below `cmd`, depth first, in the order of the help.
void collect_pages(const CLI::App& cmd, std::vector<Page>& out) {
  for (const CLI::App* sub : visible_commands(cmd)) {
    out.push_back(command_page(*sub));
    collect_pages(*sub, out);
  }
}

}  // namespace

void set_manual(CLI::App& cmd, Manual manual) {
  manuals()[&cmd] = std::move(manual);
  cmd.formatter_fn([](const CLI::App* app, std::string, CLI::AppFormatMode) { return help_text(*app); });
}

CLI::App* add_command(CLI::App& parent, const std::string& name, const std::string& summary, Manual manual) {
  CLI::App* cmd = parent.add_subcommand(name, summary);
  set_manual(*cmd, std::move(manual));
  return cmd;
}

std::string help_text(const CLI::App& cmd) { return as_text(command_page(cmd)); }

std::string manifest_help_text() { return as_text(manifest_page()); }

void write_man_pages(const CLI::App& app, const std::filesystem::path& dir) {
  std::vector<Page> pages = {command_page(app)};
  collect_pages(app, pages);
  pages.push_back(manifest_page());
  for (const Page& page : pages) {
    const auto folder = dir / ("man" + std::to_string(page.man_section));
    std::filesystem::create_directories(folder);
    const auto path = folder / (page.name + "." + std::to_string(page.man_section));
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out << as_roff(page);
    if (!out.flush()) throw Error("cannot write " + path.string());
  }
}

std::string commands_reference(const CLI::App& app) {
  std::string out =
      "# dbform commands\n\n"
      "Every command and flag, generated from dbform's command-line definition and the text beside each\n"
      "command's code by `dbform __reference`: the same pages as `dbform help COMMAND` and the man pages\n"
      "(`man dbform-plan`). The global flags `--log-level LEVEL`, `--no-color` and `--version` work with\n"
      "every command. The manifest format is [manifest.md](manifest.md) (`dbform help manifest`).\n";
  const Page root = command_page(app);
  for (const auto& s : root.sections)
    if (s.title == "ENVIRONMENT" || s.title == "EXIT STATUS") out += "\n## " + title_case(s.title) + "\n\n" + s.markdown;
  std::vector<Page> pages;
  collect_pages(app, pages);
  for (const Page& page : pages) {
    out += "\n## " + page.title + "\n\n" + page.summary + "\n";
    for (const auto& s : page.sections)
      if (s.title != "ENVIRONMENT") out += "\n### " + title_case(s.title) + "\n\n" + s.markdown;
  }
  return out;
}

}  // namespace dbform::cli
