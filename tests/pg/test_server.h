#pragma once
// For tests of the PostgreSQL state backend: the throwaway server that tests/pg/start.sh started
// (the CTest fixture `pg`), fresh names, and SQL for setting up and inspecting what tests need.
// A missing server FAILS the test, never skips it: CI must not go green without PostgreSQL.
#include <unistd.h>

#include <atomic>
#include <fstream>
#include <random>
#include <string>

#include <catch2/catch.hpp>

#include "state/pg_store.h"

namespace pgtest {

// postgres://dbform:PASSWORD@127.0.0.1:PORT/postgres
inline std::string server_url() {
  std::ifstream f(DBFORM_PG_URL_FILE);
  std::string url;
  std::getline(f, url);
  if (url.empty())
    FAIL("no PostgreSQL test server: " DBFORM_PG_URL_FILE " is missing. Run the tests through ctest (its `pg` "
         "fixture starts one), or start one with tests/pg/start.sh BUILD_DIR/pg");
  return url;
}

// The test server's certificate, its own issuer (start.sh writes it beside the URL): what
// `sslrootcert` names for sslmode=verify-full.
inline std::string server_ca_file() {
  std::string file = DBFORM_PG_URL_FILE;
  file = file.substr(0, file.rfind('/') + 1) + "ca.pem";
  if (!std::ifstream(file))
    FAIL("no certificate of the PostgreSQL test server: " + file + " is missing (tests/pg/start.sh writes it)");
  return file;
}

// The password of the test server's URL: tests check it never appears in any output.
inline std::string server_password() {
  std::string url = server_url();
  size_t colon = url.find(':', url.find("://") + 3), at = url.find('@');
  return url.substr(colon + 1, at - colon - 1);
}

// A name no other test, process or earlier run uses, usable as a workspace or database name.
inline std::string unique_name(const std::string& prefix) {
  static std::atomic<int> counter{0};
  static const unsigned salt = std::random_device{}();
  return prefix + "_" + std::to_string(::getpid()) + "_" + std::to_string(salt % 100000) + "_" +
         std::to_string(++counter);
}

// The same server with another database.
inline std::string url_for_database(const std::string& database) {
  std::string url = server_url();
  return url.substr(0, url.rfind('/') + 1) + database;
}

// A new, empty database on the test server (no dbform tables yet); returns its URL.
inline std::string fresh_database(const std::string& prefix) {
  std::string name = unique_name(prefix);
  dbform::PgConnection admin(server_url());
  admin.exec_script("CREATE DATABASE " + name);
  return url_for_database(name);
}

// One value from the test server's main database, or "" for no row or NULL.
inline std::string query_value(const std::string& sql, const std::vector<dbform::PgConnection::Value>& params = {}) {
  dbform::PgConnection c(server_url());
  auto r = c.exec(sql, params);
  if (r.rows.empty() || r.rows[0].empty()) return "";
  return r.rows[0][0].value_or("");
}

// The first column of every row, NULL as "".
inline std::vector<std::string> query_rows(const std::string& sql, const std::vector<dbform::PgConnection::Value>& params = {}) {
  dbform::PgConnection c(server_url());
  std::vector<std::string> out;
  for (const auto& row : c.exec(sql, params).rows) out.push_back(row.empty() ? "" : row[0].value_or(""));
  return out;
}

}  // namespace pgtest
