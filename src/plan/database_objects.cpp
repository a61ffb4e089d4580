#include "plan/database_objects.h"

#include <algorithm>

namespace dbform {

using nlohmann::json;

namespace {

// Every field of either side that differs: what is left out of a declaration is its default, which
// the settings hold (role_settings() and the others write every field).
std::vector<FieldChange> object_changes(const ResourceRecord& rec, const json& declared) {
  const json& now = rec.observed.is_object() ? rec.observed : rec.settings;
  std::vector<FieldChange> changes;
  auto compare = [&](const std::string& field) {
    const json before = now.contains(field) ? now[field] : json();
    const json after = declared.contains(field) ? declared[field] : json();
    if (before == after) return;
    const json recorded = rec.settings.contains(field) ? rec.settings[field] : json();
    changes.push_back({field, before, after, rec.observed.is_object() && before != recorded});
  };
  for (auto it = declared.begin(); it != declared.end(); ++it) compare(it.key());
  for (auto it = now.begin(); it != now.end(); ++it)
    if (!declared.contains(it.key())) compare(it.key());
  return changes;
}

}  // namespace

std::string service_address_of(const PlannedAction& a) { return resource_address(a.project_id, ResourceKind::Service, a.parent); }

std::optional<std::string> admin_unreachable(const ResourceRecord& service) {
  if (!service.is_ready())
    return "its service is not READY (" + (service.status.empty() ? std::string("not created") : service.status) + ")";
  if (service.endpoint_host.empty() || !service.endpoint_port) return std::string("the API showed no endpoint for it");
  const Secret& password = service.initial_password;
  if (password.empty() || !service.pending_password.empty())
    return "the service's tsdbadmin password is not recorded (set one with `dbform rotate-password " +
           service.address + "`)";
  if (password.is_sealed())
    return std::string("the state's passwords are sealed and this run has no key (DBFORM_STATE_PASSPHRASE or "
                       "DBFORM_STATE_KEY_FILE) to open the service's tsdbadmin password");
  if (password.is_unreadable())
    return "the service's tsdbadmin password is in " + password.unreadable_in() + ", which this run's role may not read";
  return std::nullopt;
}

ConnectTarget admin_target(const ResourceRecord& service) {
  ConnectTarget target;
  target.host = service.endpoint_host;
  target.port = service.endpoint_port.value_or(0);
  target.password = service.initial_password.text();
  return target;
}

PlannedAction plan_database_object(const std::string& project_id, const Declaration& d, const State& state) {
  PlannedAction a;
  a.kind = d.kind;
  a.project_id = project_id;
  a.parent = d.parent;
  a.name = d.name;
  a.address = resource_address(project_id, d.kind, d.name, d.parent);
  a.after = d.settings();
  a.location = d.location;
  a.deletion_protection = d.deletion_protection;
  const ResourceRecord* rec = state.find(a.address);
  if (!rec || rec->deleted_outside) {
    a.action = Action::Create;
    if (rec) a.reason = "dropped outside dbform: it is made again";
    return a;
  }
  a.resource_id = rec->id;
  a.before = rec->settings;
  if (rec->create_pending) {
    a.action = Action::Create;
    a.reason = "an earlier apply stopped before its transaction's outcome was known: the catalogs are read first, "
               "and it is made only if it is not there";
    return a;
  }
  a.changes = object_changes(*rec, a.after);
  if (rec->deletion_protection != a.deletion_protection)
    a.changes.push_back({"deletion_protection", rec->deletion_protection, a.deletion_protection, false});
  if (!rec->pending_password.empty()) {
    a.action = Action::Update;
    a.reason = "a new password was recorded and an earlier apply stopped before it was set: it is set again";
  } else {
    a.action = a.changes.empty() ? Action::NoOp : Action::Update;
  }
  return a;
}

namespace {

std::vector<std::string> strings(const json& j) {
  std::vector<std::string> out;
  if (j.is_array())
    for (const auto& v : j) out.push_back(v.get<std::string>());
  return out;
}

// A grant's (role, object) from its name: ROLE/SCHEMA[/tables|/sequences[/NAME]].
DbGrant grant_named(const std::string& name) {
  std::vector<std::string> parts;
  for (size_t start = 0;;) {
    const size_t slash = name.find('/', start);
    parts.push_back(name.substr(start, slash == std::string::npos ? slash : slash - start));
    if (slash == std::string::npos) break;
    start = slash + 1;
  }
  DbGrant g;
  g.role = parts.at(0);
  g.schema = parts.size() > 1 ? parts[1] : "";
  if (parts.size() > 2) {
    const bool tables = parts[2] == "tables";
    if (parts.size() > 3) {
      g.on = tables ? DbGrant::On::Table : DbGrant::On::Sequence;
      g.object = parts[3];
    } else {
      g.on = tables ? DbGrant::On::AllTables : DbGrant::On::AllSequences;
    }
  }
  return g;
}

}  // namespace

void add_db_object(ResourceKind kind, const std::string& name, const json& settings, DbObjects& into) {
  switch (kind) {
    case ResourceKind::Role: {
      DbRole r;
      r.name = name;
      r.login = settings.value("login", false);
      r.connection_limit = settings.value("connection_limit", -1L);
      r.member_of = strings(settings.value("member_of", json::array()));
      std::sort(r.member_of.begin(), r.member_of.end());
      const json declared = settings.value("settings", json::object());
      for (auto it = declared.begin(); it != declared.end(); ++it) r.settings[it.key()] = it->get<std::string>();
      into.roles.push_back(std::move(r));
      return;
    }
    case ResourceKind::Schema: into.schemas.push_back({name, settings.value("owner", std::string("tsdbadmin"))}); return;
    case ResourceKind::Extension: into.extensions.push_back({name, ""}); return;
    case ResourceKind::Grant: {
      DbGrant g = grant_named(name);
      g.privileges = strings(settings.value("privileges", json::array()));
      into.grants.push_back(std::move(g));
      return;
    }
    default: return;
  }
}

json observed_settings(ResourceKind kind, const std::string& name, const json& declared, const DbObjects& read,
                       int server_version_num) {
  switch (kind) {
    case ResourceKind::Role: {
      const DbRole* r = find_named(read.roles, name);
      if (!r) return json();
      const json declared_settings = declared.value("settings", json::object());
      json settings = json::object();
      for (const auto& [key, value] : r->settings) {
        std::string k = key, v = value;  // in the declared spelling where it is the same setting
        for (auto it = declared_settings.begin(); it != declared_settings.end(); ++it)
          if (same_setting_name(it.key(), key) && it->is_string() && same_setting_value(key, value, it->get<std::string>()))
            k = it.key(), v = it->get<std::string>();
        settings[k] = v;
      }
      return {{"login", r->login}, {"connection_limit", r->connection_limit}, {"member_of", r->member_of},
              {"settings", settings}};
    }
    case ResourceKind::Schema: {
      const DbSchema* s = find_named(read.schemas, name);
      return s ? json{{"owner", s->owner}} : json();
    }
    case ResourceKind::Extension: return find_named(read.extensions, name) ? json::object() : json();
    case ResourceKind::Grant: {
      const DbGrant want = grant_named(name);
      const DbGrant* have = find_grant(read.grants, want);
      if (!have || have->privileges.empty()) return json();
      json out = declared.is_object() ? declared : json::object();
      std::vector<std::string> privileges = have->privileges;
      const std::vector<std::string> declared_privileges = strings(declared.value("privileges", json::array()));
      std::vector<std::string> all = expand_all(have->on, server_version_num);
      std::sort(all.begin(), all.end());
      if (declared_privileges == std::vector<std::string>{"ALL"} && privileges == all) privileges = {"ALL"};
      out["privileges"] = privileges;
      if (!have->grant_option.empty()) out["grant_option"] = have->grant_option;
      return out;
    }
    default: return json();
  }
}

}  // namespace dbform
