// One service's objects step: read, plan, one transaction, read again.
#include <utility>

#include "sql/objects.h"

namespace dbform {

namespace {

// The names the step reads: the declared ones and those to delete.
DbObjects names_asked(const DbObjects& desired, const DbObjects& to_delete) {
  DbObjects out = desired;
  auto add = [](auto& into, const auto& from) { into.insert(into.end(), from.begin(), from.end()); };
  add(out.roles, to_delete.roles);
  add(out.schemas, to_delete.schemas);
  add(out.extensions, to_delete.extensions);
  add(out.grants, to_delete.grants);
  return out;
}

// Whether the catalogs show the request made: every declared object as declared, nothing of the
// deletes left.
bool shows_made(const DbObjects& observed, const DbObjects& desired, const DbObjects& to_delete) {
  auto has = [](const auto& list, const auto& item) {
    for (const auto& x : list)
      if (x == item) return true;
    return false;
  };
  for (const auto& r : desired.roles) if (!has(observed.roles, r)) return false;
  for (const auto& s : desired.schemas) if (!has(observed.schemas, s)) return false;
  for (const auto& x : desired.extensions) if (!has(observed.extensions, x)) return false;
  for (const auto& g : desired.grants) if (!has(observed.grants, g)) return false;
  for (const auto& r : to_delete.roles) if (find_named(observed.roles, r.name)) return false;
  for (const auto& s : to_delete.schemas) if (find_named(observed.schemas, s.name)) return false;
  for (const auto& x : to_delete.extensions) if (find_named(observed.extensions, x.name)) return false;
  for (const auto& g : to_delete.grants)
    for (const auto& o : observed.grants)
      if (same_target(o, g) && !o.privileges.empty()) return false;
  return true;
}

}  // namespace

ObjectsRun run_objects(const SqlConnector& connector, const ConnectTarget& target, const ObjectsRequest& request,
                       const SqlSessionOptions& options, const StatementLimit& limit) {
  ObjectsRun run;
  std::unique_ptr<SqlSession> session = connector.connect(target, options);
  ObjectsContext ctx;
  ctx.admin = target.user;
  ctx.server_version_num = server_version(*session);
  run.server_version_num = ctx.server_version_num;
  DbObjects desired = request.desired;
  for (auto& g : desired.grants) g.privileges = normalize_privileges(g.on, g.privileges, ctx.server_version_num);
  for (const auto& [role, password] : request.passwords)
    ctx.verifiers[role] = session->password_verifier(role, password);
  const DbObjects wanted = names_asked(desired, request.to_delete);
  const DbObjects before = read_objects(*session, wanted);
  for (const auto& recorded : request.recorded_passwords) {
    const std::string& role = recorded.first;
    if (!find_named(before.roles, role) && !ctx.verifiers.count(role)) ctx.verifiers[role] = session->password_verifier(role, recorded.second);
  }
  const std::vector<DbStatement> statements = statements_for(desired, before, request.to_delete, ctx);
  run.statements = statements.size();
  run.outcome = apply_objects(*session, statements, limit);
  if (run.outcome.result == ObjectsOutcome::Result::Failed) {
    run.observed = before;
    return run;
  }
  if (run.outcome.result == ObjectsOutcome::Result::Unknown) {
    // The connection that sent COMMIT is gone: a new one tells whether the server made it.
    session = connector.connect(target, options);
    run.observed = read_objects(*session, wanted);
    if (shows_made(run.observed, desired, request.to_delete)) {
      run.outcome.result = ObjectsOutcome::Result::Applied;
      run.found_committed = true;
    } else {
      run.outcome.result = ObjectsOutcome::Result::Failed;
      run.outcome.message = "the answer to COMMIT was lost (" + run.outcome.message +
                            ") and the catalogs show the changes were not made: the next apply makes them";
    }
    return run;
  }
  run.observed = statements.empty() ? before : read_objects(*session, wanted);
  return run;
}

}  // namespace dbform
