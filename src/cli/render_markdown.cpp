#include "cli/render_markdown.h"

#include <algorithm>
#include <functional>
#include <map>
#include <sstream>

#include "cli/render_plan.h"
#include "cli/render_policy.h"
#include "util/escape.h"
#include "util/json_limits.h"
#include "util/text.h"

namespace dbform::cli {

namespace {

using nlohmann::json;

// Room kept for the note on what was left out and the footer; each is far shorter.
constexpr size_t kReserve = 2500;
constexpr size_t kMaxNoteEntries = 8;

std::string count(int n, const char* one, const char* many) {
  return std::to_string(n) + " " + (n == 1 ? one : many);
}

// dbform's own sentences in a table cell or list item (reasons, warnings; what they quote of a
// manifest is validated or in backticks): on one line (util/escape.h), nothing in them that may end
// the cell, open HTML or make a link.
std::string md(const std::string& text) {
  std::string out;
  for (char c : shown_text(text)) {
    if (c == '|') out += "\\|";
    else if (c == '<') out += "&lt;";
    else if (c == '>') out += "&gt;";
    else if (c == '[' || c == ']') out += std::string("\\") + c;
    else out += c;
  }
  return out;
}

// A name, an id, a value: outside text, always a code span (util/escape.h), fit for a table cell.
std::string code(const std::string& text) { return markdown_cell(text); }

// Settings as people write them in a manifest: `1000`, `[time-series, ai]`, not JSON.
std::string markdown_value(const json& v) {
  if (v.is_null()) return "(unset)";
  if (v.is_string()) return v.get<std::string>();
  if (!v.is_array()) return dump_json(v);
  std::vector<std::string> items;
  for (const auto& item : v) items.push_back(markdown_value(item));
  return "[" + join(items, ", ") + "]";
}

std::string settings_text(const json& settings) {
  std::vector<std::string> parts;
  if (settings.is_object())
    for (auto it = settings.begin(); it != settings.end(); ++it) parts.push_back(it.key() + " " + markdown_value(it.value()));
  return md(join(parts, ", "));
}

std::string changes_text(const PlannedAction& a) {
  std::vector<std::string> parts;
  for (const auto& c : a.changes)
    parts.push_back(c.field + " " + code(markdown_value(c.before)) + " → " + code(markdown_value(c.after)) +
                    (c.drift ? " (changed outside dbform)" : ""));
  return join(parts, "; ");
}

std::string calls_text(const PlannedAction& a) {
  std::vector<std::string> parts;
  for (const auto& c : a.calls) parts.push_back(code(call_text(c)));
  return parts.empty() ? "" : "calls " + join(parts, ", ");
}

std::string heading(const PlanSummary& s) {
  std::string h = "### dbform plan: ";
  if (s.conflict) return h + count(s.conflict, "conflict", "conflicts") + ", nothing can be applied";
  if (s.policy) return h + count(s.policy, "mandatory policy violation", "mandatory policy violations") + ", nothing can be applied";
  std::vector<std::string> parts;  // as the text plan's summary line counts them (an import's update is both)
  if (s.import) parts.push_back(std::to_string(s.import) + " to import");
  if (s.create) parts.push_back(std::to_string(s.create) + " to create");
  if (s.update) parts.push_back(std::to_string(s.update) + " to update");
  if (s.del) parts.push_back("**" + std::to_string(s.del) + " to delete**");
  if (s.replace) parts.push_back("**" + std::to_string(s.replace) + " to replace**");
  if (s.wait) parts.push_back(std::to_string(s.wait) + " to wait for");
  if (s.adopt) parts.push_back(std::to_string(s.adopt) + " to adopt");
  if (s.forget) parts.push_back(std::to_string(s.forget) + " to forget");
  if (parts.empty()) parts.push_back("no changes");
  if (s.orphan) parts.push_back(count(s.orphan, "orphan", "orphans") + " kept");
  return h + join(parts, ", ");
}

std::string counts_table(const PlanSummary& s) {
  std::ostringstream t;
  t << "| to import | to create | to update | to delete | to replace | to wait for | to adopt | to forget | unchanged "
       "| conflicts | orphans |\n"
    << "|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n"
    << "| " << s.import << " | " << s.create << " | " << s.update << " | " << s.del << " | " << s.replace << " | "
    << s.wait << " | " << s.adopt << " | " << s.forget << " | " << s.noop << " | " << s.conflict << " | " << s.orphan
    << " |\n";
  return t.str();
}

const char* symbol(Action a) {
  switch (a) {
    case Action::Create: return "+";
    case Action::Wait:
    case Action::Update: return "~";
    case Action::Adopt: return "?";
    case Action::Conflict: return "!";
    case Action::Replace: return "-/+";
    case Action::Delete:
    case Action::Orphan: return "-";
    case Action::NoOp: return " ";
    case Action::Forget: return ".";
  }
  return " ";
}

std::string table_row(const PlannedAction& a) {
  std::string action, details;
  const std::string id = a.resource_id.empty() ? "" : "id " + code(a.resource_id) + ", ";
  switch (a.action) {
    case Action::Create:
      action = "create";
      details = settings_text(a.after) + (a.calls.empty() ? "" : "; then " + calls_text(a));
      if (!a.reason.empty()) details += ". " + md(a.reason);
      break;
    case Action::Update:
      action = "update in place";
      details = id + (a.changes.empty() ? "" : changes_text(a) + "; ") + calls_text(a) +
                (a.reason.empty() ? "" : ". " + md(a.reason));  // e.g. a paused service started for a new read replica set
      break;
    case Action::Wait:
      action = a.status == "PAUSING" ? "wait for PAUSED" : "wait for READY";
      details = id + "status " + md(a.status.empty() ? "unknown" : a.status) + (a.reason.empty() ? "" : ". " + md(a.reason));
      if (!a.calls.empty()) details += "; then " + calls_text(a);
      break;
    case Action::Adopt: action = "adopt, else create"; details = "an earlier create's outcome is unknown"; break;
    case Action::Conflict: action = "**conflict**"; details = id + changes_text(a); break;
    case Action::Delete: action = "**delete**"; details = id + md(a.reason); break;
    case Action::Replace: action = "**replace**"; details = id + changes_text(a) + ". " + md(a.reason); break;
    case Action::Orphan: action = "orphan, kept"; details = id + "no longer declared"; break;
    case Action::NoOp:
      action = is_unrecorded_removal(a) ? "nothing to forget" : "no change";
      details = id + md(a.reason);
      break;
    case Action::Forget: action = "forget"; details = id + md(a.reason); break;
  }
  if (!a.import_id.empty() && a.action != Action::Conflict)
    action = "**import**" + (a.action == Action::Update ? ", then update in place" : std::string());
  return "| `" + std::string(symbol(a.action)) + "` | " + code(a.name) + " | " + kind_name(a.kind) + " | " + action +
         " | " + details + " |\n";
}

// Builds the comment within the limit. A section that does not fit entirely is cut at an item
// boundary, says so where it is cut, and is named in the note at the end.
class Comment {
 public:
  explicit Comment(size_t limit) : limit_(limit), budget_(limit > kReserve ? limit - kReserve : 0) {}

