// The roles docs/state.md gives a PostgreSQL state (the pull request's planner, which may not read
// dbform_secrets, and main's applier), and a checkout of the team's manifests run as one of them.
#pragma once

#include "common.h"
#include "state/pg_store.h"

namespace e2e {

// One role's checkout of the team's manifests, its state in `database_url` as `role`.
struct RoleCheckout {
  Sandbox& sb;
  fs::path dir;
  std::map<std::string, std::string> env;

  RoleCheckout(Sandbox& sandbox, const std::string& name, const std::string& url) : sb(sandbox) {
    dir = sb.dir() / name;
    fs::create_directories(dir);
    env = sb.env;
    env["DBFORM_STATE"] = url;
    env["DBFORM_WORKSPACE"] = "default";
  }
  void write_manifest(const std::string& text) { sb.write((dir / "dbform.yaml").lexically_relative(sb.dir()), text); }
  RunResult run(const std::vector<std::string>& args, const std::string& stdin_text = "") {
    Process p(args, env, dir, stdin_text, std::chrono::seconds(60));
    return p.wait();
  }
  RunResult apply() { return run({"apply", "--auto-approve", "--poll-interval", "100ms"}); }
};

// The URL of the same database as another role.
inline std::string as_role(const std::string& database_url, const std::string& role, const std::string& password) {
  return "postgres://" + role + ":" + password + database_url.substr(database_url.find('@'));
}

// Every text column dbform keeps outside the secrets table, for every workspace.
inline std::string documents_and_journal(dbform::PgConnection& admin) {
  std::string all;
  for (const auto& row : admin.exec("SELECT document FROM dbform_states").rows) all += row.at(0).value_or("");
  for (const auto& row : admin.exec("SELECT entry FROM dbform_journal").rows) all += row.at(0).value_or("");
  return all;
}

// Makes dbform's tables in `database_url`, as a first apply would (its lock makes them).
inline void make_state_tables(const std::string& database_url) {
  dbform::PgStateStore store(database_url, "default");
  auto held = store.lock("setup", dbform::Duration(0));
}

// `document` (a file state's, passwords in it: the form a dbform before the secrets table wrote) as
// the row of the workspace "default".
inline void insert_old_form(dbform::PgConnection& admin, const json& document) {
  admin.exec("INSERT INTO dbform_states (workspace, lineage, serial, document) VALUES ('default', $1, $2, $3)",
             {document["lineage"].get<std::string>(), std::to_string(document["serial"].get<long long>()),
              document.dump(2)});
}

// The two roles docs/state.md gives, with the passwords 'planner-pw' and 'applier-pw'.
inline void grant_roles(dbform::PgConnection& admin, const std::string& planner, const std::string& applier) {
  admin.exec_script("CREATE ROLE " + planner + " LOGIN PASSWORD 'planner-pw'");
  admin.exec_script("GRANT SELECT ON dbform_states, dbform_journal, dbform_locks TO " + planner);
  admin.exec_script("CREATE ROLE " + applier + " LOGIN PASSWORD 'applier-pw'");
  admin.exec_script("GRANT SELECT, INSERT, UPDATE, DELETE ON dbform_states, dbform_journal, dbform_locks, "
                    "dbform_secrets TO " + applier);
}

}  // namespace e2e
