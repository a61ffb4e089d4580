#include "engine/jobs.h"

#include "util/log.h"
#include "util/duration.h"
#include "util/text.h"

namespace dbform {

namespace {

// Each attempt after the first follows a lookup that proved nothing of that name exists, so trying
// again is safe; several tries let one run converge through a flaky API (20% of calls failing).
constexpr int kMaxCreateAttempts = 6;
// Lookups after an unknown outcome: at 0, then w/16, w/8, w/4, w/2 and w of the settle window w.
constexpr int kSettleSteps = 5;

// Whether `found`, of the action's name, can be what its create made: not the resource a
// replacement deletes, and for a peering (known by its peer VPC's id) one of the declared peer.
bool may_be_ours(const ResourceType& type, const PlannedAction& a, const Shown& found) {
  if (a.action == Action::Replace && !a.resource_id.empty() && found.id == a.resource_id) return false;
  if (a.kind != ResourceKind::Peering || !a.after.is_object()) return true;
  const nlohmann::json seen = type.observe(found, nlohmann::json::object(), {});
  for (const char* field : {"peer_account_id", "peer_region_code"})
    if (a.after.contains(field) && seen.contains(field) && seen[field] != a.after[field]) return false;
  return true;
}

// Lists the project's resources of the action's kind; fills `out` when exactly one has its name.
// Returns the ids of every match.
std::vector<std::string> find_by_name(ApiClient& api, const PlannedAction& a, const Scope& scope,
                                      const std::string& key, Outcome& out) {
  const ResourceType& type = type_of(a.kind);
  std::vector<std::string> ids;
  for (auto& found : type.list(api, key, scope))
    // A namesake being deleted is not the one we just created: adopting it would record a
    // resource that is about to disappear, so it neither matches nor blocks a create.
    if (found.name == a.name && type.is_live(found) && may_be_ours(type, a, found)) {
      ids.push_back(found.id);
      out.shown = std::move(found);
    }
  if (ids.size() != 1) out.shown.reset();
  return ids;
}

// Looks the resource up by name across the settle window, stopping at the first lookup that finds
// anything: a list that lags behind writes shows a just-created resource only seconds later.
// nullopt when a stop ended the wait.
std::optional<std::vector<std::string>> settle_lookup(const CreateContext& ctx, const PlannedAction& a,
                                                      const Scope& scope, const std::string& key, Outcome& out) {
  const auto start = ctx.clock.now();
  for (int step = 0;; ++step) {
    std::vector<std::string> ids = find_by_name(ctx.api, a, scope, key, out);
    if (!ids.empty() || step == kSettleSteps || ctx.settle_window.count() == 0) return ids;
    const Duration next = ctx.settle_window / (1 << (kSettleSteps - 1 - step));
    log::info(a.address + ": not listed yet; looking again " + format_duration(next) + " after the unknown outcome");
    if (!ctx.clock.sleep_until_unless(start + next, ctx.stop)) return std::nullopt;
  }
}

bool stopped(const CreateContext& ctx) { return ctx.stop && ctx.stop->load(); }

std::string several_named(const PlannedAction& a, const std::vector<std::string>& ids) {
  return std::to_string(ids.size()) + " " + kind_plural(a.kind) + " named `" + a.name + "` exist (" + join(ids, ", ") +
         "); dbform cannot tell which one it created. Delete the extra ones";
}

}  // namespace

Outcome create_or_adopt(const CreateContext& ctx, const PlannedAction& a, const Scope& scope, const std::string& key,
                        bool look_first, const std::string& source_id) {
  Outcome out;
  // look_first: an earlier create (a stopped run's, or this run's after an unknown outcome) may exist.
  for (int attempt = 1; attempt <= kMaxCreateAttempts; ++attempt) {
    if (look_first) {
      auto found = settle_lookup(ctx, a, scope, key, out);
      if (!found) {  // the outcome stays unknown: the next apply looks again before creating
        out.stopped = true;
        return out;
      }
      const std::vector<std::string>& ids = *found;
      if (ids.size() == 1) {
        out.adopted = true;
        return out;
      }
      if (ids.size() > 1) {
        out.error = several_named(a, ids) + ", then run apply again";
        return out;
      }
    }
    if (stopped(ctx)) {
      out.stopped = true;
      out.not_sent = attempt == 1;  // later attempts follow a create whose outcome is still unknown
      return out;
    }
    try {
      out.shown = type_of(a.kind).create(ctx.api, key, scope, a, source_id);
      return out;
    } catch (const ApiError& e) {
      if (!e.outcome_unknown()) {
        // A refusal proves that this create made nothing, not that an earlier one did not: one
        // made but not listed yet (a list lagging past the settle window) keeps its intent.
        out.error = e.what();
        out.nothing_created = !look_first;
        if (look_first)
          out.error += "; an earlier create's outcome is unknown, so the next apply looks it up by name first";
        return out;
      }
      log::warn(a.address + ": create outcome unknown (" + e.what() + "); looking it up by name");
      look_first = true;
    }
  }
  out.error = "the create's outcome stayed unknown after " + std::to_string(kMaxCreateAttempts) +
              " attempts; the next apply looks it up by name again";
  return out;
}

Outcome look_up_unknown_create(const CreateContext& ctx, const PlannedAction& a, const Scope& scope,
                               const std::string& key) {
  Outcome out;
  auto found = settle_lookup(ctx, a, scope, key, out);
  if (!found) out.stopped = true;
  else if (found->size() > 1) out.error = several_named(a, *found);
  else out.adopted = found->size() == 1;
  return out;
}

namespace {

// A read that failed: worth trying again when the network or the API may recover.
void note_poll_failure(Outcome& out, const std::exception& e) {
  out.error = describe_exception(e);
  if (auto api_error = dynamic_cast<const ApiError*>(&e)) {
    out.http_status = api_error->status();
    out.transient = api_error->status() == 0 || api_error->status() == 429 || api_error->status() >= 500;
  } else {
    // A 2xx that is not what was asked for: the API misbehaved; keep trying. No memory: waiting
    // would not bring it back, and the watch would run to its timeout saying nothing of it.
    out.transient = !dynamic_cast<const std::bad_alloc*>(&e);
  }
}

}  // namespace

Outcome poll_resource(ApiClient& api, const PlannedAction& a, const Scope& scope, const std::string& id,
                      const std::string& key) {
  Outcome out;
  out.to = AnswerTo::Poll;
  try {
    out.shown = type_of(a.kind).get(api, key, scope, id);
    out.gone = !out.shown;
  } catch (const std::exception& e) {
    note_poll_failure(out, e);
  }
  return out;
}

Outcome poll_list(ApiClient& api, const ResourceType& type, const Scope& scope, const std::string& key) {
  Outcome out;
  out.to = AnswerTo::PollList;
  try {
    out.listed = type.list(api, key, scope);
  } catch (const std::exception& e) {
    note_poll_failure(out, e);
  }
  return out;
}

Outcome send_update(ApiClient& api, const PlannedAction& a, const Scope& scope, const std::string& id,
                    const std::string& key, const std::string& call, const nlohmann::json& body) {
  Outcome out;
  try {
    out.shown = type_of(a.kind).update(api, key, scope, id, call, body);
  } catch (const std::exception& e) {
    note_poll_failure(out, e);
  }
  return out;
}

Outcome delete_resource(ApiClient& api, const PlannedAction& a, const Scope& scope, const std::string& id,
                        const std::string& key) {
  Outcome out;
  const ResourceType& type = type_of(a.kind);
  try {
    // Just before the call, the API must still show this id under the recorded name: a record
    // edited by hand, or an id reused, must not delete another database.
    const std::optional<Shown> shown = type.get(api, key, scope, id);
    if (!shown) {
      out.gone = true;  // gone already (404): nothing to delete
      return out;
    }
    if (shown->name != a.name) {
      out.error = "refused: the API shows " + std::string(kind_noun(a.kind)) + " id " + id + " named `" +
                  valid_utf8(shown->name) + "`, not `" + a.name +
                  "` as recorded, so the record does not describe it (a hand edit?). Nothing was deleted; check "
                  "`dbform state show " + a.address + "`";
      return out;
    }
    out.gone = !type.remove(api, key, scope, id);
  } catch (const std::exception& e) {
    note_poll_failure(out, e);
  }
  return out;
}

Outcome set_password(ApiClient& api, const PlannedAction& a, const std::string& service_id, const std::string& key,
                     const std::string& password) {
  Outcome out;
  if (password.empty()) {  // never: the engine sends only a recorded pending password
    out.error = "no new password was recorded";
    return out;
  }
  try {
    api.update_password(key, a.project_id, service_id, password);
  } catch (const std::exception& e) {
    out.error = describe_exception(e);
  }
  return out;
}

}  // namespace dbform
