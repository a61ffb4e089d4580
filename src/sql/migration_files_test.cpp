// Migration files parsed by PostgreSQL's parser (libpg_query): statements located as the server
// reads them, syntax errors at file:line:col before anything runs, statements that cannot run in
// the file's transaction refused, and the directory read in name order.
#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>

#include "sql/migration_files.h"
#include "util/error.h"

using namespace dbform;
namespace fs = std::filesystem;

namespace {

MigrationFile parsed(const std::string& text, Diagnostics& diags) {
  return parse_migration("0001_init.sql", "db/0001_init.sql", text, diags);
}

}  // namespace

TEST_CASE("statements are located as PostgreSQL reads them, semicolons in strings and bodies included", "[sql]") {
  Diagnostics diags;
  const std::string text =
      "-- the orders\nCREATE TABLE orders (id int, note text DEFAULT 'a;b');\n\n"
      "CREATE FUNCTION f() RETURNS int LANGUAGE sql AS $$ SELECT 1; $$;\n"
      "/* two /* nested */ lines */ INSERT INTO orders VALUES (1, 'x');";
  MigrationFile f = parsed(text, diags);
  REQUIRE_FALSE(diags.has_errors());
  REQUIRE(f.statements.size() == 3);
  CHECK(f.statement_text(0).find("CREATE TABLE orders (id int, note text DEFAULT 'a;b')") != std::string::npos);
  CHECK(f.at(f.statements[0].first_token).str() == "db/0001_init.sql:2:1");
  CHECK(f.statement_text(1).find("$$ SELECT 1; $$") != std::string::npos);
  CHECK(f.at(f.statements[1].first_token).str() == "db/0001_init.sql:4:1");
  CHECK(f.at(f.statements[2].first_token).str() == "db/0001_init.sql:5:30");
  CHECK(f.sha256.size() == 64);
}

TEST_CASE("a syntax error is reported at its file:line:col, counting characters, and nothing is located", "[sql]") {
  Diagnostics diags;
  MigrationFile f = parsed("CREATE TABLE t (v text DEFAULT 'été');\nALTER TABLE t ADD COLUMN w int;\n  SELEC 1;\n", diags);
  REQUIRE(diags.has_errors());
  CHECK(diags.str() == "db/0001_init.sql:3:3: error: syntax error: syntax error at or near \"SELEC\" "
                       "(PostgreSQL's parser refused it; nothing was run)\n");
  CHECK(f.statements.empty());
}

TEST_CASE("statements that cannot run inside the file's transaction are refused where they are", "[sql]") {
  for (const std::string stmt : {"BEGIN;", "COMMIT;", "CREATE INDEX CONCURRENTLY i ON t (v);", "VACUUM t;",
                                 "DROP INDEX CONCURRENTLY i;", "CREATE DATABASE other;"}) {
    INFO(stmt);
    Diagnostics diags;
    parsed("CREATE TABLE t (v int);\n" + stmt + "\n", diags);
    REQUIRE(diags.error_count() == 1);
    CHECK(diags.items()[0].location.str() == "db/0001_init.sql:2:1");
    CHECK_THAT(diags.items()[0].message, Catch::Contains("cannot run inside the transaction"));
  }
  Diagnostics fine;
  parsed("SAVEPOINT a; CREATE TABLE t (v int); RELEASE SAVEPOINT a; CREATE INDEX i ON t (v);", fine);
  CHECK_FALSE(fine.has_errors());
}

TEST_CASE("a file that is not UTF-8 is refused - one of comments only has no statement", "[sql]") {
  Diagnostics diags;
  parsed("SELECT '\xff';", diags);
  CHECK(diags.error_count() == 1);
  Diagnostics none;
  CHECK(parsed("-- nothing yet\n", none).statements.empty());
  CHECK_FALSE(none.has_errors());
}

TEST_CASE("the directory's *.sql files are read in name order, every bad one named at once", "[sql]") {
  const fs::path dir = fs::temp_directory_path() / ("dbform-migrations-test-" + std::to_string(::getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  auto write = [&](const std::string& name, const std::string& text) { std::ofstream(dir / name) << text; };
  write("0002_b.sql", "CREATE TABLE b (v int);");
  write("0001_a.sql", "CREATE TABLE a (v int);");
  write("README.md", "not SQL");
  write("0010_c.sql", "CREATE TABLE c (v int);");
  // The manifest that declares them lies beside them (outside any repository).
  const Location declared{(dir / "dbform.yaml").string(), 9, 7};
  std::vector<MigrationFile> files;
  REQUIRE_NOTHROW(files = load_migrations(dir.string(), declared));
  REQUIRE(files.size() == 3);
  CHECK(files[0].name == "0001_a.sql");
  CHECK(files[1].name == "0002_b.sql");
  CHECK(files[2].name == "0010_c.sql");
  CHECK(files[0].path == (dir / "0001_a.sql").string());

  write("0003_bad.sql", "CREATE TABLE (v int);");
  fs::create_symlink(dir / "missing", dir / "0004_link.sql");
  try {
    load_migrations(dir.string(), declared);
    FAIL("no error");
  } catch (const UsageError& e) {
    const std::string m = e.what();
    CHECK_THAT(m, Catch::Contains((dir / "0003_bad.sql").string() + ":1:14: error: syntax error"));
    CHECK_THAT(m, Catch::Contains((dir / "0004_link.sql").string() + ": error: the migration file is not a regular file"));
    CHECK_THAT(m, Catch::Contains("dbform.yaml:9:7"));
  }
  CHECK_THROWS_WITH(load_migrations((dir / "nope").string(), declared), Catch::Contains("is not a directory"));
  fs::remove_all(dir);
}
