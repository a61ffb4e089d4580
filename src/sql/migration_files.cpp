#include "sql/migration_files.h"

#include <pg_query.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <set>

#include <nlohmann/json.hpp>

#include "sql/session.h"
#include "util/crypto.h"
#include "util/error.h"
#include "util/text.h"
#include "util/tree_links.h"

namespace dbform {

namespace fs = std::filesystem;

namespace {

constexpr size_t kMaxFileBytes = 16u << 20;

// Statements PostgreSQL refuses inside a transaction block, or that would end the file's own
// transaction: refused before anything runs, because each file runs in one transaction.
std::string outside_a_transaction(const nlohmann::json& stmt) {
  if (!stmt.is_object() || stmt.empty()) return "";
  const std::string kind = stmt.begin().key();
  const nlohmann::json& node = stmt.begin().value();
  if (kind == "TransactionStmt") {
    static const std::set<std::string> ends = {"TRANS_STMT_BEGIN",  "TRANS_STMT_START",          "TRANS_STMT_COMMIT",
                                               "TRANS_STMT_ROLLBACK", "TRANS_STMT_PREPARE",      "TRANS_STMT_COMMIT_PREPARED",
                                               "TRANS_STMT_ROLLBACK_PREPARED"};
    if (ends.count(node.value("kind", ""))) return "a transaction control statement (BEGIN, COMMIT, ROLLBACK...)";
    return "";
  }
  if ((kind == "IndexStmt" || kind == "DropStmt") && node.value("concurrent", false))
    return "a CONCURRENTLY statement";
  if (kind == "VacuumStmt") return node.value("is_vacuumcmd", false) ? "VACUUM" : "ANALYZE";
  if (kind == "CreatedbStmt" || kind == "DropdbStmt") return "CREATE or DROP DATABASE";
  if (kind == "CreateTableSpaceStmt" || kind == "DropTableSpaceStmt") return "CREATE or DROP TABLESPACE";
  if (kind == "AlterSystemStmt") return "ALTER SYSTEM";
  return "";
}

std::string read_whole(const fs::path& path, std::string& problem) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    problem = "cannot be read";
    return "";
  }
  std::string text;
  char buffer[65536];
  while (in.read(buffer, sizeof buffer) || in.gcount() > 0) {
    text.append(buffer, static_cast<size_t>(in.gcount()));
    if (text.size() > kMaxFileBytes) {
      problem = "is larger than 16 MiB";
      return "";
    }
  }
  if (in.bad()) problem = "cannot be read";
  return text;
}

}  // namespace

Location MigrationFile::at(size_t byte) const {
  Location loc{path, 1, 1};
  for (size_t i = 0; i < byte && i < text.size(); ++i) {
    if (text[i] == '\n') {
      ++loc.line;
      loc.column = 1;
    } else if ((static_cast<unsigned char>(text[i]) & 0xC0) != 0x80) {
      ++loc.column;
    }
  }
  return loc;
}

size_t skip_to_token(const std::string& text, size_t i) {
  while (i < text.size()) {
    if (std::isspace(static_cast<unsigned char>(text[i]))) {
      ++i;
    } else if (text.compare(i, 2, "--") == 0) {
      i = text.find('\n', i);
      if (i == std::string::npos) return text.size();
    } else if (text.compare(i, 2, "/*") == 0) {  // comments nest in PostgreSQL
      int depth = 0;
      do {
        if (text.compare(i, 2, "/*") == 0) ++depth, i += 2;
        else if (text.compare(i, 2, "*/") == 0) --depth, i += 2;
        else ++i;
      } while (depth > 0 && i < text.size());
    } else {
      break;
    }
  }
  return std::min(i, text.size());
}