  void add(const std::string& text) { out_ += text; }  // short, essential parts

  void optional(const std::string& text, const std::string& what) {
    if (fits(text.size())) out_ += text;
    else left_out_.push_back(what);
  }

  void section(const std::string& opening, const std::vector<std::string>& items, const std::string& closing,
               const std::string& what, const std::function<std::string(size_t)>& more_line) {
    if (items.empty()) return;
    if (!fits(opening.size() + items[0].size() + closing.size() + more_line(items.size()).size())) {
      left_out_.push_back("all " + what + " (" + std::to_string(items.size()) + ")");
      return;
    }
    out_ += opening;
    size_t i = 0;
    for (; i < items.size(); ++i) {
      const size_t rest = i + 1 < items.size() ? more_line(items.size() - i - 1).size() : 0;
      if (!fits(items[i].size() + closing.size() + rest)) break;
      out_ += items[i];
    }
    if (i < items.size()) {
      out_ += more_line(items.size() - i);
      left_out_.push_back(std::to_string(items.size() - i) + " of " + std::to_string(items.size()) + " " + what);
    }
    out_ += closing;
  }

  std::string finish(const std::string& footer) {
    if (!left_out_.empty()) {
      std::vector<std::string> shown(left_out_.begin(), left_out_.begin() + std::min(left_out_.size(), kMaxNoteEntries));
      if (left_out_.size() > kMaxNoteEntries) shown.push_back("and " + std::to_string(left_out_.size() - kMaxNoteEntries) + " more parts");
      out_ += "\n> [!NOTE]\n> This comment is limited to " + std::to_string(limit_) + " characters, so it leaves out: " +
              join(shown, "; ") + ". Run `dbform plan` for the whole plan, or `dbform plan --format json`.\n";
    }
    out_ += footer;
    if (out_.size() > limit_) out_.resize(limit_);  // cannot happen with the reserve; a hard stop all the same
    return std::move(out_);
  }

