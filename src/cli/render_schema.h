#pragma once
// What a preview's migrations and its schema diff look like (docs/previews.md): text, JSON and
// markdown (the pull request's comment: PostgreSQL's messages and the schema's text, never a
// password or a connection string).
#include <string>

#include <nlohmann/json.hpp>

#include "ops/preview_schema.h"

namespace dbform::cli {

std::string render_migrations_text(const MigrateOutcome& m);
nlohmann::json migrations_json(const MigrateOutcome& m);
std::string render_migrations_markdown(const MigrateOutcome& m);

// `heading`: what the diff is of ("Preview pr-7").
std::string render_diff_text(const DiffOutcome& d, const std::string& heading);
nlohmann::json diff_json(const DiffOutcome& d, const std::string& name);
std::string render_diff_markdown(const DiffOutcome& d);

}  // namespace dbform::cli
