#include "cli/render_refresh.h"

#include "cli/render_plan.h"

#include <algorithm>

#include "plan/kinds.h"
#include "plan/plan_file.h"
#include "util/duration.h"
#include "util/json_limits.h"
#include "util/text.h"

namespace dbform::cli {

namespace {

using nlohmann::ordered_json;

// Colours as the plan's: changed yellow, gone red, hints dim.
const char* kChangedColour = "33";
const char* kGoneColour = "31";
const char* kHintColour = "2";

// A drift comment lists at most this many resources (GitHub refuses comments over 65,536
// characters); the rest are counted, and the JSON document has them all.
constexpr size_t kMaxCommentRows = 200;

std::string json_or_unset(const nlohmann::json& v) { return v.is_null() ? "(unset)" : dump_json(v); }
std::string or_none(const std::string& s) { return s.empty() ? "(none)" : s; }

// Each line of what changed: "field = before -> after".
std::vector<std::pair<std::string, std::string>> change_lines(const OutsideChange& c) {
  std::vector<std::pair<std::string, std::string>> out;
  for (const auto& f : c.fields) out.emplace_back(f.field, json_or_unset(f.before) + " -> " + json_or_unset(f.after));
  if (c.status_before != c.status_after)
    out.emplace_back("status", or_none(c.status_before) + " -> " + or_none(c.status_after));
  if (c.endpoint_before != c.endpoint_after)
    out.emplace_back("endpoint", or_none(c.endpoint_before) + " -> " + or_none(c.endpoint_after));
  if (c.pooler_before != c.pooler_after)
    out.emplace_back("pooler endpoint", or_none(c.pooler_before) + " -> " + or_none(c.pooler_after));
  if (c.settled) out.emplace_back("pending call", "settled by what the API shows");
  return out;
}

std::string projects_text(const RefreshReport& r) {
  return std::to_string(r.projects.size()) + (r.projects.size() == 1 ? " project" : " projects") +
         (r.projects.empty() ? "" : " (" + join(r.projects, ", ") + ")");
}

ordered_json before_after(const std::string& before, const std::string& after) {
  if (before == after) return nullptr;
  return {{"before", before.empty() ? ordered_json() : ordered_json(before)},
          {"after", after.empty() ? ordered_json() : ordered_json(after)}};
}

}  // namespace

std::string refresh_summary_line(const RefreshReport& r) {
  const int gone = r.gone(), changed = static_cast<int>(r.changes.size()) - gone;
  const long long unchanged = static_cast<long long>(r.records) - changed - gone;
  return "Refresh: " + std::to_string(changed) + " changed outside dbform, " + std::to_string(gone) +
         " deleted outside dbform, " + std::to_string(std::max(0LL, unchanged)) + " unchanged.";
}

std::string render_refresh_text(const RefreshReport& r, const Terminal& term) {
  std::string out;
  if (!r.targets.empty())
    out += paint(term, kChangedColour, "A partial refresh (--target): only " + join(r.targets, ", ") +
                                    " and what is in them were read.") + "\n\n";
  out += "dbform read " + std::to_string(r.records) + " recorded resource(s) in " + projects_text(r) +
         " and compared them with the state (serial " + std::to_string(r.serial) + ", " +
         (r.last ? "last refreshed " + format_ago(r.last_age_seconds) + " by " + scrub(r.last->by)
                 : std::string("never refreshed before")) +
         ").\n\n";
  if (!r.has_changes()) {
    out += "No changes outside dbform: what exists matches the state.\n";
  } else {
    out += "Changed outside dbform since the state was written:\n\n";
    for (const auto& c : r.changes) {
      const std::string what = std::string(kind_name(c.kind)) + " " + c.address + " (id " + c.resource_id + ")";
      if (c.gone) {
        out += paint(term, kGoneColour, "  - " + what + ": deleted outside dbform") + "\n";
        continue;
      }
      out += paint(term, kChangedColour, "  ~ " + what) + "\n";
      const auto lines = change_lines(c);
      size_t width = 0;
      for (const auto& [field, text] : lines) width = std::max(width, field.size());
      for (const auto& [field, text] : lines) out += "      " + field + std::string(width - field.size(), ' ') + " = " + text + "\n";
    }
    out += "\n";
  }
  for (const auto& unread : r.catalogs_unread) out += paint(term, kHintColour, catalogs_unread_text(unread)) + "\n";
  out += refresh_summary_line(r) + "\n";
  if (r.has_changes())
    out += paint(term, kHintColour, "`dbform plan` shows what applying the manifests would change back; `dbform apply "
                             "--refresh-only` records this and calls nothing else.") + "\n";
  return out;
}

ordered_json refresh_document_json(const RefreshReport& r, const std::string& created_at) {
  ordered_json changes = ordered_json::array();
  for (const auto& c : r.changes) {
    ordered_json fields = ordered_json::array();
    for (const auto& f : c.fields) fields.push_back({{"field", f.field}, {"before", f.before}, {"after", f.after}});
    changes.push_back({{"address", c.address},
                       {"kind", kind_name(c.kind)},
                       {"resource_id", c.resource_id},
                       {"deleted_outside", c.gone},
                       {"fields", std::move(fields)},
                       {"status", before_after(c.status_before, c.status_after)},
                       {"endpoint", before_after(c.endpoint_before, c.endpoint_after)},
                       {"pooler_endpoint", before_after(c.pooler_before, c.pooler_after)},
                       {"settled", c.settled}});
  }
  ordered_json last = nullptr;
  if (r.last) last = {{"at", r.last->at}, {"by", r.last->by}, {"age_seconds", r.last_age_seconds}};
  const int gone = r.gone();
  return {{"format", kRefreshFormat},
          {"format_version", kRefreshFormatVersion},
          {"created_at", created_at},
          {"state", {{"lineage", r.lineage.empty() ? ordered_json() : ordered_json(r.lineage)}, {"serial", r.serial}, {"last_refreshed", std::move(last)}}},
          {"projects", r.projects},
          {"targets", r.targets},
          {"records", r.records},
          {"summary",
           {{"changed", static_cast<int>(r.changes.size()) - gone}, {"deleted_outside", gone},
            {"has_changes", r.has_changes()}}},
          {"changes", std::move(changes)},
          {"catalogs_unread", catalogs_unread_json(r.catalogs_unread)}};
}

std::string render_refresh_markdown(const RefreshReport& r, const std::string& created_at) {
  auto cell = [](std::string text) {
    std::string out;
    for (char ch : text) out += ch == '|' ? std::string("\\|") : ch == '<' ? "&lt;" : ch == '>' ? "&gt;" : ch == '\n' ? " " : std::string(1, ch);
    return out;
  };
  const int gone = r.gone(), changed = static_cast<int>(r.changes.size()) - gone;
  std::string out = std::string(kRefreshMarker) + "\n### dbform drift check: ";
  out += r.has_changes() ? std::to_string(changed) + " changed, " + std::to_string(gone) + " deleted outside dbform"
                         : "no changes outside dbform";
  out += "\n\n" + cell(refresh_summary_line(r)) + " Read " + std::to_string(r.records) + " recorded resource(s) in " +
         cell(projects_text(r)) + ".\n";
  if (!r.targets.empty()) out += "\n> [!NOTE]\n> A partial refresh (`--target`): only " + cell(join(r.targets, ", ")) + ".\n";
  for (const auto& unread : r.catalogs_unread) out += "\n> [!NOTE]\n> " + cell(catalogs_unread_text(unread)) + "\n";
  if (r.has_changes()) {
    out += "\n| resource | kind | change |\n|---|---|---|\n";
    size_t shown = 0;
    for (const auto& c : r.changes) {
      if (++shown > kMaxCommentRows) break;
      std::vector<std::string> parts;
      if (c.gone) parts.push_back("**deleted outside dbform**");
      for (const auto& [field, text] : change_lines(c)) parts.push_back(field + " " + text);
      out += "| `" + cell(c.address) + "` | " + kind_name(c.kind) + " | " + cell(join(parts, "; ")) + " |\n";
    }
    if (r.changes.size() > kMaxCommentRows)
      out += "\n" + std::to_string(r.changes.size() - kMaxCommentRows) +
             " more not shown: `dbform plan --refresh-only --format json` lists them all.\n";
  }
  out += "\n<sub>state serial " + std::to_string(r.serial) + " · " +
         (r.last ? "last refreshed " + cell(r.last->at) + " by " + cell(r.last->by) : std::string("never refreshed")) +
         " · " + cell(created_at) + "</sub>\n";
  return out;
}

}  // namespace dbform::cli
