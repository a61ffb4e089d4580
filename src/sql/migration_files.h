#pragma once
// A preview's migration files (a `previews:` block's `migrations: DIR`): every `*.sql` of the
// directory in name order, each parsed by PostgreSQL's own parser (libpg_query) before anything
// runs, so that a syntax error is reported at its file:line:col without touching a database, and
// each statement is sent exactly as the server reads it: no SQL is ever split by hand.
#include <cstddef>
#include <string>
#include <vector>

#include "util/diagnostics.h"

namespace dbform {

struct MigrationStatement {
  size_t offset = 0;       // in the file, of the text sent (comments before it included)
  size_t length = 0;
  size_t first_token = 0;  // in the file, of its first token: the statement's line
};

struct MigrationFile {
  std::string name;    // "0002_orders.sql": the ledger's key
  std::string path;    // for messages: the directory as the manifest's location gives it, and the name
  std::string text;
  std::string sha256;  // lowercase hex of the bytes
  std::vector<MigrationStatement> statements;

  std::string statement_text(size_t i) const { return text.substr(statements[i].offset, statements[i].length); }
  // path:line:col of a byte of the file (the column in characters).
  Location at(size_t byte) const;
};

// The file `name` (shown as `path`) parsed: its statements, or a located error in `diags` (a
// syntax error, a statement that cannot run inside the file's transaction) and no statements.
MigrationFile parse_migration(const std::string& name, const std::string& path, std::string text,
                              Diagnostics& diags);

// Every `*.sql` regular file of `dir` in byte order of their names (other entries are ignored), each
// read and parsed. Throws UsageError listing every problem of every file (a directory or file that
// cannot be read, one larger than 16 MiB, not UTF-8, a syntax error) after naming `declared_at`, the
// manifest's `migrations:` line.
std::vector<MigrationFile> load_migrations(const std::string& dir, const Location& declared_at);

// The byte offset of the first token at or after `from`: whitespace and comments (`--` to the end
// of the line, nested `/* */`) skipped, as the server skips them before a statement.
size_t skip_to_token(const std::string& text, size_t from);

}  // namespace dbform
