#include "cli/render_policy.h"

#include "util/json_limits.h"
#include "util/text.h"

namespace dbform::cli {

namespace {

std::string plural(size_t n, const char* one, const char* many) {
  return std::to_string(n) + " " + (n == 1 ? one : many);
}

std::string found_text(const nlohmann::json& v) {
  if (v.is_null()) return "not set";
  if (v.is_string()) return v.get<std::string>();
  return dump_json(v);
}

// Markdown list text: nothing in it may open HTML or break the line.
std::string md_text(const std::string& text) {
  std::string out;
  for (char c : text) {
    if (c == '<') out += "&lt;";
    else if (c == '>') out += "&gt;";
    else if (c == '\n' || c == '\r') out += ' ';
    else if (c == '`') out += '\'';
    else out += c;
  }
  return out;
}

}  // namespace

std::string policy_summary(const PolicyCheck& c) {
  std::vector<std::string> parts;
  if (c.mandatory()) parts.push_back(plural(c.mandatory(), "mandatory violation", "mandatory violations"));
  if (c.advisory()) parts.push_back(plural(c.advisory(), "advisory violation", "advisory violations"));
  if (parts.empty()) parts.push_back("no violation");
  if (!c.waivers.empty()) parts.push_back(plural(c.waivers.size(), "waiver in force", "waivers in force"));
  return plural(c.rules.size(), "rule", "rules") + " from " + join(c.files, ", ") + ": " + join(parts, ", ");
}

std::string violation_text(const PolicyViolation& v) {
  if (v.field == "action") return "the plan would " + found_text(v.found) + " it";
  return v.field + " is " + found_text(v.found) + ", requires " + v.required;
}

std::string render_policies_text(const PolicyCheck& c, const Terminal& term) {
  if (c.files.empty()) return "";
  std::string out = "Policies: " + policy_summary(c) + ".\n";
  for (const auto& v : c.violations) {
    out += "  " + paint(term, v.mandatory ? "31" : "33", v.mandatory ? "[mandatory]" : "[advisory]") + " " + v.rule +
           "  " + v.address + "\n      " + violation_text(v) + "\n";
    if (!v.message.empty()) out += "      " + v.message + "\n";
  }
  for (const auto& w : c.waivers)
    out += "  " + paint(term, "2", "[waived]") + " " + w.rule + "  " + w.address + " until " + w.expires + ": " + w.reason + "\n";
  return out;
}

std::vector<std::string> policy_violation_items(const PolicyCheck& c) {
  std::vector<std::string> items;
  for (const auto& v : c.violations)
    items.push_back(std::string("- ") + (v.mandatory ? "**mandatory**" : "advisory") + " `" + md_text(v.rule) + "` on `" +
                    md_text(v.address) + "`: " + md_text(violation_text(v)) + (v.message.empty() ? "" : ". " + md_text(v.message)) + "\n");
  return items;
}

std::vector<std::string> policy_waiver_items(const PolicyCheck& c) {
  std::vector<std::string> items;
  for (const auto& w : c.waivers)
    items.push_back("- `" + md_text(w.rule) + "` waived for `" + md_text(w.address) + "` until " + md_text(w.expires) + ": " +
                    md_text(w.reason) + "\n");
  return items;
}

}  // namespace dbform::cli
