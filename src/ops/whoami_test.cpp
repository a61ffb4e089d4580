// `whoami`'s verdicts on each project's key: resolved as apply resolves it, then asked whom it
// belongs to; no answer says nothing of the key, another project's key is named as such.
#include <catch2/catch.hpp>
#include <map>

#include "engine/test_support.h"
#include "ops/whoami.h"
#include "util/error.h"

using namespace dbform;
using namespace dbform::test;

namespace {

using R = FakeTransport;

EnvLookup whoami_env(std::map<std::string, std::string> vars) {
  return [vars](const std::string& name) -> std::optional<std::string> {
    auto it = vars.find(name);
    if (it == vars.end()) return std::nullopt;
    return it->second;
  };
}

Manifest project_p1() {
  Manifest m;
  DesiredProject p;
  p.id = "p1";
  m.projects.push_back(p);
  return m;
}

HttpResponse auth_of(const std::string& project) {
  return R::response(200, nlohmann::json{{"type", "apiKey"},
                                         {"api_key",
                                          {{"name", "ci-key"},
                                           {"public_key", "pub-1"},
                                           {"project", {{"id", project}, {"name", "Staging"}}}}},
                                         {"user", {{"name", "Ada"}, {"email", "ada@example.com"}}}}
                              .dump());
}

}  // namespace

TEST_CASE("ops: whoami says whose each project's key is - and never sends the key where none is set") {
  Harness h;
  const EnvLookup env = whoami_env({{"DBFORM_API_KEY_P1", "key-p1"}});

  SECTION("the project's own key") {
    h.fake.always("GET", "/auth/info", auth_of("p1"));
    const KeyVerdict v = check_project_key(h.api, project_p1(), "p1", env);
    CHECK(v.is == KeyVerdict::Is::Ok);
    CHECK(v.variable == "DBFORM_API_KEY_P1");
    CHECK_THAT(v.key, Catch::Contains("ci-key") && Catch::Contains("DBFORM_API_KEY_P1") && Catch::Contains("pub-1"));
    CHECK_THAT(v.key, !Catch::Contains("key-p1"));  // never the key itself
    CHECK(R::header_of(h.fake.requests().at(0), "Authorization") == "Bearer key-p1");
  }
  SECTION("another project's key") {
    h.fake.always("GET", "/auth/info", auth_of("p2"));
    const KeyVerdict v = check_project_key(h.api, project_p1(), "p1", env);
    CHECK(v.is == KeyVerdict::Is::WrongProject);
    CHECK(v.owner_id == "p2");
    CHECK(v.owner_name == "Staging");
  }
  SECTION("a refused key") {
    h.fake.always("GET", "/auth/info", R::response(401, R"({"code":"unauthorized","message":"invalid key"})"));
    const KeyVerdict v = check_project_key(h.api, project_p1(), "p1", env);
    CHECK(v.is == KeyVerdict::Is::Refused);
    CHECK_THAT(v.why, Catch::Contains("401"));
  }
  SECTION("no answer") {
    h.fake.set_handler([](const HttpRequest&) -> HttpResponse { throw TransportError("connection refused", false); });
    const KeyVerdict v = check_project_key(h.api, project_p1(), "p1", env);
    CHECK(v.is == KeyVerdict::Is::NotChecked);
    CHECK_THAT(v.why, Catch::Contains("connection refused"));
  }
  SECTION("no key") {
    const KeyVerdict v = check_project_key(h.api, project_p1(), "p1", whoami_env({}));
    CHECK(v.is == KeyVerdict::Is::NoKey);
    CHECK_THAT(v.why, Catch::Contains("DBFORM_API_KEY_P1"));
    CHECK(h.fake.requests().empty());
  }
}

TEST_CASE("ops: whoami --offline resolves each key and asks the API nothing") {
  Harness h;
  const KeyVerdict found = resolve_project_key(project_p1(), "p1", whoami_env({{"DBFORM_API_KEY", "key-all"}}));
  CHECK(found.is == KeyVerdict::Is::Found);
  CHECK(found.variable == "DBFORM_API_KEY");
  CHECK(resolve_project_key(project_p1(), "p1", whoami_env({})).is == KeyVerdict::Is::NoKey);
  CHECK(h.fake.requests().empty());
}

TEST_CASE("ops: whoami without manifests checks DBFORM_API_KEY and names its project") {
  Harness h;
  CHECK_THROWS_AS(check_default_key(h.api, whoami_env({})), UsageError);
  h.fake.always("GET", "/auth/info", auth_of("p2"));
  const KeyVerdict v = check_default_key(h.api, whoami_env({{"DBFORM_API_KEY", "key-all"}}));
  CHECK(v.owner_id == "p2");
  CHECK_THAT(v.key, Catch::Contains("DBFORM_API_KEY"));
}
