#include "manifest/loader.h"

#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

#include <sys/stat.h>

namespace fs = std::filesystem;
using namespace dbform;

namespace {

EnvLookup env_of(std::map<std::string, std::string> vars) {
  return [vars = std::move(vars)](const std::string& name) -> std::optional<std::string> {
    auto it = vars.find(name);
    if (it == vars.end()) return std::nullopt;
    return it->second;
  };
}

Manifest load(const std::string& text, Diagnostics& diags, EnvLookup env = env_of({})) {
  return load_manifest_text("m.yaml", text, env, diags);
}

std::vector<const Diagnostic*> errors_of(const Diagnostics& diags) {
  std::vector<const Diagnostic*> out;
  for (const auto& d : diags.items())
    if (d.severity == Severity::Error) out.push_back(&d);
  return out;
}

// The only error of a manifest that must have exactly one.
Diagnostic only_error(const std::string& text, EnvLookup env = env_of({})) {
  Diagnostics diags;
  load(text, diags, std::move(env));
  INFO(diags.str());
  auto errors = errors_of(diags);
  REQUIRE(errors.size() == 1);
  return *errors[0];
}

const std::string kService = "version: 1\nprojects:\n  - id: acme\n    services:\n      - name: orders\n";

// A fresh directory under the system temp dir, removed afterwards.
class TempDir {
 public:
  TempDir() {
    std::string pattern = (fs::temp_directory_path() / "dbform-manifest-XXXXXX").string();
    path_ = mkdtemp(pattern.data());
  }
  ~TempDir() {
    std::error_code ec;
    fs::remove_all(path_, ec);
  }
  std::string write(const std::string& name, const std::string& text) const {
    auto p = path_ / name;
    fs::create_directories(p.parent_path());
    std::ofstream(p) << text;
    return p.string();
  }
  std::string path() const { return path_.string(); }

 private:
  fs::path path_;
};

}  // namespace

TEST_CASE("manifest: a full manifest loads with canonical values") {
  Diagnostics diags;
  Manifest m = load(R"(version: 1
projects:
  - id: acme-prod
    api_key_env: DBFORM_ACME_KEY
    vpcs:
      - name: main
        cidr: 10.0.0.0/16
        region_code: us-east-1
    services:
      - name: orders
        addons: [time-series, ai]
        cpu_millis: 1000
        memory_gbs: 4.0
        environment_tag: PROD
        region_code: us-east-1
        replica_count: 1
        vpc: main
        connection_pooler: true
      - name: cache
        cpu_millis: shared
        memory_gbs: "0.50"
      - name: minimal
)",
                    diags);
  INFO(diags.str());
  REQUIRE_FALSE(diags.has_errors());
  CHECK(diags.items().empty());
  REQUIRE(m.projects.size() == 1);
  const auto& p = m.projects[0];
  CHECK(p.id == "acme-prod");
  CHECK(p.api_key_env == "DBFORM_ACME_KEY");
  CHECK(p.location.str() == "m.yaml:3:5");
  REQUIRE(p.vpcs.size() == 1);
  CHECK(p.vpcs[0].name == "main");
  CHECK(p.vpcs[0].cidr == "10.0.0.0/16");
  CHECK(p.vpcs[0].region_code == "us-east-1");
  CHECK(p.vpcs[0].location.str() == "m.yaml:6:9");
  REQUIRE(p.services.size() == 3);
  const auto& orders = p.services[0];
  CHECK(orders.addons == std::vector<std::string>{"time-series", "ai"});
  CHECK(orders.cpu_millis == "1000");
  CHECK(orders.memory_gbs == "4");
  CHECK(orders.environment_tag == "PROD");
  CHECK(orders.region_code == "us-east-1");
  CHECK(orders.replica_count == 1);
  CHECK(orders.location.str() == "m.yaml:10:9");
  CHECK(orders.vpc == "main");
  CHECK(orders.connection_pooler == true);
  CHECK(p.services[1].cpu_millis == "shared");
  CHECK(p.services[1].memory_gbs == "0.5");
  const auto& minimal = p.services[2];
  CHECK(minimal.addons.empty());
  CHECK_FALSE(minimal.cpu_millis);
  CHECK_FALSE(minimal.memory_gbs);
  CHECK_FALSE(minimal.environment_tag);
  CHECK_FALSE(minimal.region_code);
  CHECK_FALSE(minimal.replica_count);
  CHECK_FALSE(minimal.vpc);
  CHECK_FALSE(minimal.connection_pooler);
  CHECK(m.files == std::vector<std::string>{"m.yaml"});
  CHECK(m.digest.size() == 64);
}

TEST_CASE("manifest: a service's vpc names a VPC its project declares, in any file") {
  Diagnostics diags;
  load(R"(version: 1
projects:
  - id: acme-prod
    vpcs:
      - {name: main, cidr: 10.0.0.0/16, region_code: us-east-1}
    services:
      - name: orders
        vpc: mian
  - id: other
    services:
      - {name: api, vpc: main}
)",
       diags);
  auto errors = errors_of(diags);
  REQUIRE(errors.size() == 2);
  CHECK(errors[0]->location.str() == "m.yaml:8:14");
  CHECK(errors[0]->field == "projects[0].services[0].vpc");  // the field's whole path, so the user finds it, not `vpc`
  CHECK(errors[0]->message == "service `orders` names vpc `mian`, which project `acme-prod` does not declare");
  CHECK(errors[0]->hint == "did you mean `main`?");
  // Another project's VPC does not count: a service attaches only within its project.
  CHECK(errors[1]->message == "service `api` names vpc `main`, which project `other` does not declare");
}

