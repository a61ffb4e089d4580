// Which variable a project's API key comes from: its `api_key_env`, else
// DBFORM_API_KEY_<PROJECT>, else DBFORM_API_KEY (docs/commands.md, "Environment").
#include <catch2/catch.hpp>
#include <map>

#include "api/project_key.h"
#include "ops/keys.h"
#include "util/error.h"

using namespace dbform;

namespace {

EnvLookup env_of(std::map<std::string, std::string> vars) {
  return [vars](const std::string& name) -> std::optional<std::string> {
    auto it = vars.find(name);
    if (it == vars.end()) return std::nullopt;
    return it->second;
  };
}

Manifest manifest_with(const std::string& id, std::optional<std::string> api_key_env = std::nullopt) {
  Manifest m;
  DesiredProject p;
  p.id = id;
  p.api_key_env = std::move(api_key_env);
  m.projects.push_back(p);
  return m;
}

}  // namespace

TEST_CASE("engine: a project's key comes from api_key_env, then DBFORM_API_KEY_<ID>, then DBFORM_API_KEY") {
  const Manifest m = manifest_with("my-proj.1", "PROD_DB_KEY");
  std::map<std::string, std::string> vars = {
      {"PROD_DB_KEY", "k-declared"}, {"DBFORM_API_KEY_MY_PROJ_1", "k-project"}, {"DBFORM_API_KEY", "k-default"}};

  auto key = resolve_keys(m, {"my-proj.1"}, env_of(vars)).at("my-proj.1");
  CHECK(key.key == "k-declared");
  CHECK(key.variable == "PROD_DB_KEY");

  vars.erase("PROD_DB_KEY");
  key = resolve_keys(m, {"my-proj.1"}, env_of(vars)).at("my-proj.1");
  CHECK(key.key == "k-project");
  CHECK(key.variable == "DBFORM_API_KEY_MY_PROJ_1");  // upper-cased, '-' and '.' became '_'

  vars.erase("DBFORM_API_KEY_MY_PROJ_1");
  key = resolve_keys(m, {"my-proj.1"}, env_of(vars)).at("my-proj.1");
  CHECK(key.key == "k-default");
  CHECK(key.variable == "DBFORM_API_KEY");
}

TEST_CASE("engine: each project gets its own key, projects not asked for are not resolved") {
  Manifest m = manifest_with("a");
  m.projects.push_back(manifest_with("b", "B_KEY").projects[0]);
  m.projects.push_back(manifest_with("c").projects[0]);
  auto keys = resolve_keys(m, {"a", "b"}, env_of({{"DBFORM_API_KEY_A", "ka"}, {"B_KEY", "kb"}}));
  CHECK(keys.size() == 2);
  CHECK(keys.at("a").key == "ka");
  CHECK(keys.at("b").key == "kb");
  CHECK(keys.at("b").variable == "B_KEY");
}

TEST_CASE("engine: a missing key names the project and every variable tried") {
  Manifest m = manifest_with("p1", "PROD_DB_KEY");
  m.projects.push_back(manifest_with("p2").projects[0]);
  try {
    resolve_keys(m, {"p1", "p2"}, env_of({{"UNRELATED", "x"}}));
    FAIL("no error");
  } catch (const Error& e) {
    const std::string msg = e.what();
    CHECK_THAT(msg, Catch::Contains("2 project(s)"));
    CHECK_THAT(msg, Catch::Contains("`p1`: none of PROD_DB_KEY, DBFORM_API_KEY_P1, DBFORM_API_KEY is set"));
    CHECK_THAT(msg, Catch::Contains("`p2`: none of DBFORM_API_KEY_P2, DBFORM_API_KEY is set"));
  }
  // One project with a key and one without: still an error, naming only the one without.
  try {
    resolve_keys(m, {"p1", "p2"}, env_of({{"PROD_DB_KEY", "secret-value"}}));
    FAIL("no error");
  } catch (const Error& e) {
    CHECK_THAT(e.what(), Catch::Contains("`p2`") && !Catch::Contains("`p1`") && !Catch::Contains("secret-value"));
  }
}
