#include "cli/render_schema.h"

#include "util/escape.h"
#include "util/text.h"

namespace dbform::cli {

namespace {

// A pull request writes the migrations' file names and, through them, every table, column and
// default the diff names: each is shown through util/escape.h, on one line, in every format.
std::string clean(const std::string& text) { return shown_text(text); }
std::string json_text(const std::string& text) { return scrub(valid_utf8(text)); }

std::vector<std::string> shown_names(const std::vector<std::string>& names) {
  std::vector<std::string> out;
  for (const auto& n : names) out.push_back(shown_text(n));
  return out;
}

// A file a stop signal cancelled: rolled back, applied by the next run.
std::string stopped_line(const ForkMigrations& f) {
  std::string s = "stopped by a signal in " + clean(f.stopped_in) + " (cancelled on the server, its transaction rolled back)";
  if (!f.applied.empty()) s += "; applied before it: " + join(shown_names(f.applied), ", ");
  return s;
}

std::string failure_line(const ForkMigrations& f) {
  std::string s = "migrations failed: " + clean(f.failure->str());
  if (!f.applied.empty()) s += "; applied before it: " + join(shown_names(f.applied), ", ");
  return s;
}

std::string against(const ForkDiff& f) {
  return clean(f.fork_name) + " against " + (f.source_name.empty() ? std::string("its source") : clean(f.source_name));
}

std::string against_markdown(const ForkDiff& f) {
  return markdown_code(f.fork_name) + " against " +
         (f.source_name.empty() ? std::string("its source") : markdown_code(f.source_name));
}

// The last line of the text report: a count that never reads as a clean result when a fork could not
// be compared (its changes are unknown, not none).
std::string diff_summary(const DiffOutcome& d, size_t changes) {
  size_t unread = 0;
  for (const auto& f : d.forks) unread += f.error.empty() ? 0 : 1;
  const std::string counts = std::to_string(changes) + " change(s), " + std::to_string(d.destructive()) + " destructive";
  if (unread == 0) return counts + ".";
  if (unread == d.forks.size())
    return "Nothing was compared: " + std::to_string(unread) + " fork(s) could not be read, so their changes are unknown.";
  return counts + " in " + std::to_string(d.forks.size() - unread) + " of " + std::to_string(d.forks.size()) +
         " fork(s); " + std::to_string(unread) + " could not be compared, so their changes are unknown.";
}

}  // namespace

std::string render_migrations_text(const MigrateOutcome& m) {
  std::string out = "Migrations:\n";
  for (const auto& f : m.forks) {
    const size_t total = f.before + f.applied.size();
    const std::string fork = clean(f.fork_name);
    if (f.failure) out += "  " + fork + ": " + failure_line(f) + "\n";
    else if (!f.stopped_in.empty()) out += "  " + fork + ": " + stopped_line(f) + "\n";
    else if (f.applied.empty()) out += "  " + fork + ": up to date (" + std::to_string(total) + " applied)\n";
    else
      out += "  " + fork + ": applied " + join(shown_names(f.applied), ", ") + " (" + std::to_string(total) + " in all)\n";
  }
  if (m.interrupted) out += "  stopped by a signal: run the same command again to finish\n";
  return out;
}

nlohmann::json migrations_json(const MigrateOutcome& m) {
  nlohmann::json forks = nlohmann::json::array();
  for (const auto& f : m.forks) {
    nlohmann::json j = {{"address", f.address}, {"fork", json_text(f.fork_name)}, {"applied", f.applied}, {"applied_before", f.before}};
    if (!f.stopped_in.empty()) j["stopped_in"] = json_text(f.stopped_in);
    if (f.failure) {
      const MigrationFailure& x = *f.failure;
      j["failure"] = {{"file", json_text(x.file)},          {"line", x.statement.line},
                      {"column", x.statement.column},   {"message", json_text(x.server.message)},
                      {"detail", json_text(x.server.detail)}, {"hint", json_text(x.server.hint)},
                      {"sqlstate", x.server.sqlstate}};
      if (x.error) j["failure"]["error_position"] = {{"line", x.error->line}, {"column", x.error->column}};
    }
    forks.push_back(std::move(j));
  }
  return {{"forks", forks}, {"failed", m.failed()}, {"interrupted", m.interrupted}};
}

std::string render_migrations_markdown(const MigrateOutcome& m) {
  std::string out = "\n#### Migrations\n\n";
  for (const auto& f : m.forks) {
    if (f.failure) {
      const std::string text = failure_line(f);
      const std::string fence = markdown_fence(text);
      out += "- " + markdown_code(f.fork_name) + ": **migrations failed** (the fork is kept for inspection)\n\n  " +
             fence + "\n  " + text + "\n  " + fence + "\n";
    } else if (!f.stopped_in.empty()) {
      std::vector<std::string> applied;
      for (const auto& name : f.applied) applied.push_back(markdown_code(name));
      out += "- " + markdown_code(f.fork_name) + ": stopped by a signal in " + markdown_code(f.stopped_in) +
             " (cancelled on the server, its transaction rolled back)" +
             (applied.empty() ? "" : "; applied before it: " + join(applied, ", ")) + "\n";
    } else if (f.applied.empty()) {
      out += "- " + markdown_code(f.fork_name) + ": up to date (" + std::to_string(f.before) + " applied)\n";
    } else {
      out += "- " + markdown_code(f.fork_name) + ": applied ";
      std::vector<std::string> names;
      for (const auto& name : f.applied) names.push_back(markdown_code(name));
      out += join(names, ", ") + " (" + std::to_string(f.before + f.applied.size()) + " in all)\n";
    }
  }
  return out;
}

std::string render_diff_text(const DiffOutcome& d, const std::string& heading) {
  std::string out = heading + ": schema against its source\n";
  size_t changes = 0;
  for (const auto& f : d.forks) {
    if (!f.error.empty()) {
      out += against(f) + ": could not be compared: " + clean(f.error) + "\n";
      continue;
    }
    out += against(f) + (f.changes.empty() ? ": no schema change\n" : ":\n");
    for (const auto& c : f.changes)
      out += "  " + clean(c.line()) + (c.destructive ? "  (destructive: " + clean(c.why) + ")" : "") + "\n";
    changes += f.changes.size();
  }
  out += diff_summary(d, changes) + "\n";
  return out;
}

nlohmann::json diff_json(const DiffOutcome& d, const std::string& name) {
  nlohmann::json forks = nlohmann::json::array();
  for (const auto& f : d.forks) {
    nlohmann::json changes = nlohmann::json::array();
    for (const auto& c : f.changes)
      changes.push_back({{"op", std::string(1, c.op)}, {"kind", kind_word(c.kind)}, {"name", json_text(c.name)},
                         {"before", json_text(c.before)}, {"after", json_text(c.after)}, {"destructive", c.destructive},
                         {"why", json_text(c.why)}, {"line", json_text(c.line())}});
    nlohmann::json j = {{"project_id", f.project_id}, {"address", f.address}, {"fork", json_text(f.fork_name)},
                        {"source_address", f.source_address}, {"changes", changes}};
    if (!f.error.empty()) j["error"] = json_text(f.error);
    forks.push_back(std::move(j));
  }
  return {{"name", name}, {"differs", d.differs()}, {"destructive", d.destructive()}, {"failed", d.failed()},
          {"forks", forks}};
}

std::string render_diff_markdown(const DiffOutcome& d) {
  std::string out = "\n#### Schema changes\n";
  for (const auto& f : d.forks) {
    out += "\n" + against_markdown(f);
    if (!f.error.empty()) {
      out += ": could not be compared: " + markdown_code(f.error) + "\n";
      continue;
    }
    if (f.changes.empty()) {
      out += ": no schema change\n";
      continue;
    }
    std::string block, destructive;
    for (const auto& c : f.changes) {
      block += clean(c.line()) + (c.destructive ? "  # DESTRUCTIVE" : "") + "\n";
      if (c.destructive) destructive += "- **destructive**: " + markdown_code(c.name) + ": " + markdown_code(c.why) + "\n";
    }
    const std::string fence = markdown_fence(block);
    out += "\n\n" + (destructive.empty() ? "" : destructive + "\n") + fence + "diff\n" + block + fence + "\n";
  }
  const size_t n = d.destructive();
  if (n > 0) out += "\n> **" + std::to_string(n) + " destructive change(s)**: data is lost when they reach production.\n";
  if (d.failed()) out += "\n> **Not every fork was compared**: the changes of those that could not be are unknown.\n";
  return out;
}

}  // namespace dbform::cli