TEST_CASE("manifest: connection_pooler is true or false, never yes or a quoted word") {
  for (const char* value : {"yes", "\"true\"", "1"}) {
    Diagnostic d = only_error(std::string("version: 1\nprojects:\n  - id: p\n    services:\n      - name: s\n"
                                          "        connection_pooler: ") + value + "\n");
    CHECK(d.field == "projects[0].services[0].connection_pooler");
    CHECK(d.message.find("expected true or false") != std::string::npos);
  }
  Diagnostics diags;
  Manifest m = load("version: 1\nprojects:\n  - id: p\n    services:\n      - name: s\n        connection_pooler: ${POOL}\n",
                    diags, env_of({{"DBFORM_VAR_POOL", "false"}}));
  REQUIRE_FALSE(diags.has_errors());
  CHECK(m.projects[0].services[0].connection_pooler == false);
}

TEST_CASE("manifest: numbers take one canonical form however they are written") {
  auto service_with = [](const std::string& settings) {
    Diagnostics diags;
    Manifest m = load(kService + settings, diags);
    INFO(diags.str());
    REQUIRE_FALSE(diags.has_errors());
    return m.projects.at(0).services.at(0);
  };
  CHECK(service_with("        cpu_millis: \"2000\"\n").cpu_millis == "2000");
  CHECK(service_with("        cpu_millis: 2000.0\n").cpu_millis == "2000");
  CHECK(service_with("        memory_gbs: 16\n").memory_gbs == "16");
  CHECK(service_with("        memory_gbs: 0.25\n").memory_gbs == "0.25");
  CHECK(service_with("        memory_gbs: \"8.0\"\n").memory_gbs == "8");
  CHECK(service_with("        memory_gbs: 1e3\n").memory_gbs == "1000");
  CHECK(service_with("        replica_count: 0\n").replica_count == 0);
  CHECK(service_with("        replica_count: 2.0\n").replica_count == 2);
}

TEST_CASE("manifest: ${VAR} interpolates any scalar, numbers included") {
  Diagnostics diags;
  auto env = env_of({{"DBFORM_VAR_PROJECT_ID", "acme-prod"}, {"DBFORM_VAR_ENV", "eu"}, {"DBFORM_VAR_CPU", "2000"},
                     {"DBFORM_VAR_MEM", "0.5"}, {"DBFORM_VAR_REPLICAS", "2"}, {"DBFORM_VAR_TAG", "PROD"},
                     {"DBFORM_VAR_NUMERIC_NAME", "2024"}});
  Manifest m = load(R"(version: 1
projects:
  - id: ${PROJECT_ID}
    services:
      - name: "db-${ENV}"
        cpu_millis: ${CPU}
        memory_gbs: ${MEM}
        replica_count: ${REPLICAS}
        environment_tag: ${TAG}
        region_code: ${ENV}-west-1
      - name: ${NUMERIC_NAME}
      - name: literal-$${ENV}-is-not-a-name
)",
                    diags, env);
  // The last service's name holds "${ENV}" literally, which is not a valid name: proves the escape.
  auto errors = errors_of(diags);
  REQUIRE(errors.size() == 1);
  CHECK(errors[0]->location.str() == "m.yaml:12:15");
  CHECK_THAT(errors[0]->message, Catch::Contains("`literal-${ENV}-is-not-a-name`"));
  const auto& p = m.projects.at(0);
  CHECK(p.id == "acme-prod");
  const auto& s = p.services.at(0);
  CHECK(s.name == "db-eu");
  CHECK(s.cpu_millis == "2000");
  CHECK(s.memory_gbs == "0.5");
  CHECK(s.replica_count == 2);
  CHECK(s.environment_tag == "PROD");
  CHECK(s.region_code == "eu-west-1");
  CHECK(p.services.at(1).name == "2024");  // from the environment: text, even if it looks like a number
}

TEST_CASE("manifest: an unset ${VAR} is an error at its scalar naming the variable") {
  Diagnostics diags;
  load("version: 1\nprojects:\n  - id: ${PROJECT_ID}\n    services:\n      - name: x\n        cpu_millis: ${CPU}\n",
       diags);
  auto errors = errors_of(diags);
  REQUIRE(errors.size() == 2);
  CHECK(errors[0]->location.str() == "m.yaml:3:9");
  CHECK(errors[0]->field == "projects[0].id");
  CHECK(errors[0]->message ==
        "environment variable `DBFORM_VAR_PROJECT_ID` (read by `${PROJECT_ID}`) is not set (or is empty)");
  CHECK_THAT(errors[0]->hint, Catch::Contains("set DBFORM_VAR_PROJECT_ID"));
  CHECK(errors[1]->location.str() == "m.yaml:6:21");
  CHECK(errors[1]->field == "projects[0].services[0].cpu_millis");
  CHECK_THAT(errors[1]->message, Catch::Contains("`DBFORM_VAR_CPU`"));
}