 private:
  bool fits(size_t more) const { return out_.size() + more <= budget_; }

  size_t limit_;
  size_t budget_;  // the limit less the room kept for the note and the footer
  std::string out_;
  std::vector<std::string> left_out_;
};

std::vector<std::string> list_items(const Plan& plan, Action which) {
  std::vector<std::string> items;
  for (const auto& a : plan.actions) {
    if (a.action != which) continue;
    std::string id = a.resource_id.empty() ? "" : " (id " + code(a.resource_id) + ")";
    std::vector<std::string> parts;
    if (const std::string changes = which == Action::Conflict ? changes_text(a) : ""; !changes.empty())
      parts.push_back(changes);
    if (!a.reason.empty()) parts.push_back(md(a.reason));
    items.push_back("- " + markdown_code(a.address) + id + (parts.empty() ? "" : ": " + join(parts, ". ")) + "\n");
  }
  return items;
}

void project_tables(Comment& c, const Plan& plan) {
  std::vector<std::string> order;
  std::map<std::string, std::vector<const PlannedAction*>> by_project;
  for (const auto& a : plan.actions) {
    if (!by_project.count(a.project_id)) order.push_back(a.project_id);
    by_project[a.project_id].push_back(&a);
  }
  for (const auto& project : order) {
    std::vector<std::string> rows;  // every action, and what is unchanged with a reason (a declaration ignored)
    int unchanged = 0, actions = 0;  // a `removed:` entry not recorded is neither
    for (const auto* a : by_project[project]) {
      unchanged += a->action == Action::NoOp && !is_unrecorded_removal(*a);
      actions += a->action != Action::NoOp;
      if (a->action != Action::NoOp || !a->reason.empty()) rows.push_back(table_row(*a));
    }
    std::string title = "\n#### Project " + code(project) + ": ";
    title += actions == 0 ? "no changes" : count(actions, "action", "actions");
    if (unchanged) title += ", " + std::to_string(unchanged) + " unchanged";
    if (rows.empty()) {
      c.optional(title + "\n", "the heading of project " + code(project));
      continue;
    }
    c.section(title + "\n\n| | resource | kind | action | details |\n|:-:|---|---|---|---|\n", rows, "",
              "rows of the table of project " + code(project),
              [](size_t n) { return "| | *" + std::to_string(n) + " more not shown* | | | |\n"; });
  }
}

void details(Comment& c, const Plan& plan) {
  const std::string text = render_plan_text(plan, Terminal{});
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) lines.push_back(line + "\n");
  const std::string fence = markdown_fence(text);
  c.section("\n<details><summary>Full plan</summary>\n\n" + fence + "text\n", lines, fence + "\n\n</details>\n",
            "lines of the full plan", [](size_t n) { return "... " + std::to_string(n) + " more lines\n"; });
}

std::string footer(const PlanDocument& doc) {
  const Plan& p = doc.plan;
  std::string state = p.state_lineage.empty() ? "no state yet"
                                              : "state serial " + std::to_string(p.state_serial) + ", lineage " +
                                                    code(p.state_lineage.substr(0, 8));
  return "\n<sub>dbform plan format " + std::to_string(kPlanFormatVersion) + " · " +
         count(static_cast<int>(doc.manifest_files.size()), "manifest file", "manifest files") + ", sha256 " +
         code(p.manifest_digest.substr(0, 12)) + " · " + state + (doc.created_at.empty() ? "" : " · " + md(doc.created_at)) +
         "</sub>\n";
}

}  // namespace

