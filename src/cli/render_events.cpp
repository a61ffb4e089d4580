#include "cli/render_events.h"

#include "util/duration.h"

namespace dbform::cli {

void LineEventRenderer::on_event(const Event& e) {
  std::string line;
  const std::string elapsed = " [" + format_duration(e.elapsed) + "]";
  switch (e.kind) {
    case EventKind::PreflightPassed: line = "Preflight: " + e.message; break;
    case EventKind::CreateSent: line = e.address + ": creating..."; break;
    case EventKind::Created:
      line = e.address + ": created (id " + e.resource_id + (e.status.empty() ? "" : ", status " + e.status) + ")";
      break;
    case EventKind::Adopted:
      line = e.address + ": adopted existing " + e.resource_id + (e.message.empty() ? "" : "; " + e.message);
      break;
    case EventKind::StatusChanged:
      if (e.status == "READY") return;  // the Ready event that follows says it, with the endpoint
      line = e.address + ": " + e.status + elapsed;
      break;
    case EventKind::Ready:
      line = paint(term_, "32", e.address + ": ready") + elapsed + (e.message.empty() ? "" : " " + e.message);
      break;
    case EventKind::Failed: line = paint(term_, "31", e.address + ": failed: ") + e.message; break;
    case EventKind::Interrupted: line = "Interrupted: " + e.message; break;
  }
  out_ << line << std::endl;
}

}  // namespace dbform::cli
