#pragma once
// What several e2e test files share: the standard project (a VPC and three services) and checks.
#include <sys/stat.h>
#include <unistd.h>

#include <sstream>

#include <catch2/catch.hpp>

#include "harness.h"

namespace e2e {

// Sanitizer runtimes reserve terabytes of address space, need file descriptors of their own to read
// memory, and do not run under ptrace: the tests of resource limits and of kills injected by strace
// test the plain binary, and say so instead of running in sanitized builds (scripts/sanitize.sh).
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
inline constexpr bool kSanitized = true;
#else
inline constexpr bool kSanitized = false;
#endif

// The passphrase a test's sealed state is sealed with, as a run's environment gives it.
inline const std::map<std::string, std::string> kSealingKey = {{"DBFORM_STATE_PASSPHRASE", "correct horse battery staple"}};

inline const std::vector<std::string> kServices = {"orders", "billing", "analytics"};

// VPC `main` and the three services of kServices.
inline std::string base_manifest(const std::vector<std::string>& extra_services = {}) {
  std::vector<std::string> services;
  for (const auto& s : kServices) services.push_back(service_yaml(s));
  for (const auto& s : extra_services) services.push_back(service_yaml(s));
  return manifest({vpc_yaml("main")}, services);
}

// A service declared in another region than the base manifest's: a change that needs a replacement.
inline std::string moved_service_yaml(const std::string& name) {
  std::string yaml = service_yaml(name);
  return yaml.replace(yaml.find("us-east-1"), 9, "eu-west-1");
}

// What bash completes, through the binary's own completion script: `calls` is shell text calling
// `t WORD...` once per command line to complete (its last word the one being completed, '' for an
// empty one); each call's replies, space-separated, one entry per call.
inline std::vector<std::string> bash_completions(Sandbox& sb, const std::string& calls) {
  sb.write("dbform.bash", sb.run({"completion", "bash"}).out);
  sb.write("complete.sh",
           "PATH=\"$(dirname \"$DBFORM\"):$PATH\"; source ./dbform.bash\n"
           "t() { COMP_WORDS=(\"$@\"); COMP_CWORD=$((${#COMP_WORDS[@]} - 1)); COMPREPLY=(); _dbform; echo \"${COMPREPLY[*]}\"; }\n" +
               calls);
  RunResult r = sb.run_shell("bash ./complete.sh");
  INFO(r.describe());
  REQUIRE(r.exit_code == 0);
  std::istringstream lines(r.out);
  std::vector<std::string> got;
  for (std::string line; std::getline(lines, line);) got.push_back(line);
  return got;
}

// A service created in the console, outside dbform; its id.
inline std::string console_service(Sandbox& sb, const json& body) {
  dbform::SimResponse r = sb.sim().console_create(kProject, "services", body.dump());
  REQUIRE(r.status == 201);
  return json::parse(r.body)["service_id"];
}

// A state left by a run that died between recording its intent and hearing the create's answer.
inline std::string state_with_pending_intent(const std::string& name) {
  json record = {{"address", service_address(name)},
                 {"project_id", kProject},
                 {"kind", "service"},
                 {"name", name},
                 {"settings", {{"cpu_millis", "1000"}, {"memory_gbs", "4"}, {"region_code", "us-east-1"}}},
                 {"id", ""},
                 {"create_pending", true},
                 {"status", ""},
                 {"endpoint", nullptr},
                 {"pooler_endpoint", nullptr},
                 {"initial_password", ""},
                 {"created_at", "2026-01-01T00:00:00Z"},
                 {"updated_at", "2026-01-01T00:00:00Z"},
                 {"last_response", nullptr}};
  json state = {{"format", "dbform-state"},
                {"version", 1},
                {"lineage", "5b4f7c1e-0000-4000-8000-000000000003"},
                {"serial", 2},
                {"resources", json::array({record})}};
  return state.dump(2) + "\n";
}

// Writes the base manifest and applies it; the run must succeed.
inline RunResult apply_base(Sandbox& sb) {
  sb.write("dbform.yaml", base_manifest());
  RunResult r = sb.apply();
  INFO(r.describe());
  REQUIRE(r.exit_code == 0);
  return r;
}

// The calls of a request count that change something (everything but GET).
inline json writes_of(const json& counts) {
  json writes = json::object();
  for (const auto& [route, n] : counts.items())
    if (route.rfind("GET ", 0) != 0) writes[route] = n;
  return writes;
}

inline bool contains(const std::string& haystack, const std::string& needle) {
  return haystack.find(needle) != std::string::npos;
}

// A manifest written by `import --generate` records nothing: the plan with it imports each of
// `count` resources and changes nothing else, the apply records them without a write call, and the
// plan after that has nothing to do.
inline void apply_generated(Sandbox& sb, const std::string& file, size_t count) {
  const json writes = writes_of(sb.counts());
  const json before = sb.exists("dbform.state.json") ? sb.state() : json();
  RunResult plan = sb.run({"plan", "-f", file, "--detailed-exitcode"});
  INFO(plan.describe());
  CHECK(plan.exit_code == 2);
  CHECK(contains(plan.out, "Plan: " + std::to_string(count) + " to import, 0 to create, 0 to update"));
  CHECK((sb.exists("dbform.state.json") ? sb.state() : json()) == before);  // generate and plan recorded nothing
  RunResult applied = sb.apply({"-f", file});
  INFO(applied.describe());
  CHECK(applied.exit_code == 0);
  CHECK(contains(applied.out, std::to_string(count) + " imported"));
  CHECK(writes_of(sb.counts()) == writes);  // no call that changes anything
  RunResult clean = sb.run({"plan", "-f", file, "--detailed-exitcode"});
  INFO(clean.describe());
  CHECK(clean.exit_code == 0);
}

// Makes a directory refuse new files, and its files refuse changes (the state's journal is appended
// to in place), for as long as it lives. Root ignores permissions, so for root the directory and
// its files are made immutable (chattr +i), which binds root too.
class UnwritableDir {
 public:
  explicit UnwritableDir(fs::path dir) : dir_(std::move(dir)) {
    for (const auto& entry : fs::directory_iterator(dir_))  // the lock stays usable: the state is the subject
      if (entry.is_regular_file() && entry.path().extension() != ".lock") files_.push_back(entry.path());
    files_.push_back(dir_);
    for (const auto& path : files_) {
      if (::geteuid() == 0) REQUIRE(std::system(("chattr +i '" + path.string() + "'").c_str()) == 0);
      else REQUIRE(::chmod(path.c_str(), path == dir_ ? 0500 : 0400) == 0);
    }
  }
  ~UnwritableDir() { release(); }
  void release() {
    if (released_) return;
    released_ = true;
    for (const auto& path : files_) {
      if (::geteuid() == 0) (void)std::system(("chattr -i '" + path.string() + "'").c_str());
      else ::chmod(path.c_str(), path == dir_ ? 0700 : 0600);
    }
  }

 private:
  fs::path dir_;
  std::vector<fs::path> files_;
  bool released_ = false;
};

}  // namespace e2e
