#pragma once
// What the e2e tests of previews (docs/previews.md) share: the manifest with a `previews:` block, the
// `preview` runs, and the checks of a fork.
#include <signal.h>

#include "service_helpers.h"

namespace e2e {

// A second project with its own key: previews in two projects.
inline const std::string kDev = "acme-dev";
inline const std::string kDevKey = "e2e-key-acme-dev-0123456789";

inline dbform::SimConfig two_keys() {
  dbform::SimConfig config = default_sim_config();
  config.keys.push_back({kDevKey, kDev, "dev"});
  return config;
}

inline std::string preview_address(const std::string& name, const std::string& service) {
  return kProject + "/previews/" + name + "/services/" + service;
}

// orders (PROD, protected), billing and analytics; a `previews:` block forking `services`.
inline std::string preview_manifest(const std::string& services = "[orders, billing]", const std::string& ttl = "72h",
                                    int max = 3, const std::string& more = "", const std::string& extra_services = "") {
  std::string orders = service_yaml("orders") + "        environment_tag: PROD\n        deletion_protection: true\n";
  std::string m = manifest({}, {orders, service_yaml("billing"), service_yaml("analytics") + extra_services});
  return m + "    previews:\n      services: " + services + "\n      strategy: NOW\n      ttl: " + ttl +
         "\n      max: " + std::to_string(max) + "\n" + more;
}

inline RunResult preview(Sandbox& sb, std::vector<std::string> args, const std::map<std::string, std::string>& extra = {}) {
  if (args.front() != "list") args.insert(args.end(), {"--poll-interval", "100ms"});
  args.insert(args.begin(), "preview");
  return sb.run(args, extra);
}

inline RunResult applied(Sandbox& sb, const std::string& text) {
  sb.write("dbform.yaml", text);
  RunResult r = sb.apply();
  INFO(r.describe());
  REQUIRE(r.exit_code == 0);
  return r;
}

// The calls since `before`, route -> how many more.
inline json calls_since(const json& before, const json& now) {
  json out = json::object();
  for (const auto& [route, n] : now.items()) {
    const long long was = before.contains(route) ? before[route].get<long long>() : 0;
    if (n.get<long long>() != was) out[route] = n.get<long long>() - was;
  }
  return out;
}

inline long long named(Sandbox& sb, const std::string& name) {
  long long n = 0;
  for (const auto& s : sb.sim().all_services())
    if (s["name"] == name) ++n;
  return n;
}

// The fork's record is READY with the password the database has, which is not its source's.
inline void check_fork(Sandbox& sb, const std::string& name, const std::string& service) {
  INFO(name << " " << service);
  json state = sb.state();
  json rec = find_resource(state, preview_address(name, service));
  REQUIRE(rec.is_object());
  CHECK(rec["name"] == service + "-" + name);
  CHECK(rec["status"] == "READY");
  CHECK(rec["settings"]["preview"]["password_rotated"] == true);
  CHECK(!rec.contains("pending_password"));
  CHECK(rec["initial_password"] == sb.sim().current_password(rec["id"]));
  json source = find_resource(state, service_address(service));
  CHECK(rec["initial_password"] != source["initial_password"]);
  CHECK(named(sb, service + "-" + name) == 1);
}


// `dbform preview ARGS...` killed with SIGKILL once the first fork was sent (and performed).
inline void killed_once_forked(Sandbox& sb, const std::vector<std::string>& args) {
  HeldAnswer held(sb, 1, [](const dbform::SimRequest& r) { return r.method == "POST" && contains(r.path, "/forkService"); });
  std::vector<std::string> all = {"preview"};
  all.insert(all.end(), args.begin(), args.end());
  all.insert(all.end(), {"--poll-interval", "100ms"});
  auto run = sb.start(all);
  REQUIRE(held.wait());
  run->signal(SIGKILL);
  CHECK(run->wait().exit_code == 128 + SIGKILL);
  held.release();
}

}  // namespace e2e