TEST_CASE("manifest: an interpolated value is still validated") {
  auto e = only_error(kService + "        cpu_millis: ${CPU}\n", env_of({{"DBFORM_VAR_CPU", "-5"}}));
  CHECK(e.location.str() == "m.yaml:6:21");
  CHECK_THAT(e.message, Catch::Contains("found `-5` (after ${...} interpolation)"));
}

TEST_CASE("manifest: each kind of mistake is reported at its place with its field") {
  struct Case {
    std::string yaml, location, field, message, hint;
  };
  const std::vector<Case> cases = {
      {"version: 2\nprojects: []\n", "m.yaml:1:10", "version", "unsupported manifest version `2`", ""},
      {"projects: []\n", "m.yaml:1:1", "version", "the manifest needs `version`", ""},
      {"version: 1\n", "m.yaml:1:1", "projects", "the manifest needs `projects`", "(it may be empty: `projects: []`)"},
      {"version: 1\nprojects:\n  id: acme\n", "m.yaml:3:3", "projects", "expected a list of projects (lines starting with `- `), found a mapping", ""},
      {"version: 1\nprojects: []\nprojects: []\n", "m.yaml:3:1", "projects", "key `projects` appears twice",
       "first is at m.yaml:2:1"},
      {"version: 1\nprojects:\n  - id: a/b\n", "m.yaml:3:9", "projects[0].id", "found the text `a/b`",
       "'/', '.' and spaces"},
      {"version: 1\nprojects:\n  - id: \"\"\n", "m.yaml:3:9", "projects[0].id", "found an empty text", ""},
      {"version: 1\nprojects:\n  - id: " + std::string(129, 'x') + "\n", "m.yaml:3:9", "projects[0].id",
       "found a text of 129 characters", ""},
      {"version: 1\nprojects:\n  - services: []\n", "m.yaml:3:5", "projects[0].id", "a project needs `id`", ""},
      {kService + "        replica_count: two\n", "m.yaml:6:24", "projects[0].services[0].replica_count",
       "expected a whole number of replicas, 0 or more, found the text `two`", ""},
      {kService + "        replica_count: -1\n", "m.yaml:6:24", "projects[0].services[0].replica_count",
       "found the integer `-1`", ""},
      {kService + "        replica_count: \"1\"\n", "m.yaml:6:24", "projects[0].services[0].replica_count",
       "found the text `1`", "without quotes"},
      {kService + "        cpu_millis: -5\n", "m.yaml:6:21", "projects[0].services[0].cpu_millis",
       "expected a positive whole number of milli-cores (like 1000) or \"shared\", found the integer `-5`", ""},
      {kService + "        cpu_millis: 1.5\n", "m.yaml:6:21", "projects[0].services[0].cpu_millis",
       "found the number `1.5`", ""},
      {kService + "        cpu_millis: SHARED\n", "m.yaml:6:21", "projects[0].services[0].cpu_millis",
       "found the text `SHARED`", "did you mean `shared`?"},
      {kService + "        memory_gbs: 0\n", "m.yaml:6:21", "projects[0].services[0].memory_gbs",
       "expected a positive number of gigabytes", ""},
      {kService + "        memory_gbs: true\n", "m.yaml:6:21", "projects[0].services[0].memory_gbs",
       "found the boolean `true`", ""},
      {kService + "        environment_tag: prod\n", "m.yaml:6:26", "projects[0].services[0].environment_tag",
       "expected DEV or PROD, found the text `prod`", "did you mean `PROD`? tags are upper-case"},
      {kService + "        region_code:\n", "m.yaml:6:9", "projects[0].services[0].region_code",
       "found an empty value", ""},
      {kService + "        region_code: ~\n", "m.yaml:6:9", "projects[0].services[0].region_code",
       "found an empty value", ""},
      {kService + "        region_code: 42\n", "m.yaml:6:22", "projects[0].services[0].region_code",
       "found the integer `42`", "quote it"},
      {kService + "        region_code: US East 1\n", "m.yaml:6:22", "projects[0].services[0].region_code",
       "found the text `US East 1`", "did you mean `us-east-1`?"},
      {kService + "        region_code: [us-east-1]\n", "m.yaml:6:22", "projects[0].services[0].region_code",
       "found a list", ""},
      {kService + "        addons: [timeseries]\n", "m.yaml:6:18", "projects[0].services[0].addons[0]",
       "unknown addon `timeseries`", "did you mean `time-series`?"},
      {kService + "        addons: [ai, ai]\n", "m.yaml:6:22", "projects[0].services[0].addons[1]",
       "addon `ai` is listed twice", ""},
      {kService + "        addons: ai\n", "m.yaml:6:17", "projects[0].services[0].addons",
       "expected a list of addons", ""},
      {kService + "        name: again\n", "m.yaml:6:9", "projects[0].services[0].name",
       "key `name` appears twice in a service", "m.yaml:5:9"},
      {kService + "        size: big\n", "m.yaml:6:9", "projects[0].services[0].size", "unknown key `size` in a service",
       "expected one of: name, addons, cpu_millis"},
      {"version: 1\nprojects:\n  - id: a\n    vpcs:\n      - name: v\n        cidr: 10.0.0.300/16\n"
       "        region_code: us-east-1\n",
       "m.yaml:6:15", "projects[0].vpcs[0].cidr", "`10.0.0.300` is not an IPv4 address", ""},
      {"version: 1\nprojects:\n  - id: a\n    vpcs:\n      - name: v\n        cidr: 10.0.0.0/16\n",
       "m.yaml:5:9", "projects[0].vpcs[0].region_code", "a VPC needs `region_code`", ""},
      {"version: 1\nprojects:\n  - id: a\n    services:\n      - !custom x\n", "m.yaml:5:9", "projects[0].services[0]",
       "expected a mapping (KEY: VALUE lines) describing a service, found the text `x`", ""},
      {"version: 1\nprojects:\n  - id: a\n    services:\n      - name: !!int 5\n", "m.yaml:5:15",
       "projects[0].services[0].name", "unsupported YAML tag `tag:yaml.org,2002:int`", ""},
      {"- version: 1\n", "m.yaml:1:1", "", "expected a mapping (KEY: VALUE lines) describing the manifest, found a list",
       ""},
      {"", "m.yaml", "", "the manifest is empty", ""},
      {"# only a comment\n", "m.yaml", "", "the manifest is empty", ""},
      {"version: 1\nprojects: [\n", "m.yaml:3:1", "", "YAML syntax error: end of sequence flow not found", ""},
      {"version: 1\n  projects: []\n", "m.yaml:2:11", "", "YAML syntax error: illegal map value", ""},
      {"version: 1\nprojects: []\n---\nversion: 1\n", "m.yaml:4:1", "", "one YAML document, this one has 2",
       "a file of its own"},
  };
  for (const auto& c : cases) {
    INFO("manifest:\n" << c.yaml);
    auto e = only_error(c.yaml);
    CHECK(e.location.str() == c.location);
    CHECK(e.field == c.field);
    CHECK_THAT(e.message, Catch::Contains(c.message));
    CHECK_THAT(e.hint, Catch::Contains(c.hint));
  }
}

