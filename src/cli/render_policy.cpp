#include "cli/render_policy.h"

#include "util/escape.h"
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
  // Rule names and messages come from rule files, waivers and the values found from manifests: a
  // pull request writes them all, so each is shown on one line with its controls escaped.
  for (const auto& v : c.violations) {
    out += "  " + paint(term, v.mandatory ? "31" : "33", v.mandatory ? "[mandatory]" : "[advisory]") + " " +
           shown_text(v.rule) + "  " + shown_text(v.address) + "\n      " + shown_text(violation_text(v)) + "\n";
    if (!v.message.empty()) out += "      " + shown_text(v.message) + "\n";
  }
  for (const auto& w : c.waivers)
    out += "  " + paint(term, "2", "[waived]") + " " + shown_text(w.rule) + "  " + shown_text(w.address) + " until " +
           shown_text(w.expires) + ": " + shown_text(w.reason) + "\n";
  return out;
}

std::vector<std::string> policy_violation_items(const PolicyCheck& c) {
  std::vector<std::string> items;
  for (const auto& v : c.violations)
    items.push_back(std::string("- ") + (v.mandatory ? "**mandatory**" : "advisory") + " " + markdown_code(v.rule) + " on " +
                    markdown_code(v.address) + ": " + markdown_code(violation_text(v)) +
                    (v.message.empty() ? "" : ". " + markdown_code(v.message)) + "\n");
  return items;
}

std::vector<std::string> policy_waiver_items(const PolicyCheck& c) {
  std::vector<std::string> items;
  for (const auto& w : c.waivers)
    items.push_back("- " + markdown_code(w.rule) + " waived for " + markdown_code(w.address) + " until " +
                    shown_text(w.expires) + ": " + markdown_code(w.reason) + "\n");
  return items;
}

}  // namespace dbform::cli
