#include "cli/render_plan.h"

#include <algorithm>

#include "cli/render_policy.h"
#include "plan/kinds.h"
#include "util/duration.h"
#include "util/json_limits.h"
#include "util/text.h"

namespace dbform::cli {

namespace {

const char* kGreen = "32";
const char* kYellow = "33";
const char* kCyan = "36";
const char* kRed = "31";
const char* kDim = "2";

std::string value_text(const nlohmann::json& v) { return v.is_null() ? "(unset)" : dump_json(v); }

void render_settings(std::string& out, const nlohmann::json& settings, const std::string& sign) {
  size_t width = 0;
  for (auto it = settings.begin(); it != settings.end(); ++it) width = std::max(width, it.key().size());
  for (auto it = settings.begin(); it != settings.end(); ++it)
    out += "      " + sign + " " + it.key() + std::string(width - it.key().size(), ' ') + " = " + dump_json(it.value()) + "\n";
}

void render_changes(std::string& out, const PlannedAction& a, const Terminal& t, const std::string& sign) {
  size_t width = 0;
  for (const auto& c : a.changes) width = std::max(width, c.field.size());
  for (const auto& c : a.changes)
    out += "      " + sign + " " + c.field + std::string(width - c.field.size(), ' ') + " = " + value_text(c.before) +
           " -> " + value_text(c.after) + (c.drift ? paint(t, kYellow, "  # changed outside dbform") : "") + "\n";
}

void render_calls(std::string& out, const PlannedAction& a, const char* when) {
  if (a.calls.empty()) return;
  out += std::string("    ") + when + ":\n";
  for (const auto& c : a.calls)
    out += "      " + call_text(c) +
           (!is_async_call(c.call) ? "" : c.call == "stop" ? ", then wait for PAUSED" : ", then wait for READY") + "\n";
}

// "  ~ service \"x\" {", its changes, "}", then the calls that make them.
void render_change_block(std::string& out, const PlannedAction& a, const Terminal& t, const char* colour,
                         const std::string& sign, const std::string& what, const char* when) {
  out += paint(t, colour, std::string(3 - std::min<size_t>(3, sign.size()), ' ') + sign + " " + what) + " {\n";
  render_changes(out, a, t, paint(t, colour, sign));
  out += "    }\n";
  render_calls(out, a, when);
}

void render_action(std::string& out, const PlannedAction& a, const Terminal& t) {
  const std::string what = std::string(kind_name(a.kind)) + " \"" + a.name + "\"";
  const std::string id = a.resource_id.empty() ? "" : " (id " + a.resource_id + ")";
  if (!a.import_id.empty() && a.action != Action::Conflict) {  // then what it needs, as for a record
    out += "  # " + a.address + " will be imported (id " + a.import_id + "): recorded as it is now\n";
    out += paint(t, kCyan, "  <= " + what) + "\n";
    if (a.action == Action::Update) render_change_block(out, a, t, kYellow, "~", what, "then, calls one at a time");
    if (a.action == Action::Wait) out += "      not READY yet (status " + a.status + "): waited for\n";
    out += "\n";
    return;
  }
  switch (a.action) {
    case Action::Create:
      out += "  # " + a.address + " will be created\n";
      out += paint(t, kGreen, "  + " + what) + " {\n";
      {
        nlohmann::json shown = a.after;  // protection is the state's, not a setting of the API's
        if (a.deletion_protection && shown.is_object()) shown["deletion_protection"] = true;
        render_settings(out, shown, paint(t, kGreen, "+"));
      }
      out += "    }\n";
      render_calls(out, a, "then, once it is READY");
      if (!a.reason.empty()) out += "      " + a.reason + "\n";
      break;
    case Action::Update:
      out += "  # " + a.address + id + " will be updated in place\n";
      render_change_block(out, a, t, kYellow, "~", what, "calls, one at a time");
      if (!a.reason.empty()) out += "      " + a.reason + "\n";
      break;
    case Action::Adopt:
      out += "  # " + a.address + ": an earlier create's outcome is unknown\n";
      out += paint(t, kCyan, "  ? " + what) + ": looked up by name and adopted if found, created otherwise\n";
      render_calls(out, a, "then, once it is READY");
      break;
    case Action::Wait:
      out += "  # " + a.address + id +
             (a.status == "READY"     ? " is checked again (see below)\n"
              : a.status == "PAUSING" ? " is being paused (status PAUSING)\n"
                                      : " was created earlier and is not READY yet (status " +
                                            (a.status.empty() ? "unknown" : a.status) + ")\n");
      out += paint(t, kYellow, "  ~ " + what) +
             (a.status == "PAUSING" ? ": wait for PAUSED, no new create\n" : ": wait for READY, no new create\n");
      render_changes(out, a, t, paint(t, kYellow, "~"));
      render_calls(out, a, "then");
      if (!a.reason.empty()) out += "      " + a.reason + "\n";
      break;
    case Action::Conflict:
      out += "  # " + a.address + id + " conflicts with the state\n";
      out += paint(t, kRed, "  ! " + what) + ": cannot be applied\n";
      render_changes(out, a, t, paint(t, kRed, "!"));
      out += "      To resolve: " + a.reason + "\n";
      break;
    case Action::Replace:
      out += "  # " + a.address + id + " will be replaced: deleted, then created\n";
      render_change_block(out, a, t, kRed, "-/+", what, "then, once it is READY");
      out += "      " + a.reason + "\n";
      break;
    case Action::Delete:
      // What goes with it (KindForm::delete_note): a service's data; nothing else holds data.
      out += "  # " + a.address + id + " will be DELETED" + kind_form(a.kind).delete_note + "\n";
      out += paint(t, kRed, "  - " + what) + ": " + a.reason + "\n";
      break;
    case Action::Orphan:
      out += "  # " + a.address + id + " is recorded but no longer declared\n";
      out += paint(t, kDim, "  - " + what) + ": " + a.reason + "\n";
      break;
    case Action::Forget:
      out += "  # " + a.address + id + " will be forgotten: no longer managed, left in the API\n";
      out += paint(t, kDim, "  . " + what) + ": " + a.reason + "\n";
      break;
    case Action::NoOp:
      if (a.reason.empty()) return;
      if (is_unrecorded_removal(a)) out += "  # " + a.address + ": " + a.reason + "\n";
      else out += "  # " + a.address + id + " is unchanged: " + a.reason + "\n";
      break;
  }
  out += "\n";
}

}  // namespace

std::string call_text(const PlannedCall& call) {
  if (call.body.is_null()) return call.call;
  if (call.body.contains("vpc_id") && call.body["vpc_id"].is_null())
    return call.call + " {\"vpc_id\": (the id of vpc \"" + call.vpc + "\", known once it is created)}";
  return call.call + " " + dump_json(call.body);
}

std::string plan_summary_line(const PlanSummary& s) {
  std::string line = "Plan: " + (s.import ? std::to_string(s.import) + " to import, " : "") + std::to_string(s.create) + " to create, " + std::to_string(s.update) +
                     " to update, " + std::to_string(s.wait) + " to wait for, " + std::to_string(s.noop) +
                     " unchanged";
  if (s.del) line += ", " + std::to_string(s.del) + " to delete";
  if (s.replace) line += ", " + std::to_string(s.replace) + " to replace";
  if (s.adopt) line += ", " + std::to_string(s.adopt) + " to adopt";
  if (s.forget) line += ", " + std::to_string(s.forget) + " to forget";
  if (s.nothing_to_forget)
    line += ", " + std::to_string(s.nothing_to_forget) +
            (s.nothing_to_forget == 1 ? " `removed:` entry" : " `removed:` entries") + " not recorded (nothing to forget)";
  if (s.conflict) line += ", " + std::to_string(s.conflict) + (s.conflict == 1 ? " conflict" : " conflicts");
  if (s.orphan)
    line += ", " + std::to_string(s.orphan) + (s.orphan == 1 ? " orphan" : " orphans") +
            (s.prunable ? " (--prune would delete " + std::to_string(s.prunable) + ")" : "");
  return line + ".";
}

std::string freshness_text(const StateFreshness& freshness) {
  const std::string from = "From the state alone (--no-refresh): ";
  if (!freshness.refreshed)
    return from + "the state has never been refreshed by a run that recorded it (`dbform apply`, `dbform apply "
                  "--refresh-only`), so changes made outside dbform are not shown.";
  const RefreshStamp& stamp = *freshness.refreshed;
  return from + "the state was last refreshed " + format_ago(freshness.age_seconds) + " (" + stamp.at + ") by " +
         scrub(stamp.by) + "; changes made outside dbform since then are not shown.";
}

std::string catalogs_unread_text(const CatalogsUnread& unread) {
  return unread.service + ": its roles, schemas, extensions and grants are planned from their records (" +
         (unread.last_read.empty() ? std::string("never recorded from its catalogs by a refresh")
                                   : "last recorded from its catalogs " + unread.last_read) +
         "), not read: " + scrub(unread.why) + ". Changes made inside its database since then are not shown.";
}

std::string render_plan_text(const Plan& plan, const Terminal& term) {
  std::string out;
  if (plan.freshness) out += paint(term, kDim, freshness_text(*plan.freshness)) + "\n\n";
  for (const auto& unread : plan.catalogs_unread) out += paint(term, kDim, catalogs_unread_text(unread)) + "\n";
  if (!plan.catalogs_unread.empty()) out += "\n";
  if (!plan.targets.empty())
    out += paint(term, kYellow, "A partial plan (--target): only " + join(plan.targets, ", ") +
                                    " and what they need. Other changes may be pending.") + "\n\n";
  if (plan.summary.has_changes() || plan.summary.conflict || plan.summary.orphan) {
    out += "dbform compared the manifests with the state:\n\n";
    for (const auto& a : plan.actions) render_action(out, a, term);
  } else {
    out += "No changes. The declared resources match the state.\n\n";
    for (const auto& a : plan.actions)  // what is declared but ignored, e.g. a changed `fork`
      if (a.action == Action::NoOp) render_action(out, a, term);
  }
  out += plan_summary_line(plan.summary);
  const auto awaiting = std::count_if(plan.actions.begin(), plan.actions.end(), [](const PlannedAction& a) {
    const char* awaiting = type_of(a.kind).awaiting_status;  // a peering the peer account has not accepted yet
    return *awaiting && a.action == Action::NoOp && a.status == awaiting && a.reason.empty();
  });
  if (awaiting)  // the peer account's to accept: not a change, and not news every plan
    out += paint(term, kDim, " " + std::to_string(awaiting) +
                                 (awaiting == 1 ? " VPC peering awaits its peer account's acceptance and carries"
                                                : " VPC peerings await their peer accounts' acceptance and carry") +
                                 " no traffic until then.");
  out += "\n";
  if (plan.summary.conflict)
    out += paint(term, kRed, "Error: " + std::to_string(plan.summary.conflict) +
                                 " conflict(s): nothing can be applied until they are resolved.") + "\n";
  if (!plan.policy.files.empty()) out += "\n" + render_policies_text(plan.policy, term);
  if (plan.summary.policy)
    out += paint(term, kRed, "Error: " + std::to_string(plan.summary.policy) +
                                 " mandatory policy violation(s): nothing can be applied until each is resolved (or, "
                                 "where the rule is waivable, waived with policy_waivers).") + "\n";
  return out;
}

}  // namespace dbform::cli
