#include "state/previews.h"

#include <algorithm>
#include <map>

#include "util/clock.h"

namespace dbform {

bool is_valid_preview_name(std::string_view name) {
  if (name.empty() || name.size() > kMaxPreviewNameLength) return false;
  return std::all_of(name.begin(), name.end(), [](char c) { return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-'; });
}

std::string preview_address(const std::string& project_id, const std::string& preview, const std::string& service) {
  return project_id + "/previews/" + preview + "/services/" + service;
}

std::string preview_fork_name(const std::string& preview, const std::string& service) { return service + "-" + preview; }

std::optional<PreviewMark> preview_mark(const ResourceRecord& rec) {
  if (!rec.settings.is_object()) return std::nullopt;
  auto it = rec.settings.find(kPreviewKey);
  if (it == rec.settings.end() || !it->is_object()) return std::nullopt;
  const nlohmann::json& m = *it;
  auto text = [&](const char* key) -> const nlohmann::json* {
    auto f = m.find(key);
    return f != m.end() && f->is_string() ? &*f : nullptr;
  };
  if (!text("name") || !text("service") || !text("expires_at")) return std::nullopt;
  PreviewMark mark{m["name"], m["service"], m["expires_at"], false};
  if (auto r = m.find("password_rotated"); r != m.end() && r->is_boolean()) mark.password_rotated = r->get<bool>();
  return mark;
}

bool preview_password_rotated(const ResourceRecord& rec) {
  const auto mark = preview_mark(rec);
  return mark && mark->password_rotated && rec.pending_password.empty();
}

std::string unrotated_fork_problem(const ResourceRecord& rec) {
  const auto mark = preview_mark(rec);
  if (!mark || preview_password_rotated(rec)) return "";
  return rec.address + " is a fork of preview `" + mark->name + "` whose password is not its own yet (a fork starts "
         "with its source's): run `dbform preview up " + mark->name + "` to finish it";
}

bool is_preview_record(const ResourceRecord& rec) {
  return rec.settings.is_object() && rec.settings.contains(kPreviewKey);
}

std::string preview_record_problem(const ResourceRecord& rec) {
  if (!is_preview_record(rec)) return "";
  const auto mark = preview_mark(rec);
  if (!mark) return "an object with the texts name, service and expires_at";
  if (rec.kind != ResourceKind::Service || !rec.parent.empty()) return "kind \"service\" without a parent (a preview's fork is a service)";
  if (!is_valid_preview_name(mark->name) || !is_valid_name(mark->service))
    return "a preview name (1-32 of a-z, 0-9 and '-') and a service name, not `" + mark->name + "` and `" +
           mark->service + "`";
  if (!parse_utc(mark->expires_at))
    return std::string("an expires_at that is ") + kUtcTimeExpected;
  if (const std::string expected = preview_address(rec.project_id, mark->name, mark->service); rec.address != expected)
    return "the address \"" + expected + "\" for it (from project_id and settings.preview)";
  if (const std::string expected = preview_fork_name(mark->name, mark->service); rec.name != expected)
    return "the name \"" + expected + "\" for it (SERVICE-PREVIEW)";
  return "";
}

UtcTime preview_created(const RecordedPreview& p) {
  return parse_utc(p.created_at).value_or(UtcTime{});
}

bool preview_expired(const RecordedPreview& p, std::chrono::system_clock::time_point now) {
  return parse_utc(p.expires_at).value_or(UtcTime{}) <= utc_time(now);
}

namespace {

// Whether UTC time `a` is before `b`, compared as times; a time that is not one (never in a state
// that was read: the codec checks them) counts as the latest.
bool earlier(const std::string& a, const std::string& b) {
  const auto ta = parse_utc(a), tb = parse_utc(b);
  return ta && (!tb || *ta < *tb);
}

}  // namespace

std::vector<RecordedPreview> recorded_previews(const State& state, const std::string& project_id) {
  std::vector<RecordedPreview> out;
  std::map<std::pair<std::string, std::string>, size_t> index;  // (project, name) -> position in out
  for (const auto& rec : state.resources) {
    if (!project_id.empty() && rec.project_id != project_id) continue;
    const auto mark = preview_mark(rec);
    if (!mark) continue;
    auto [it, fresh] = index.emplace(std::pair(rec.project_id, mark->name), out.size());
    if (fresh) out.push_back({rec.project_id, mark->name, rec.created_at, mark->expires_at, {}});
    RecordedPreview& p = out[it->second];
    p.forks.push_back(&rec);
    if (earlier(rec.created_at, p.created_at)) p.created_at = rec.created_at;
    if (earlier(mark->expires_at, p.expires_at)) p.expires_at = mark->expires_at;
  }
  // Oldest first within a project; projects keep the state's order.
  std::map<std::string, size_t> project_order;
  for (const auto& p : out) project_order.emplace(p.project_id, project_order.size());
  std::stable_sort(out.begin(), out.end(), [&](const RecordedPreview& a, const RecordedPreview& b) {
    const size_t pa = project_order[a.project_id], pb = project_order[b.project_id];
    return pa != pb ? pa < pb : earlier(a.created_at, b.created_at);
  });
  return out;
}

}  // namespace dbform
