#pragma once
// What `dbform preview` prints: a preview in text, JSON, markdown (a pull request's comment: no
// password, ever) or env (`DATABASE_URL_SERVICE='...'` lines, the one form that holds the
// password, because that is what it is asked for); and the listing of every preview.
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "ops/preview.h"
#include "state/previews.h"

namespace dbform::cli {

std::string render_preview_text(const RecordedPreview& p, WallTime now);
// {"project_id", "name", "created_at", "expires_at", "age", "expired", "services": [{"service",
// "address", "name", "id", "status", "host", "port", "output", "connect"}]}: no password.
nlohmann::json preview_json(const RecordedPreview& p, WallTime now);
std::string render_preview_markdown(const RecordedPreview& p, WallTime now);
// One line per fork: DATABASE_URL_<SERVICE>='postgres://...' (the service's name upper-cased, every
// character other than A-Z and 0-9 turned into `_`). Throws Error for a fork with no known
// endpoint or password, naming it.
std::string render_preview_env(const RecordedPreview& p);
// Every preview: services, status, age, expiry; a line saying so when there is none.
std::string render_preview_list(const std::vector<RecordedPreview>& previews, WallTime now);

}  // namespace dbform::cli