std::string render_plan_markdown(const PlanDocument& doc, size_t limit) {
  const Plan& plan = doc.plan;
  const PlanSummary& s = plan.summary;
  Comment c(limit);
  c.add(std::string(kMarkdownMarker) + "\n" + heading(s) + "\n\n" + counts_table(s));
  if (plan.freshness) c.add("\n> [!NOTE]\n> " + md(freshness_text(*plan.freshness)) + "\n");
  for (const auto& unread : plan.catalogs_unread) c.add("\n> [!NOTE]\n> " + md(catalogs_unread_text(unread)) + "\n");
  if (!plan.targets.empty())
    c.add("\n> [!NOTE]\n> A partial plan (`--target`): only " + md(join(plan.targets, ", ")) +
          " and what they need. Other changes may be pending.\n");
  if (s.del + s.replace && !s.conflict)
    c.add("\n> [!CAUTION]\n> Applying this plan **deletes " + count(s.del + s.replace, "resource", "resources") +
          (s.replace ? " (" + count(s.replace, "replacement", "replacements") + ")" : "") + "** and " +
          (s.del + s.replace == 1 ? "the data in it" : "the data in them") +
          " (listed below). Only `--prune` plans deletes; protected resources are never among them.\n");
  if (s.conflict)
    c.add("\n> [!CAUTION]\n> " + count(s.conflict, "resource", "resources") +
          " cannot be applied as declared (see why below), so nothing is applied until every conflict is "
          "resolved.\n");
  else if (!s.has_changes())
    c.add("\nThe declared resources match the state; applying this plan does nothing.\n");
  std::vector<std::string> warnings;
  for (const auto& d : doc.diagnostics) warnings.push_back("- " + md(d.str()) + "\n");
  c.section("\n#### Warnings\n\n", warnings, "", "warnings", [](size_t n) { return "- *" + std::to_string(n) + " more*\n"; });
  c.section("\n#### Deletes\n\n", list_items(plan, Action::Delete), "", "deletes",
            [](size_t n) { return "- *" + std::to_string(n) + " more deletes*\n"; });
  c.section("\n#### Replacements: deleted, then created again\n\n", list_items(plan, Action::Replace), "",
            "replacements", [](size_t n) { return "- *" + std::to_string(n) + " more replacements*\n"; });
  c.section("\n#### Conflicts\n\n", list_items(plan, Action::Conflict), "", "conflicts",
            [](size_t n) { return "- *" + std::to_string(n) + " more conflicts*\n"; });
  if (!plan.policy.files.empty()) {
    c.add("\n#### Policies\n\n" + md(policy_summary(plan.policy)) + ".\n" +
          (s.policy ? "\n> [!CAUTION]\n> A mandatory rule is broken, so nothing is applied until each violation is "
                      "resolved (or, where the rule is waivable, waived).\n"
                    : ""));
    c.section("\n", policy_violation_items(plan.policy), "", "policy violations",
              [](size_t n) { return "- *" + std::to_string(n) + " more violations*\n"; });
    c.section("\nWaivers in force:\n\n", policy_waiver_items(plan.policy), "", "waivers",
              [](size_t n) { return "- *" + std::to_string(n) + " more waivers*\n"; });
  }
  c.section("\n#### Orphans: recorded, no longer declared, kept\n\n", list_items(plan, Action::Orphan), "", "orphans",
            [](size_t n) { return "- *" + std::to_string(n) + " more orphans*\n"; });
  project_tables(c, plan);
  details(c, plan);
  return c.finish(footer(doc));
}

}  // namespace dbform::cli
