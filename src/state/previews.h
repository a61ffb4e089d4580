#pragma once
// Previews (docs/previews.md): a database per pull request. Each preview's forks are recorded as
// services under PROJECT/previews/NAME/services/SERVICE, named SERVICE-NAME in the API, and marked
// by the `preview` object of their settings (the preview's name, the source, the expiry recorded at
// creation). They belong to the `previews:` block, not to the declarations: no plan acts on them.
#include <chrono>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "state/model.h"
#include "util/clock.h"

namespace dbform {

// 1-32 of lowercase letters, digits and '-' (a pull request's number fits: pr-123).
inline constexpr size_t kMaxPreviewNameLength = 32;
bool is_valid_preview_name(std::string_view name);

// PROJECT/previews/NAME/services/SERVICE.
std::string preview_address(const std::string& project_id, const std::string& preview, const std::string& service);
// SERVICE-NAME: the fork's name in the API.
std::string preview_fork_name(const std::string& preview, const std::string& service);

// What a preview record's settings say about it.
struct PreviewMark {
  std::string name;        // the preview's
  std::string service;     // the source service's name
  std::string expires_at;  // UTC, ISO 8601: creation + ttl, fixed at creation
  bool password_rotated = false;  // its password is its own (set once the fork was READY)
};
// The mark of a preview record; nullopt for any other record (or a mark that is not an object of
// strings, which the state's reader refuses).
std::optional<PreviewMark> preview_mark(const ResourceRecord& rec);
bool is_preview_record(const ResourceRecord& rec);
// Whether a preview's fork has a password of its own: rotated after the fork, the answer heard (no
// password change pending). A snapshot carries its source's credentials: until then the recorded
// password may be production's.
bool preview_password_rotated(const ResourceRecord& rec);
// For a preview's fork whose password is not its own yet: why its password (or a connection
// string holding it) is refused, naming the command that finishes it; "" for any other record.
std::string unrotated_fork_problem(const ResourceRecord& rec);
// The settings key holding the mark.
inline constexpr const char* kPreviewKey = "preview";

// What a record marked as a preview must be and is not, worded to follow "expected" ("" when it
// is one): a service whose address and name are those of its mark.
std::string preview_record_problem(const ResourceRecord& rec);

// One preview of a project as the state records it: its forks, oldest first by creation.
struct RecordedPreview {
  std::string project_id;
  std::string name;
  std::string created_at;  // the earliest of its forks'
  std::string expires_at;  // the earliest of its forks'
  std::vector<const ResourceRecord*> forks;  // in the state's order
};
// Its creation and expiry as times (the state's reader checks both are UTC timestamps).
UtcTime preview_created(const RecordedPreview& p);
bool preview_expired(const RecordedPreview& p, std::chrono::system_clock::time_point now);
// Every preview recorded, per project in the state's order, then by creation (oldest first).
std::vector<RecordedPreview> recorded_previews(const State& state, const std::string& project_id = "");

}  // namespace dbform
