#pragma once
// What the e2e tests of service changes share (updates, drift, pause, rename, fork, guards): the
// routes they count, the `orders` service with extra lines, and the checks after an apply.
#include <httplib.h>

#include "common.h"

namespace e2e {

inline const std::string kResize = "POST /projects/{project_id}/services/{service_id}/resize";
inline const std::string kSetHA = "POST /projects/{project_id}/services/{service_id}/setHA";
inline const std::string kStop = "POST /projects/{project_id}/services/{service_id}/stop";
inline const std::string kStart = "POST /projects/{project_id}/services/{service_id}/start";
inline const std::string kFork = "POST /projects/{project_id}/services/{service_id}/forkService";
inline const std::string kRenameService = "POST /projects/{project_id}/services/{service_id}/rename";
inline const std::string kRenameVpc = "POST /projects/{project_id}/vpcs/{vpc_id}/rename";
inline const std::string kSetEnvironment = "POST /projects/{project_id}/services/{service_id}/setEnvironment";
// The routes of read replica sets and of peerings.
inline const std::string kSets = "/projects/{project_id}/services/{service_id}/replicaSets";
inline const std::string kPostSet = "POST " + kSets;
inline const std::string kGetSets = "GET " + kSets;
inline const std::string kDeleteSet = "DELETE " + kSets + "/{replica_set_id}";
inline const std::string kResizeSet = "POST " + kSets + "/{replica_set_id}/resize";
inline const std::string kPoolerOn = "POST " + kSets + "/{replica_set_id}/enablePooler";
inline const std::string kSetEnvironmentOfSet = "POST " + kSets + "/{replica_set_id}/setEnvironment";
inline const std::string kPeerings = "/projects/{project_id}/vpcs/{vpc_id}/peerings";
inline const std::string kPostPeering = "POST " + kPeerings;
inline const std::string kGetPeerings = "GET " + kPeerings;
inline const std::string kDeletePeering = "DELETE " + kPeerings + "/{peering_id}";
inline const std::string kPeeringAddress = "acme-prod/vpcs/main/peerings/vpc-0abc";
inline const std::string kPaused = "        paused: true\n";

// A resource made through the API, outside dbform (POST PATH of the project, as the vendor's tools
// or Terraform's provider make it); its id.
inline std::string made_outside(Sandbox& sb, const std::string& path, const json& body) {
  httplib::Client client("127.0.0.1", sb.port());
  auto made = client.Post(("/public/api/v1/projects/" + kProject + path).c_str(),
                          httplib::Headers{{"Authorization", "Bearer " + kKey}}, body.dump(), "application/json");
  REQUIRE(made);
  REQUIRE(made->status / 100 == 2);
  return json::parse(made->body)["id"];
}

// One service of the standard project, with the given extra lines (8 spaces in).
inline std::string orders_yaml(const std::string& extra = "", int cpu = 1000, int memory = 4) {
  return service_yaml("orders", cpu, memory) + extra;
}

// The simulator's record of the service named `name`, or null.
inline json sim_service(Sandbox& sb, const std::string& name) {
  for (const auto& s : sb.sim().all_services())
    if (s["name"] == name) return s;
  return json();
}

// Writes `yaml` as the manifest and applies it; the run must succeed.
inline RunResult apply_ok(Sandbox& sb, const std::string& yaml, const std::vector<std::string>& extra = {}) {
  sb.write("dbform.yaml", yaml);
  RunResult r = sb.apply(extra);
  INFO(r.describe() << "\ncounts: " << sb.counts().dump());
  REQUIRE(r.exit_code == 0);
  return r;
}

// The next plan (with the flags `more`) has nothing to do.
inline void check_clean(Sandbox& sb, const std::vector<std::string>& more = {}) {
  std::vector<std::string> args = {"plan", "--detailed-exitcode"};
  args.insert(args.end(), more.begin(), more.end());
  RunResult plan = sb.run(args);
  INFO(plan.describe());
  CHECK(plan.exit_code == 0);
}

// The next plan has nothing to do, from the state alone and refreshed.
inline void check_clean_refreshed(Sandbox& sb) {
  for (const char* refresh : {"--detailed-exitcode", "--refresh"}) {
    RunResult plan = sb.run({"plan", "--detailed-exitcode", refresh});
    INFO(plan.describe());
    CHECK(plan.exit_code == 0);
  }
}

// A read replica set of `nodes` nodes, as an item of `read_replicas:`.
inline std::string replica_set(const std::string& name, int nodes = 2, const std::string& extra = "") {
  return "          - name: " + name + "\n            nodes: " + std::to_string(nodes) +
         "\n            cpu_millis: 1000\n            memory_gbs: 4\n" + extra;
}

// A service with the given read replica sets.
inline std::string service_with(const std::string& name, const std::vector<std::string>& sets,
                                const std::string& extra = "") {
  std::string yaml = service_yaml(name) + extra;
  if (sets.empty()) return yaml;
  yaml += "        read_replicas:\n";
  for (const auto& s : sets) yaml += s;
  return yaml;
}

// A read replica set of `nodes` nodes of the given size, as an item of `read_replicas:`.
inline std::string sized_replica_set(const std::string& name, int nodes, int cpu, int memory, const std::string& extra = "") {
  return "          - name: " + name + "\n            nodes: " + std::to_string(nodes) +
         "\n            cpu_millis: " + std::to_string(cpu) + "\n            memory_gbs: " + std::to_string(memory) + "\n" +
         extra;
}

// `read_replicas:` with the one-node set `reporting` of `cpu` millicores.
inline std::string reporting(int cpu = 1000) {
  return "        read_replicas:\n          - name: reporting\n            nodes: 1\n            cpu_millis: " +
         std::to_string(cpu) + "\n            memory_gbs: 4\n";
}

// A fork `orders-qa` of `orders` from its last snapshot.
inline std::string qa_fork() {
  return "      - name: orders-qa\n        fork:\n          from: orders\n          strategy: LAST_SNAPSHOT\n";
}

// A peering of VPC `vpc_id` in `account`, as an item of `peerings:`.
inline std::string peering(const std::string& vpc_id, const std::string& account = "123456789012",
                           const std::string& extra = "") {
  return "          - peer_account_id: \"" + account + "\"\n            peer_region_code: us-east-1\n" +
         "            peer_vpc_id: " + vpc_id + "\n" + extra;
}

// VPC `main` with the peerings given.
inline std::string main_with(const std::vector<std::string>& peerings) {
  std::string yaml = vpc_yaml("main");
  if (peerings.empty()) return yaml;
  yaml += "        peerings:\n";
  for (const auto& p : peerings) yaml += p;
  return yaml;
}

}  // namespace e2e
