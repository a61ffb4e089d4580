#include "plan/model.h"

namespace dbform {

const char* action_name(Action a) {
  switch (a) {
    case Action::Create: return "create";
    case Action::NoOp: return "no-op";
    case Action::Wait: return "wait";
    case Action::Adopt: return "adopt";
    case Action::Conflict: return "conflict";
    case Action::Orphan: return "orphan";
  }
  return "?";
}

}  // namespace dbform