TEST_CASE("manifest: an unknown key suggests the closest known key") {
  auto e = only_error(kService + "        regoin_code: us-east-1\n");
  CHECK(e.str() ==
        "m.yaml:6:9: error: projects[0].services[0].regoin_code: unknown key `regoin_code` in a service "
        "(did you mean `region_code`?)");
  e = only_error("version: 1\nprojetcs: []\nprojects: []\n");
  CHECK(e.hint == "did you mean `projects`?");
  e = only_error("version: 1\nprojects:\n  - id: a\n    vpcs:\n      - name: v\n        cidr_block: 10.0.0.0/16\n"
                 "        cidr: 10.0.0.0/16\n        region_code: us-east-1\n");
  CHECK(e.hint == "did you mean `cidr`?");
  CHECK(only_error(kService + "        region: us-east-1\n").hint == "did you mean `region_code`?");
  CHECK(only_error(kService + "        replicas: 2\n").hint == "did you mean `replica_count`?");
  CHECK(only_error(kService + "        memory: 4\n").hint == "did you mean `memory_gbs`?");
  CHECK(only_error(kService + "        colour: blue\n").hint ==
        "expected one of: name, addons, cpu_millis, memory_gbs, environment_tag, region_code, replica_count, "
                "sync_replica_count, vpc, connection_pooler, deletion_protection, paused, renamed_from, import_id, policy_waivers, "
              "fork, read_replicas, roles, schemas, extensions, grants");
}

TEST_CASE("manifest: an api_key_env that is not a variable name is never echoed") {
  auto e = only_error("version: 1\nprojects:\n  - id: a\n    api_key_env: \"public:s3cr3t-value\"\n");
  CHECK(e.location.str() == "m.yaml:4:18");
  CHECK(e.field == "projects[0].api_key_env");
  CHECK(e.str().find("s3cr3t") == std::string::npos);
}

TEST_CASE("manifest: api_key_env names only a DBFORM_ variable, and none of dbform's settings") {
  auto e = only_error("version: 1\nprojects:\n  - id: a\n    api_key_env: GITHUB_TOKEN\n");
  CHECK(e.location.str() == "m.yaml:4:18");
  CHECK(e.field == "projects[0].api_key_env");
  CHECK_THAT(e.message, Catch::Contains("`GITHUB_TOKEN`, which does not begin with DBFORM_"));
  CHECK_THAT(e.hint, Catch::Contains("rename the variable to DBFORM_GITHUB_TOKEN"));
  // Not a conventional name: it might be a key pasted here, so it is not shown.
  auto pasted = only_error("version: 1\nprojects:\n  - id: a\n    api_key_env: ghp_abcdef123456\n");
  CHECK(pasted.str().find("abcdef") == std::string::npos);
  auto setting = only_error("version: 1\nprojects:\n  - id: a\n    api_key_env: DBFORM_STATE_PASSPHRASE\n");
  CHECK_THAT(setting.message, Catch::Contains("one of dbform's own settings"));
  Diagnostics diags;
  Manifest m = load("version: 1\nprojects:\n  - id: a\n    api_key_env: DBFORM_TEAM_KEY\n", diags);
  CHECK_FALSE(diags.has_errors());
  CHECK(m.projects.at(0).api_key_env == "DBFORM_TEAM_KEY");
}

