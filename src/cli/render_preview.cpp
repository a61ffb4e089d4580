#include "cli/render_preview.h"

#include <cctype>

#include "ops/connections.h"
#include "util/clock.h"
#include "util/error.h"
#include "util/escape.h"
#include "util/text.h"

namespace dbform::cli {

namespace {

std::string service_of(const ResourceRecord& rec) {
  const auto mark = preview_mark(rec);
  return mark ? mark->service : rec.name;
}

std::string status_of(const ResourceRecord& rec) {
  if (rec.create_pending) return "create outcome unknown";
  if (rec.deleted_outside) return "deleted outside dbform";
  return rec.status.empty() ? "unknown" : scrub(rec.status);
}

std::string endpoint_of(const ResourceRecord& rec) {
  if (rec.endpoint_host.empty()) return "(no endpoint yet)";
  return scrub(rec.endpoint_host) + (rec.endpoint_port ? ":" + std::to_string(*rec.endpoint_port) : "");
}

// Text from the API in a table cell: a code span nothing in it ends (util/escape.h).
std::string md_code(const std::string& text) { return markdown_cell(text); }

std::string env_variable(const std::string& service) {
  std::string name = "DATABASE_URL_" + service;
  for (char& c : name) c = std::isalnum(static_cast<unsigned char>(c)) ? std::toupper(static_cast<unsigned char>(c)) : '_';
  return name;
}

}  // namespace

std::string render_preview_text(const RecordedPreview& p, WallTime now) {
  std::string out = "Preview " + p.name + " of project " + p.project_id + ": " + std::to_string(p.forks.size()) +
                    " service(s), " + preview_age(p.created_at, now) + " old, expires " + p.expires_at +
                    (preview_expired(p, now) ? " (expired: the next `dbform preview sweep` deletes it)" : "") + "\n";
  for (const ResourceRecord* rec : p.forks)
    out += "  " + service_of(*rec) + " -> " + rec->name + " (" + (rec->id.empty() ? "no id" : rec->id) + ")  " +
           status_of(*rec) + "  " + endpoint_of(*rec) + "\n";
  out += "Connection string: dbform output ADDRESS.connection_string; psql: dbform connect ADDRESS; addresses:\n";
  for (const ResourceRecord* rec : p.forks) out += "  " + rec->address + "\n";
  return out;
}

nlohmann::json preview_json(const RecordedPreview& p, WallTime now) {
  nlohmann::json services = nlohmann::json::array();
  for (const ResourceRecord* rec : p.forks) {
    nlohmann::json s = {{"service", service_of(*rec)}, {"address", rec->address}, {"name", rec->name},
                        {"id", rec->id},            {"status", status_of(*rec)}};
    s["host"] = rec->endpoint_host.empty() ? nlohmann::json() : nlohmann::json(scrub(rec->endpoint_host));
    s["port"] = rec->endpoint_port ? nlohmann::json(*rec->endpoint_port) : nlohmann::json();
    s["output"] = "dbform output " + rec->address + ".connection_string";
    s["connect"] = "dbform connect " + rec->address;
    services.push_back(std::move(s));
  }
  return {{"project_id", p.project_id}, {"name", p.name},   {"created_at", p.created_at},
          {"expires_at", p.expires_at}, {"age", preview_age(p.created_at, now)},
          {"expired", preview_expired(p, now)}, {"services", std::move(services)}};
}

std::string render_preview_markdown(const RecordedPreview& p, WallTime now) {
  std::string out = "<!-- dbform-preview " + p.project_id + "/" + p.name + " -->\n";
  out += "### Preview database `" + p.name + "` (project `" + p.project_id + "`)\n\n";
  out += "| service | fork | status | host | port |\n|---|---|---|---|---|\n";
  for (const ResourceRecord* rec : p.forks)
    out += "| " + md_code(service_of(*rec)) + " | " + md_code(rec->name) + " | " + md_code(status_of(*rec)) + " | " +
           (rec->endpoint_host.empty() ? "-" : md_code(rec->endpoint_host)) + " | " +
           (rec->endpoint_port ? std::to_string(*rec->endpoint_port) : "-") + " |\n";
  out += "\nCreated " + p.created_at + ", expires **" + p.expires_at + "**" +
         (preview_expired(p, now) ? " (expired)" : "") +
         ": the nightly `dbform preview sweep` deletes it then, and closing the pull request deletes it at once.\n\n";
  out += "Each fork has a password of its own (not its source's); it is in the state, never in this comment:\n\n```sh\n";
  for (const ResourceRecord* rec : p.forks) {
    out += "dbform output " + rec->address + ".connection_string\n";
    out += "dbform connect " + rec->address + "\n";
  }
  out += "```\n";
  return out;
}

std::string render_preview_env(const RecordedPreview& p) {
  std::string out;
  for (const ResourceRecord* rec : p.forks) {
    if (const std::string problem = unrotated_fork_problem(*rec); !problem.empty()) throw Error(problem);
    if (rec->endpoint_host.empty() || rec->initial_password.empty())
      throw Error(rec->address + " has no " + (rec->endpoint_host.empty() ? "endpoint" : "known password") +
                  " recorded yet: run `dbform preview up " + p.name + "` again to finish it");
    const std::string url =
        connection_uri(rec->initial_password.text(), rec->endpoint_host, rec->endpoint_port.value_or(0));
    out += env_variable(service_of(*rec)) + "=" + shell_quote(url) + "\n";
  }
  return out;
}

std::string render_preview_list(const std::vector<RecordedPreview>& previews, WallTime now) {
  if (previews.empty()) return "No previews are recorded.\n";
  std::string out;
  for (const auto& p : previews) {
    std::vector<std::string> services;
    for (const ResourceRecord* rec : p.forks) services.push_back(service_of(*rec) + " " + status_of(*rec));
    out += p.project_id + "/previews/" + p.name + "  age " + preview_age(p.created_at, now) + "  expires " +
           p.expires_at + (preview_expired(p, now) ? " (expired)" : "") + "  " + join(services, ", ") + "\n";
  }
  return out;
}

}  // namespace dbform::cli
