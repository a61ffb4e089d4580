// The `previews:` block of a project (docs/manifest.md, docs/previews.md): read, validated with located errors,
// merged across files.
#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>

#include "manifest/loader.h"

using namespace dbform;

namespace {

EnvLookup no_env() {
  return [](const std::string&) -> std::optional<std::string> { return std::nullopt; };
}

const std::string kProject =
    "version: 1\nprojects:\n  - id: acme\n    services:\n      - name: orders\n      - name: billing\n";

std::vector<Diagnostic> preview_errors_of(const std::string& text) {
  Diagnostics diags;
  load_manifest_text("m.yaml", text, no_env(), diags);
  std::vector<Diagnostic> out;
  for (const auto& d : diags.items())
    if (d.severity == Severity::Error) out.push_back(d);
  return out;
}

}  // namespace

TEST_CASE("manifest: a previews: block is read with its defaults") {
  Diagnostics diags;
  const Manifest m = load_manifest_text(
      "m.yaml", kProject + "    previews:\n      services: [orders, billing]\n      ttl: 1h30m\n      max: 4\n      cpu_millis: 500\n      memory_gbs: 2\n",
      no_env(), diags);
  INFO(diags.str());
  REQUIRE(!diags.has_errors());
  REQUIRE(m.projects[0].previews);
  const DesiredPreviews& p = *m.projects[0].previews;
  CHECK(p.services == std::vector<std::string>{"orders", "billing"});
  CHECK(p.strategy == "LAST_SNAPSHOT");
  CHECK(p.ttl == "1h30m");
  CHECK(p.ttl_ms == 90 * 60 * 1000);
  CHECK(p.max == 4);
  CHECK(p.cpu_millis == "500");
  CHECK(p.memory_gbs == "2");
  CHECK(p.path == "projects[0].previews");
}

TEST_CASE("manifest: a preview of a service the project does not declare is an error at its item - with a suggestion") {
  auto errors = preview_errors_of(kProject + "    previews:\n      services: [orders, biling]\n      ttl: 72h\n      max: 2\n");
  REQUIRE(errors.size() == 1);
  CHECK(errors[0].location.line == 8);
  CHECK(errors[0].field == "projects[0].previews.services[1]");
  CHECK(errors[0].message == "`biling` is not a service of project `acme`: a preview forks services the project declares");
  CHECK(errors[0].hint == "did you mean `billing`?");
}

TEST_CASE("manifest: previews: ttl needs a unit - max at least 1 - strategy LAST_SNAPSHOT or NOW - no service twice") {
  CHECK(preview_errors_of(kProject + "    previews:\n      services: [orders]\n      ttl: 3 days\n      max: 2\n").at(0).field ==
        "projects[0].previews.ttl");
  CHECK(preview_errors_of(kProject + "    previews:\n      services: [orders]\n      ttl: 72h\n      max: 0\n").at(0).field ==
        "projects[0].previews.max");
  CHECK(preview_errors_of(kProject + "    previews:\n      services: [orders]\n      strategy: PITR\n      ttl: 72h\n      max: 1\n")
            .at(0).message == "a preview forks with LAST_SNAPSHOT or NOW, not PITR");
  CHECK(preview_errors_of(kProject + "    previews:\n      services: [orders, orders]\n      ttl: 72h\n      max: 1\n").at(0).field ==
        "projects[0].previews.services[1]");
  CHECK(preview_errors_of(kProject + "    previews:\n      services: [orders]\n      ttl: 72h\n      max: 1\n      size: 2\n")
            .at(0).hint.find("expected one of") != std::string::npos);
}

TEST_CASE("manifest: a project's previews: block in two files is an error naming both places") {
  const auto dir = std::filesystem::temp_directory_path() / ("dbform-previews-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  const std::string block = "    previews:\n      services: [orders]\n      ttl: 72h\n      max: 1\n";
  std::ofstream(dir / "a.yaml") << kProject + block;
  std::ofstream(dir / "b.yaml") << "version: 1\nprojects:\n  - id: acme\n" + block;
  Diagnostics diags;
  load_manifests({dir.string()}, no_env(), diags);
  std::filesystem::remove_all(dir);
  INFO(diags.str());
  REQUIRE(diags.has_errors());
  CHECK(diags.str().find("has a `previews:` block here and at") != std::string::npos);
}

TEST_CASE("manifest: previews: migrations is a directory relative to the manifest file - an empty one is an error") {
  Diagnostics diags;
  const std::string block = "    previews:\n      services: [orders]\n      ttl: 72h\n      max: 2\n      migrations: ";
  const Manifest m = load_manifest_text("deploy/m.yaml", kProject + block + "db/migrations\n", no_env(), diags);
  INFO(diags.str());
  REQUIRE(!diags.has_errors());
  REQUIRE(m.projects[0].previews);
  CHECK(m.projects[0].previews->migrations == "deploy/db/migrations");
  CHECK(m.projects[0].previews->migrations_location.line == 11);
  const Manifest absolute = load_manifest_text("deploy/m.yaml", kProject + block + "/srv/sql\n", no_env(), diags);
  CHECK(absolute.projects[0].previews->migrations == "/srv/sql");
  auto errors = preview_errors_of(kProject + block + "''\n");
  REQUIRE(errors.size() == 1);
  CHECK(errors[0].field == "projects[0].previews.migrations");
  CHECK(errors[0].location.line == 11);
}