TEST_CASE("manifest: an error never shows a secret's value, even through a DBFORM_VAR_ variable") {
  const std::string key = "sk-live-0123456789abcdef";
  // The same value as the API key: the error about it is replaced, whatever its reader would say.
  for (const char* field : {"cpu_millis: ${X}", "region_code: ${X}", "environment_tag: ${X}",
                                   "memory_gbs: ${X}", "addons: [\"${X}\"]", "vpc: ${X}"}) {
    Diagnostics diags;
    load(kService + "        " + std::string(field) + "\n", diags,
         env_of({{"DBFORM_API_KEY", key}, {"DBFORM_VAR_X", "Sk_Live " + key}}));
    INFO(field << "\n" << diags.str());
    CHECK(diags.has_errors());
    CHECK(diags.str().find("live") == std::string::npos);
    CHECK(diags.str().find("Live") == std::string::npos);
  }
  // A secret that is a valid name is refused and, quoted by another check, masked.
  Diagnostics diags;
  load("version: 1\nprojects:\n  - id: p\n    api_key_env: DBFORM_TEAM_KEY\n    services:\n      - name: ${X}\n"
       "      - name: ${X}\n",
       diags, env_of({{"DBFORM_TEAM_KEY", key}, {"DBFORM_VAR_X", key}}));
  INFO(diags.str());
  CHECK(diags.str().find(key) == std::string::npos);
  CHECK_THAT(diags.str(), Catch::Contains("DBFORM_VAR_X (read by ${X}) holds the same value as DBFORM_TEAM_KEY"));
  // A DBFORM_VAR_ value that is no secret is shown: it is the pipeline's input, and helps the fix.
  auto shown = only_error(kService + "        cpu_millis: ${X}\n", env_of({{"DBFORM_VAR_X", "lots"}}));
  CHECK_THAT(shown.message, Catch::Contains("found `lots` (after ${...} interpolation)"));
}

TEST_CASE("manifest: every mistake of a manifest is reported in one pass") {
  Diagnostics diags;
  load(R"(version: 1
projects:
  - id: acme
    services:
      - name: orders
        cpu_millis: -5
      - name: billing
        environment_tag: prod
    vpcs:
      - name: main
        cidr: 10.0.0.0/33
        region_code: us-east-1
)",
       diags);
  auto errors = errors_of(diags);
  REQUIRE(errors.size() == 3);
  CHECK(errors[0]->location.str() == "m.yaml:11:15");  // VPCs are read first
  CHECK(errors[1]->location.str() == "m.yaml:6:21");
  CHECK(errors[2]->location.str() == "m.yaml:8:26");
}

TEST_CASE("manifest: a CIDR with host bits set is a warning, not an error") {
  Diagnostics diags;
  Manifest m = load("version: 1\nprojects:\n  - id: a\n    vpcs:\n      - name: v\n        cidr: 10.0.0.1/16\n"
                    "        region_code: us-east-1\n",
                    diags);
  CHECK_FALSE(diags.has_errors());
  REQUIRE(diags.items().size() == 1);
  CHECK(diags.items()[0].severity == Severity::Warning);
  CHECK(diags.items()[0].hint == "did you mean `10.0.0.0/16`?");
  CHECK(m.projects.at(0).vpcs.at(0).cidr == "10.0.0.1/16");
}

TEST_CASE("manifest: IPv6 VPC CIDRs are accepted") {
  Diagnostics diags;
  Manifest m = load("version: 1\nprojects:\n  - id: a\n    vpcs:\n      - name: v6\n        cidr: fd00:10::/48\n"
                    "        region_code: us-east-1\n",
                    diags);
  INFO(diags.str());
  CHECK(diags.items().empty());
  CHECK(m.projects.at(0).vpcs.at(0).cidr == "fd00:10::/48");
}

TEST_CASE("manifest: the same resource twice in one file names both places") {
  auto e = only_error(kService + "      - name: orders\n        cpu_millis: 1000\n");
  CHECK(e.location.str() == "m.yaml:6:9");
  CHECK(e.field == "acme/services/orders");
  CHECK_THAT(e.message, Catch::Contains("service `orders` of project `acme` is declared twice: here and at m.yaml:5:9"));
}

TEST_CASE("manifest: a directory loads its yaml files sorted, projects merge across files") {
  TempDir dir;
  dir.write("b.yml", "version: 1\nprojects:\n  - id: acme\n    services:\n      - name: billing\n");
  dir.write("a.yaml",
            "version: 1\nprojects:\n  - id: acme\n    api_key_env: DBFORM_ACME_KEY\n    services:\n      - name: orders\n"
            "  - id: other\n");
  dir.write("c.yaml", "version: 1\nprojects:\n  - id: acme\n    vpcs:\n      - name: main\n        cidr: 10.0.0.0/16\n"
                      "        region_code: us-east-1\n");
  dir.write("notes.txt", "not a manifest");
  dir.write("sub/d.yaml", "this: is not read");
  Diagnostics diags;
  Manifest m = load_manifests({dir.path()}, env_of({}), diags);
  INFO(diags.str());
  REQUIRE(diags.items().empty());
  REQUIRE(m.files.size() == 3);
  CHECK(m.files[0] == dir.path() + "/a.yaml");
  CHECK(m.files[1] == dir.path() + "/b.yml");
  CHECK(m.files[2] == dir.path() + "/c.yaml");
  REQUIRE(m.projects.size() == 2);
  const auto& acme = m.projects[0];
  CHECK(acme.id == "acme");
  CHECK(acme.api_key_env == "DBFORM_ACME_KEY");
  CHECK(acme.location.str() == dir.path() + "/a.yaml:3:5");
  REQUIRE(acme.services.size() == 2);
  CHECK(acme.services[0].name == "orders");
  CHECK(acme.services[1].name == "billing");
  CHECK(acme.services[1].location.file == dir.path() + "/b.yml");
  REQUIRE(acme.vpcs.size() == 1);
  CHECK(m.projects[1].id == "other");
}

