#include "plan/events.h"

namespace dbform {

const char* event_kind_name(EventKind k) {
  switch (k) {
    case EventKind::PreflightPassed: return "preflight_passed";
    case EventKind::CreateSent: return "create_sent";
    case EventKind::Created: return "created";
    case EventKind::Adopted: return "adopted";
    case EventKind::UpdateSent: return "update_sent";
    case EventKind::Updated: return "updated";
    case EventKind::DeleteSent: return "delete_sent";
    case EventKind::Deleted: return "deleted";
    case EventKind::Imported: return "imported";
    case EventKind::Forgotten: return "forgotten";
    case EventKind::StatusChanged: return "status_changed";
    case EventKind::Ready: return "ready";
    case EventKind::Failed: return "failed";
    case EventKind::Left: return "left";
    case EventKind::StopRequested: return "stop_requested";
    case EventKind::Interrupted: return "interrupted";
  }
  return "?";
}

}  // namespace dbform
