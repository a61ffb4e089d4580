#include "engine/connectable.h"

#include <algorithm>

#include "manifest/model.h"
#include "plan/kinds.h"
#include "util/duration.h"

namespace dbform {

namespace {

constexpr Duration kAttemptTimeout{5000};

}  // namespace

bool wants_connection(const ConnectableOptions& options, const PlannedAction& a, const ResourceRecord& rec,
                      bool password_set) {
  if (!options.check || !options.projects.count(a.project_id)) return false;
  // A connectable kind with a password of its own: a read replica set's endpoint takes its
  // service's password, which is checked at the service.
  const KindForm& form = kind_form(a.kind);
  if (!form.connectable || form.password != PasswordOwner::Own || type_of(a.kind).verdict(rec.status) != StatusVerdict::Ready) return false;
  if (a.action == Action::Create || a.action == Action::Adopt || a.action == Action::Wait || password_set) return true;
  return std::any_of(a.calls.begin(), a.calls.end(),
                     [](const PlannedCall& c) { return call_type(c.call).reconnects; });
}

std::optional<std::string> connection_problem(const ResourceRecord& rec) {
  if (rec.endpoint_host.empty() || !rec.endpoint_port)
    return std::string("READY, but it cannot be checked for connections: the API showed no endpoint for it");
  if (rec.initial_password.empty())
    return "READY, but it cannot be checked for connections: its password is not known (the API returns it only on "
           "create). `dbform rotate-password " + rec.address + "` sets and records one";
  return std::nullopt;
}

Outcome check_connection(const ConnectionCheck& check, const ConnectTarget& target) {
  Outcome out;
  out.to = AnswerTo::Connect;
  const ConnectAttempt attempt = check.attempt(target, kAttemptTimeout);
  if (attempt.verdict == ConnectAttempt::Verdict::Accepted) return out;
  out.error = attempt.reason.empty() ? "the connection failed" : attempt.reason;
  out.transient = attempt.verdict == ConnectAttempt::Verdict::NotYet;
  return out;
}

Duration connection_retry_pause(Duration poll_interval) { return std::min(poll_interval, Duration(250)); }

std::string login_refused_message(const std::string& reason) {
  return "READY, but it refused the login as tsdbadmin with the recorded password: " + reason +
         ". If the password was changed outside dbform, `dbform rotate-password ADDRESS` sets and records a new one";
}

std::string not_connectable_message(Duration wait_timeout, const std::string& last_reason) {
  return "READY, but not accepting connections within " + format_duration(wait_timeout) + " (--wait-timeout); the "
         "last attempt: " + last_reason;
}

}  // namespace dbform