TEST_CASE("manifest: the same resource in two files is an error naming both places") {
  TempDir dir;
  auto a = dir.write("a.yaml", kService);
  auto b = dir.write("b.yaml", "version: 1\nprojects:\n  - id: other\n  - id: acme\n    services:\n      - name: orders\n");
  Diagnostics diags;
  load_manifests({a, b}, env_of({}), diags);
  auto errors = errors_of(diags);
  REQUIRE(errors.size() == 1);
  CHECK(errors[0]->location.str() == b + ":6:9");
  CHECK_THAT(errors[0]->message, Catch::Contains("here and at " + a + ":5:9"));
}

TEST_CASE("manifest: different api_key_env for one project is an error") {
  TempDir dir;
  auto a = dir.write("a.yaml", "version: 1\nprojects:\n  - id: acme\n    api_key_env: DBFORM_KEY_ONE\n");
  auto b = dir.write("b.yaml", "version: 1\nprojects:\n  - id: acme\n    api_key_env: DBFORM_KEY_TWO\n");
  Diagnostics diags;
  load_manifests({a, b}, env_of({}), diags);
  auto errors = errors_of(diags);
  REQUIRE(errors.size() == 1);
  CHECK(errors[0]->location.str() == b + ":3:5");
  CHECK_THAT(errors[0]->message, Catch::Contains("`DBFORM_KEY_TWO` here but `DBFORM_KEY_ONE` at " + a + ":3:5"));
}

TEST_CASE("manifest: wait_connectable merges across files, and two different values are an error") {
  TempDir dir;
  auto on = dir.write("on.yaml", "version: 1\nprojects:\n  - id: acme\n    wait_connectable: true\n");
  auto quiet = dir.write("quiet.yaml", "version: 1\nprojects:\n  - id: acme\n");
  auto off = dir.write("off.yaml", "version: 1\nprojects:\n  - id: acme\n    wait_connectable: false\n");
  {
    Diagnostics diags;
    Manifest m = load_manifests({quiet, on}, env_of({}), diags);
    CHECK(errors_of(diags).empty());
    REQUIRE(m.projects.size() == 1);
    CHECK(m.projects[0].wait_connectable == true);
  }
  Diagnostics diags;
  load_manifests({on, off}, env_of({}), diags);
  auto errors = errors_of(diags);
  REQUIRE(errors.size() == 1);
  CHECK(errors[0]->location.str() == off + ":3:5");
  CHECK(errors[0]->field == "wait_connectable");
  CHECK_THAT(errors[0]->message, Catch::Contains("wait_connectable: false here but true at " + on + ":3:5"));
}

TEST_CASE("manifest: errors of all files are collected, with unreadable paths located") {
  TempDir dir;
  auto bad1 = dir.write("one.yaml", "version: 2\nprojects: []\n");
  auto bad2 = dir.write("two.yaml", "version: 1\nprojects: [\n");
  auto empty_dir = dir.path() + "/empty";
  fs::create_directories(empty_dir);
  auto missing = dir.path() + "/missing.yaml";
  Diagnostics diags;
  load_manifests({bad1, missing, bad2, empty_dir}, env_of({}), diags);
  auto errors = errors_of(diags);
  REQUIRE(errors.size() == 4);
  CHECK(errors[0]->location.str() == bad1 + ":1:10");
  CHECK(errors[1]->location.str() == missing);
  CHECK(errors[1]->message == "cannot read this manifest: no such file or directory");
  CHECK(errors[2]->location.file == bad2);
  CHECK_THAT(errors[2]->message, Catch::Contains("YAML syntax error"));
  CHECK(errors[3]->location.str() == empty_dir);
  CHECK_THAT(errors[3]->message, Catch::Contains("no *.yaml or *.yml files"));

  Diagnostics none;
  load_manifests({}, env_of({}), none);
  CHECK(none.has_errors());
}

