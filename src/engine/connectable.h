#pragma once
// The apply engine's wait for services to accept connections (`apply --wait-connectable`,
// `wait_connectable: true`; docs/pipelines.md): which services it applies to, the check a worker
// makes, and what its failures say. The engine (apply.cpp) schedules the checks like status polls.
#include <optional>
#include <set>
#include <string>

#include "engine/jobs.h"
#include "plan/model.h"
#include "plan/run.h"
#include "sql/connection_check.h"
#include "state/model.h"

namespace dbform {

// What the progress shows while it waits (StatusChanged's message).
inline const std::string kCheckingConnections = "checking it is accepting connections";

// Whether `a`'s service, READY now, is waited for: a service of one of the projects, new (created,
// adopted, or waited for), resumed, renamed, or given a new password by this run.
bool wants_connection(const ConnectableOptions& options, const PlannedAction& a, const ResourceRecord& rec,
                      bool password_set);

// Why the service cannot be checked (no endpoint, no known password), or nullopt.
std::optional<std::string> connection_problem(const ResourceRecord& rec);

// One attempt, as a worker's outcome (AnswerTo::Connect): no error when accepted; `transient` when
// worth trying again.
Outcome check_connection(const ConnectionCheck& check, const ConnectTarget& target);

// How long after a refused attempt the next one goes: short, connections are cheap.
Duration connection_retry_pause(Duration poll_interval);

std::string login_refused_message(const std::string& reason);
std::string not_connectable_message(Duration wait_timeout, const std::string& last_reason);

}  // namespace dbform
