#include "cli/render_events.h"

#include "plan/plan_file.h"
#include "util/clock.h"
#include "util/duration.h"
#include "util/text.h"
#include "util/json_limits.h"

namespace dbform::cli {

using json = nlohmann::ordered_json;  // "type" first, as people read a log

namespace {

std::optional<std::string> raw_event_line(const Event& e, const Terminal& term) {
  const std::string elapsed = " [" + format_duration(e.elapsed) + " since its first call]";
  switch (e.kind) {
    case EventKind::PreflightPassed: return "Preflight: " + e.message;
    case EventKind::CreateSent: return e.address + ": creating..." + (e.message.empty() ? "" : " (" + e.message + ")");
    case EventKind::Created:
      return e.address + ": created (id " + e.resource_id + (e.status.empty() ? "" : ", status " + e.status) + ")";
    case EventKind::Adopted:
      return e.address + ": adopted existing " + e.resource_id + (e.message.empty() ? "" : "; " + e.message);
    case EventKind::UpdateSent: return e.address + ": " + e.message + "...";
    case EventKind::Updated: return e.address + ": " + e.message + " accepted";
    case EventKind::DeleteSent: return e.address + ": deleting " + e.resource_id + "...";
    case EventKind::Deleted: return paint(term, "31", e.address + ": deleted") + elapsed + ", and forgotten by the state";
    case EventKind::Imported:
      return e.address + ": imported " + e.resource_id + (e.status.empty() ? "" : " (status " + e.status + ")") +
             ", recorded as it is";
    case EventKind::Forgotten:
      return e.address + ": forgotten by the state; " + (e.resource_id.empty() ? "it" : e.resource_id) +
             " stays in the API, untouched";
    case EventKind::StatusChanged:
      if (e.status == "READY" && e.message.empty()) return std::nullopt;
      return e.address + ": " + e.status + (e.message.empty() ? "" : ", " + e.message) + elapsed;
    case EventKind::Ready:
      // Done: READY (active), or PAUSED as declared, or a peering recorded before its peer accepts it.
      if (e.status == "PAUSED")
        return paint(term, "32", e.address + ": paused") + elapsed + (e.message.empty() ? "" : " " + e.message);
      if (!e.status.empty() && e.status != "READY" && e.status != "active")
        return paint(term, "32", e.address + ": recorded") + " with status " + e.status +
               " (its acceptance by the peer account is not waited for)";
      return paint(term, "32", e.address + ": ready") + elapsed + (e.message.empty() ? "" : " " + e.message);
    case EventKind::Failed: return paint(term, "31", e.address + ": failed: ") + e.message;
    case EventKind::Left: return paint(term, "33", e.address + ": left for the next apply: ") + e.message;
    case EventKind::StopRequested:
      return paint(term, "33", "Interrupt received: " + e.message + "; press Ctrl-C again to stop at once") +
             " (what is not sent is left for the next apply; nothing is created twice)";
    case EventKind::Interrupted: return "Interrupted: " + e.message;
  }
  return std::nullopt;
}

}  // namespace

std::optional<std::string> event_line(const Event& e, const Terminal& term) {
  auto line = raw_event_line(e, term);
  if (line) *line = valid_utf8(*line);  // statuses and messages came from the API
  return line;
}

void LineEventRenderer::on_event(const Event& e) {
  if (auto line = event_line(e, term_)) out_ << *line << std::endl;
}

void JsonLinesEventRenderer::emit(json j) {
  json line = {{"type", j["type"]}, {"time", format_utc(std::chrono::system_clock::now())}};
  for (auto& [key, value] : j.items())
    if (key != "type") line[key] = std::move(value);
  // Any bytes the API sent come out as valid JSON: invalid UTF-8 becomes U+FFFD.
  out_ << dump_json(line) << std::endl;
}

void JsonLinesEventRenderer::plan(const Plan& plan, const std::string& source) {
  emit({{"type", "plan"},
        {"format_version", kPlanFormatVersion},
        {"source", source},
        {"state", {{"lineage", plan.state_lineage.empty() ? json() : json(plan.state_lineage)},
                   {"serial", plan.state_serial}}},
        {"summary", plan_summary_json(plan.summary)},
        {"actions", plan_actions_json(plan)},
        {"policies", policies_json(plan.policy)}});
}

void JsonLinesEventRenderer::on_event(const Event& e) {
  json j = {{"type", event_kind_name(e.kind)}};
  // A preflight event's address is the project it checked.
  if (!e.address.empty()) j[e.kind == EventKind::PreflightPassed ? "project_id" : "address"] = e.address;
  if (!e.resource_id.empty()) j["id"] = e.resource_id;
  if (!e.status.empty()) j["status"] = e.status;
  if (e.kind == EventKind::StatusChanged || e.kind == EventKind::Ready || e.kind == EventKind::Failed)
    j["elapsed_ms"] = e.elapsed.count();
  if (!e.message.empty()) {
    const char* field = e.kind == EventKind::Ready ? "endpoint" : e.kind == EventKind::Failed ? "error" : "message";
    j[field] = e.message;
  }
  emit(std::move(j));
}

void JsonLinesEventRenderer::summary(const ApplyResult& r, int exit_code) {
  emit({{"type", "summary"},
        {"created", r.created},
        {"adopted", r.adopted},
        {"updated", r.updated},
        {"deleted", r.deleted},
        {"imported", r.imported},
        {"forgotten", r.forgotten},
        {"ready", r.ready},
        {"failed", r.failures.size()},
        {"failures", r.failures},
        {"interrupted", r.interrupted},
        {"pending", r.pending},
        {"left", r.left},
        {"exit_code", exit_code}});
}

void JsonLinesEventRenderer::error(const std::string& message) { emit({{"type", "error"}, {"message", message}}); }

}  // namespace dbform::cli