TEST_CASE("manifest: an entry of a directory that cannot be read is an error naming it, never skipped") {
  TempDir dir;
  dir.write("a.yaml", kService);
  fs::create_symlink(dir.path() + "/gone.yaml", dir.path() + "/b.yaml");  // its target was deleted
  REQUIRE(::mkfifo((dir.path() + "/c.yml").c_str(), 0600) == 0);          // opening it must not block
  fs::create_directories(dir.path() + "/d.yaml");
  dir.write("notes.txt", "not a manifest");  // other names are not manifests: ignored as before
  Diagnostics diags;
  load_manifests({dir.path()}, env_of({}), diags);
  auto errors = errors_of(diags);
  REQUIRE(errors.size() == 3);
  CHECK(errors[0]->location.str() == dir.path() + "/b.yaml");
  CHECK_THAT(errors[0]->message, Catch::Contains("cannot read this manifest: a symbolic link to " + dir.path() +
                                                 "/gone.yaml, which cannot be read"));
  CHECK(errors[1]->location.str() == dir.path() + "/c.yml");
  CHECK_THAT(errors[1]->message, Catch::Contains("not a regular file"));
  CHECK(errors[2]->location.str() == dir.path() + "/d.yaml");
  CHECK_THAT(errors[2]->message, Catch::Contains("a directory"));

  // A link to a readable manifest is read through.
  fs::remove(dir.path() + "/b.yaml");
  fs::remove(dir.path() + "/c.yml");
  fs::remove(dir.path() + "/d.yaml");
  dir.write("target", "version: 1\nprojects:\n  - id: acme\n    services:\n      - name: billing\n");
  fs::create_symlink(dir.path() + "/target", dir.path() + "/b.yaml");
  Diagnostics linked;
  Manifest m = load_manifests({dir.path()}, env_of({}), linked);
  INFO(linked.str());
  CHECK_FALSE(linked.has_errors());
  CHECK(m.files.size() == 2);
}

TEST_CASE("manifest: -f naming a dangling link or a FIFO is an error, and a FIFO is never opened for reading") {
  TempDir dir;
  fs::create_symlink(dir.path() + "/gone.yaml", dir.path() + "/link.yaml");
  REQUIRE(::mkfifo((dir.path() + "/pipe.yaml").c_str(), 0600) == 0);
  Diagnostics diags;
  load_manifests({dir.path() + "/link.yaml", dir.path() + "/pipe.yaml"}, env_of({}), diags);
  auto errors = errors_of(diags);
  REQUIRE(errors.size() == 2);
  CHECK_THAT(errors[0]->message, Catch::Contains("a symbolic link to"));
  CHECK_THAT(errors[1]->message, Catch::Contains("not a regular file"));
}

TEST_CASE("manifest: a file named twice is read once") {
  TempDir dir;
  auto a = dir.write("a.yaml", kService);
  Diagnostics diags;
  Manifest m = load_manifests({dir.path(), a}, env_of({}), diags);
  INFO(diags.str());
  CHECK_FALSE(diags.has_errors());
  CHECK(m.files.size() == 1);
}

TEST_CASE("manifest: the digest follows the files' names and contents") {
  TempDir dir;
  auto a = dir.write("a.yaml", kService);
  Diagnostics diags;
  auto first = load_manifests({a}, env_of({}), diags).digest;
  CHECK(load_manifests({a}, env_of({}), diags).digest == first);
  dir.write("a.yaml", kService + "        cpu_millis: 1000\n");
  auto changed = load_manifests({a}, env_of({}), diags).digest;
  CHECK(changed != first);
  CHECK(load_manifest_text("a.yaml", kService, env_of({}), diags).digest !=
        load_manifest_text("b.yaml", kService, env_of({}), diags).digest);
  CHECK_FALSE(diags.has_errors());
}

// How fast is bench/plan_bench.py's business; this is what a large manifest must hold.
TEST_CASE("manifest: ten thousand services in one file load, each in its project") {
  std::string text = "version: 1\nprojects:\n";
  for (int p = 0; p < 100; ++p) {
    text += "  - id: project-" + std::to_string(p) + "\n    services:\n";
    for (int s = 0; s < 100; ++s)
      text += "      - name: service-" + std::to_string(s) + "\n        cpu_millis: 1000\n        memory_gbs: 4\n";
  }
  Diagnostics diags;
  Manifest m = load(text, diags);
  CHECK_FALSE(diags.has_errors());
  REQUIRE(m.projects.size() == 100);
  CHECK(m.projects[99].id == "project-99");
  REQUIRE(m.projects[99].services.size() == 100);
  CHECK(m.projects[99].services[99].name == "service-99");
}

TEST_CASE("manifest: files parsed side by side report and merge as if read one after another") {
  TempDir dir;
  std::vector<std::string> expected_errors;
  for (int i = 0; i < 40; ++i) {
    char name[32];
    std::snprintf(name, sizeof name, "f%02d.yaml", i);
    // Every file adds a service to one shared project; every third one has a mistake.
    const std::string cpu = i % 3 == 0 ? "lots" : "1000";
    const std::string path = dir.write(name, "version: 1\nprojects:\n  - id: shared\n    services:\n      - name: s" +
                                                  std::to_string(i) + "\n        cpu_millis: " + cpu + "\n");
    if (i % 3 == 0) expected_errors.push_back(path);
  }
  Diagnostics diags;
  Manifest m = load_manifests({dir.path()}, env_of({}), diags);
  std::vector<std::string> error_files;
  for (const auto* e : errors_of(diags)) error_files.push_back(e->location.file);
  CHECK(error_files == expected_errors);
  REQUIRE(m.projects.size() == 1);
  REQUIRE(m.projects[0].services.size() == 40);
  for (int i = 0; i < 40; ++i) CHECK(m.projects[0].services[i].name == "s" + std::to_string(i));
  CHECK(m.files.size() == 40);
}