MigrationFile parse_migration(const std::string& name, const std::string& path, std::string text,
                              Diagnostics& diags) {
  MigrationFile file{name, path, std::move(text), "", {}};
  file.sha256 = hex(sha256(file.text));
  const std::string field;  // the location says it all: file:line:col
  if (file.text.find('\0') != std::string::npos || valid_utf8(file.text) != file.text) {
    diags.error(Location{path}, field, "the file is not UTF-8 text", "save it as UTF-8");
    return file;
  }
  PgQueryParseResult parsed = pg_query_parse(file.text.c_str());
  if (parsed.error) {
    const int position = parsed.error->cursorpos;
    const Location where = position > 0 ? file.at(byte_of_character(file.text, position)) : Location{path};
    diags.error(where, field, std::string("syntax error: ") + parsed.error->message,
                "PostgreSQL's parser refused it; nothing was run");
    pg_query_free_parse_result(parsed);
    return file;
  }
  nlohmann::json tree = nlohmann::json::parse(parsed.parse_tree, nullptr, false);
  pg_query_free_parse_result(parsed);
  if (!tree.is_object() || !tree.contains("stmts")) {
    if (!tree.is_object()) diags.error(Location{path}, field, "PostgreSQL's parser gave no statements for the file");
    return file;  // a file of comments only has no statements
  }
  for (const auto& raw : tree["stmts"]) {
    MigrationStatement s;
    s.offset = raw.value("stmt_location", 0);
    const size_t length = raw.value("stmt_len", 0);  // 0: to the end of the file
    s.length = length == 0 ? file.text.size() - std::min(s.offset, file.text.size()) : length;
    s.first_token = skip_to_token(file.text, s.offset);
    if (const std::string what = outside_a_transaction(raw.value("stmt", nlohmann::json::object())); !what.empty())
      diags.error(file.at(s.first_token), field,
                  what + " cannot run inside the transaction each migration file runs in",
                  "dbform applies each file in one transaction, with its ledger row; remove it or run it outside "
                  "the migrations");
    file.statements.push_back(s);
  }
  return file;
}

std::vector<MigrationFile> load_migrations(const std::string& dir, const Location& declared_at) {
  const std::string refused = "; nothing was changed";
  std::error_code ec;
  if (!fs::is_directory(dir, ec))
    throw UsageError(declared_at.str() + ": error: migrations: `" + dir + "` is not a directory that can be read (" +
                     (ec ? ec.message() : "not a directory") + ")" + refused);
  // A pull request's migrations are read from its own tree: the directory, and every file of it
  // that is a link, must lead inside it (the repository that holds the manifest declaring them).
  const fs::path manifest_dir = fs::path(declared_at.file).parent_path();
  const fs::path tree = repository_tree(manifest_dir.empty() ? fs::path(".") : manifest_dir, dir);
  if (std::string outside = outside_tree(dir, tree); !outside.empty())
    throw UsageError(declared_at.str() + ": error: migrations: `" + scrub(dir) + "` cannot be read: " + outside + refused);
  std::vector<std::string> names;
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    const std::string name = it->path().filename().string();
    if (name.size() > 4 && name.compare(name.size() - 4, 4, ".sql") == 0) names.push_back(name);
  }
  if (ec) throw UsageError(declared_at.str() + ": error: migrations: `" + dir + "` cannot be listed: " + ec.message() + refused);
  std::sort(names.begin(), names.end());
  Diagnostics diags;
  std::vector<MigrationFile> files;
  for (const auto& name : names) {
    const std::string path = (fs::path(dir) / name).string();
    std::string problem = outside_tree(path, tree);
    if (!problem.empty()) problem = "is " + problem;
    else if (!fs::is_regular_file(path, ec)) problem = "is not a regular file (a dangling link, or a directory?)";
    std::string text = problem.empty() ? read_whole(path, problem) : "";
    if (!problem.empty()) {
      diags.error(Location{path}, "", "the migration file " + problem, "each `*.sql` file of the directory is applied, so each must be readable");
      continue;
    }
    files.push_back(parse_migration(name, path, std::move(text), diags));
  }
  if (diags.has_errors())
    throw UsageError(diags.str() + "the migrations (`migrations:` at " + declared_at.str() + ") were not run on any "
                     "database" + refused);
  return files;
}

}  // namespace dbform