// tests/manifests: every invalid file holds exactly one mistake, declared on its first line as
// `# expect: LINE:COL FIELD`; every valid file loads without a diagnostic.
TEST_CASE("manifest: the corpus gives one located error per invalid file, none for valid ones") {
  const fs::path corpus = fs::path(DBFORM_SOURCE_DIR) / "tests" / "manifests";
  int invalid_files = 0;
  for (const auto& entry : fs::directory_iterator(corpus / "invalid")) {
    const std::string file = entry.path().string();
    std::ifstream in(file);
    std::string first_line;
    std::getline(in, first_line);
    std::istringstream expect(first_line);
    std::string marker, line_col, field;
    expect >> marker >> marker >> line_col >> field;
    INFO(file);
    REQUIRE(first_line.rfind("# expect: ", 0) == 0);
    Diagnostics diags;
    load_manifests({file}, env_of({}), diags);
    INFO(diags.str());
    auto errors = errors_of(diags);
    REQUIRE(errors.size() == 1);
    CHECK(errors[0]->location.str() == file + ":" + line_col);
    CHECK(errors[0]->field == field);
    ++invalid_files;
  }
  CHECK(invalid_files >= 25);
  int valid_files = 0;
  for (const auto& entry : fs::directory_iterator(corpus / "valid")) {
    INFO(entry.path().string());
    Diagnostics diags;
    load_manifests({entry.path().string()}, env_of({}), diags);
    INFO(diags.str());
    CHECK(diags.items().empty());
    ++valid_files;
  }
  CHECK(valid_files >= 5);
}

TEST_CASE("manifest: aliases that expand past the cap, and input yaml-cpp would parse forever, are one error each") {
  std::string laughs = "version: 1\na0: &a0 [x, x, x, x, x, x, x, x, x, x]\n";
  for (int i = 1; i < 9; ++i) {
    laughs += "a" + std::to_string(i) + ": &a" + std::to_string(i) + " [";
    for (int j = 0; j < 10; ++j) laughs += (j ? ", *a" : "*a") + std::to_string(i - 1);
    laughs += "]\n";
  }
  laughs += "projects: []\n";
  CHECK_THAT(only_error(laughs).message, Catch::Contains("with its aliases expanded"));
  // Found by fuzz_manifest: yaml-cpp 0.7 emits events without end for this input.
  CHECK_THAT(only_error(", expe:\n      - na,me: main\n        n_code: us-east-0\n").message,
             Catch::Contains("could not make sense of this file"));
  // A few anchors, well within the caps, are fine.
  Diagnostics diags;
  load("version: 1\nprojects:\n  - id: p1\n    services:\n      - &s {name: a, cpu_millis: 1000, memory_gbs: 4}\n", diags);
  CHECK_FALSE(diags.has_errors());
}

TEST_CASE("parse_address reads the addresses resource_address makes, and nothing else") {
  for (const auto& [project, kind, name, parent] :
       std::vector<std::tuple<std::string, ResourceKind, std::string, std::string>>{
           {"acme", ResourceKind::Service, "orders", ""},
           {"acme", ResourceKind::Vpc, "main", ""},
           {"acme", ResourceKind::ReplicaSet, "reporting", "orders"},
           {"acme", ResourceKind::Peering, "vpc-0abc", "main"}}) {
    const auto parts = parse_address(resource_address(project, kind, name, parent));
    REQUIRE(parts);
    CHECK(parts->project_id == project);
    CHECK(parts->kind == kind);
    CHECK(parts->name == name);
    CHECK(parts->parent == parent);
  }
  for (const char* text : {"acme/services", "acme/services/orders/replicas", "acme/vpcs/main/replicas/x",
                           "acme/services/orders/peerings/x", "acme/replicas/x", "acme/services/", "/services/x",
                           "acme/services/a b", "acme/services/orders/replicas/r/extra"})
    CHECK_FALSE(parse_address(text));
}

TEST_CASE("YAML syntax errors name the tab or the unquoted ${VAR} in brackets that caused them") {
  const EnvLookup env = [](const std::string& name) -> std::optional<std::string> {
    return name == "ADDON" ? std::optional<std::string>("time-series") : std::nullopt;
  };
  for (const auto& [text, says] : std::vector<std::pair<std::string, std::string>>{
           {"version: 1\nprojects:\n\t- id: acme\n", "indented with a tab, which YAML does not allow"},
           {"version: 1\nprojects:\n  - id: acme\n    services:\n      - name: a\n\t        cpu_millis: 1000\n",
            "indented with a tab"},
           {"version: 1\nprojects:\n  - id: acme\n    services:\n      - name: a\n        addons: [${ADDON}]\n",
            "a `${VAR}` inside [ ] or { } must be quoted"},
           {"version: 1\nprojects: [\n", "check the indentation and brackets"}}) {
    Diagnostics diags;
    load_manifest_text("m.yaml", text, env, diags);
    INFO(text);
    CHECK(diags.has_errors());
    CHECK(diags.str().find(says) != std::string::npos);
  }
}
