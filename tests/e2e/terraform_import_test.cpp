// Coming from Terraform, through the real binary against the simulator: a Terraform state
// of the vendor's provider (timescale/timescale v2.13.3, each instance with every attribute of its
// schema as Terraform records it) becomes manifests that import it, and a file of removed blocks;
// the plan of those manifests is imports and nothing else, and a second is clean; --passwords
// records the passwords Terraform held; hostile and odd states are refused, naming the place, with
// nothing written and no call made.
#include "service_helpers.h"

using namespace e2e;

namespace {

const std::string kProvider = "provider[\"registry.terraform.io/timescale/timescale\"]";
const std::string kTfPassword = "tf-held-Passw0rd-93jd";

// One instance of timescale_service with every attribute of the provider's schema: `set` over the
// nulls and defaults Terraform records.
json tf_service_attributes(const json& set) {
  json a = {{"connection_pooler_enabled", false}, {"data_tiering_enabled", nullptr}, {"enable_ha_replica", nullptr},
            {"environment_tag", nullptr},        {"ha_replicas", 0},                 {"hostname", "h.tsdb.cloud"},
            {"id", nullptr},                     {"log_exporter_id", nullptr},       {"memory_gb", 4},
            {"metric_exporter_id", nullptr},     {"milli_cpu", 1000},                {"name", nullptr},
            {"password", nullptr},               {"password_wo", nullptr},           {"password_wo_version", nullptr},
            {"paused", false},                   {"pooler_hostname", nullptr},       {"pooler_port", nullptr},
            {"port", 5432},                      {"read_replica_nodes", nullptr},    {"read_replica_source", nullptr},
            {"region_code", "us-east-1"},        {"replica_hostname", nullptr},      {"replica_port", nullptr},
            {"storage_gb", nullptr},             {"sync_replicas", 0},               {"timeouts", nullptr},
            {"username", "tsdbadmin"},           {"vpc_id", nullptr}};
  a.update(set);
  return a;
}

json tf_vpc_attributes(const json& set) {
  json a = {{"cidr", nullptr},         {"created", "2026-11-02T10:00:00Z"}, {"error_message", ""},
            {"id", nullptr},           {"name", nullptr},                   {"project_id", kProject},
            {"provisioned_id", "vpc-0f00"}, {"region_code", "us-east-1"},   {"status", "CREATED"},
            {"timeouts", nullptr},     {"updated", "2026-11-02T10:05:00Z"}};
  a.update(set);
  return a;
}

json tf_peering_attributes(const json& set) {
  json a = {{"accepter_provisioned_id", "pcx-0aa"}, {"error_message", ""},  {"id", nullptr},
            {"peer_account_id", nullptr},          {"peer_cidr", nullptr}, {"peer_cidr_blocks", json::array()},
            {"peer_region_code", nullptr},         {"peer_tgw_id", nullptr}, {"peer_vpc_id", nullptr},
            {"peering_type", "vpc"},               {"provisioned_id", "pcx-0aa"}, {"status", "ACTIVE"},
            {"timescale_vpc_id", nullptr},         {"vpc_id", "vpc-0f00"}};
  a.update(set);
  return a;
}

// A resource of a state of format version 4, as `terraform state pull` writes it.
json tf_resource(const std::string& type, const std::string& name, const json& attributes,
                 const std::string& provider = kProvider, const std::string& module = "") {
  json sensitive = json::array();
  if (attributes.contains("password")) sensitive.push_back(json::array({{{"type", "get_attr"}, {"value", "password"}}}));
  json r = {{"mode", "managed"}, {"type", type}, {"name", name}, {"provider", provider},
            {"instances", json::array({{{"schema_version", 0}, {"attributes", attributes},
                                        {"sensitive_attributes", sensitive}, {"private", "eyJzY2hlbWFfdmVyc2lvbiI6IjAifQ=="}}})}};
  if (!module.empty()) r["module"] = module;
  return r;
}

std::string tf_state(const json& resources) {
  return json{{"version", 4}, {"terraform_version", "1.9.8"}, {"serial", 12}, {"lineage", "5c1e7f0a-2b9d-4f7e-8c11-0d3b6a9e2f44"},
              {"outputs", json::object()}, {"resources", resources}, {"check_results", nullptr}}
      .dump(2);
}

// The same resources as `terraform show -json` prints them.
std::string tf_show_json(const json& resources) {
  json listed = json::array();
  for (const auto& r : resources) {
    const json& in = r["instances"][0];
    json sensitive = json::object();
    if (in["attributes"].contains("password")) sensitive["password"] = true;
    listed.push_back({{"address", r["type"].get<std::string>() + "." + r["name"].get<std::string>()},
                      {"mode", "managed"}, {"type", r["type"]}, {"name", r["name"]},
                      {"provider_name", "registry.terraform.io/timescale/timescale"}, {"schema_version", 0},
                      {"values", in["attributes"]}, {"sensitive_values", sensitive}});
  }
  return json{{"format_version", "1.0"}, {"terraform_version", "1.9.8"},
              {"values", {{"root_module", {{"resources", listed}}}}}}
      .dump(2);
}

// What Terraform made in the simulator: a VPC, `orders` in it with the pooler and an HA replica,
// `reports`, a read replica of orders and a peering of the VPC; the Terraform state that records them.
json made_by_terraform(Sandbox& sb) {
  dbform::SimResponse vpc = sb.sim().console_create(kProject, "vpcs", R"({"name":"main","cidr":"10.5.0.0/16","region_code":"us-east-1"})");
  REQUIRE(vpc.status == 201);
  const std::string vpc_id = json::parse(vpc.body)["id"];
  const std::string orders = console_service(sb, {{"name", "orders"}, {"cpu_millis", "2000"}, {"memory_gbs", "8"},
                                                  {"environment_tag", "PROD"}, {"replica_count", 1}});
  REQUIRE(sb.sim().console(orders, "attachToVPC", json{{"vpc_id", vpc_id}}.dump()).status == 200);
  REQUIRE(sb.sim().console(orders, "enablePooler", "").status == 200);
  const std::string reports = console_service(sb, {{"name", "reports"}, {"cpu_millis", "1000"}, {"memory_gbs", "4"}});
  const std::string set = made_outside(sb, "/services/" + orders + "/replicaSets",
                                      {{"name", "reporting"}, {"nodes", 2}, {"cpu_millis", 1000}, {"memory_gbs", 4}});
  const std::string peering = made_outside(sb, "/vpcs/" + vpc_id + "/peerings",
                                          {{"peer_account_id", "123456789012"}, {"peer_region_code", "us-east-1"},
                                           {"peer_vpc_id", "vpc-0abc"}});
  return json::array(
      {tf_resource("timescale_vpcs", "main", tf_vpc_attributes({{"id", std::stoll(vpc_id)}, {"name", "main"}, {"cidr", "10.5.0.0/16"}})),
       tf_resource("timescale_service", "orders",
                   tf_service_attributes({{"id", orders}, {"name", "orders"}, {"milli_cpu", 2000}, {"memory_gb", 8},
                                          {"environment_tag", "PROD"}, {"ha_replicas", 1}, {"connection_pooler_enabled", true},
                                          {"vpc_id", std::stoll(vpc_id)}, {"password", kTfPassword},
                                          {"log_exporter_id", "exp-7"}})),
       tf_resource("timescale_service", "reports", tf_service_attributes({{"id", reports}, {"name", "reports"}}), kProvider,
                   "module.analytics"),
       tf_resource("timescale_service", "reporting",
                   tf_service_attributes({{"id", set}, {"name", "reporting"}, {"read_replica_source", orders},
                                          {"read_replica_nodes", 2}, {"ha_replicas", nullptr}, {"sync_replicas", nullptr}})),
       tf_resource("timescale_peering_connection", "peer",
                   tf_peering_attributes({{"id", std::stoll(peering)}, {"timescale_vpc_id", std::stoll(vpc_id)},
                                          {"peer_account_id", "123456789012"}, {"peer_region_code", "us-east-1"},
                                          {"peer_vpc_id", "vpc-0abc"}})),
       tf_resource("aws_route53_record", "db", {{"id", "Z1_db"}}, "provider[\"registry.terraform.io/hashicorp/aws\"]")});
}

// Nothing written beside the state file and no call made: `r` was refused as it should be.
void check_refused_untouched(Sandbox& sb, const RunResult& r, const json& counts_before) {
  INFO(r.describe());
  CHECK(r.exit_code == 1);
  CHECK(contains(r.err, "nothing was written"));
  CHECK_FALSE(sb.exists("manifests"));
  CHECK_FALSE(sb.exists("removed-from-terraform.tf"));
  CHECK(sb.counts() == counts_before);
  CHECK_FALSE(contains(r.all(), kTfPassword));
}

}  // namespace

TEST_CASE("e2e: import --from-terraform declares what the provider managed, the plan imports it and nothing else, "
          "and removed blocks let Terraform forget it") {
  Sandbox sb;
  const json resources = made_by_terraform(sb);
  sb.write("terraform.tfstate", tf_state(resources));
  const json counts = sb.counts();

  RunResult r = sb.run({"import", "--from-terraform", "terraform.tfstate", "--project", kProject, "--generate", "manifests/"});
  INFO(r.describe());
  REQUIRE(r.exit_code == 0);
  CHECK(sb.counts() == counts);  // no API call
  CHECK_FALSE(sb.exists("dbform.state.json"));
  CHECK_FALSE(contains(r.all(), kTfPassword));
  const std::string yaml = sb.read("manifests/" + kProject + ".yaml");
  INFO(yaml);
  CHECK_FALSE(contains(yaml, kTfPassword));
  for (const char* line : {"vpc: main", "connection_pooler: true", "replica_count: 1", "cpu_millis: 2000", "read_replicas:",
                           "nodes: 2", "peer_vpc_id: vpc-0abc", "# from module.analytics.timescale_service.reports",
                           "log_exporter_id (a log exporter's attachment"})
    CHECK(contains(yaml, line));
  for (const char* address : {"acme-prod/vpcs/main  <- timescale_vpcs.main",
                              "acme-prod/services/orders/replicas/reporting  <- timescale_service.reporting",
                              "acme-prod/vpcs/main/peerings/vpc-0abc  <- timescale_peering_connection.peer"})
    CHECK(contains(r.out, address));
  CHECK(contains(r.out, "1 resource(s) of other providers left alone"));

  const std::string removed = sb.read("manifests/removed-from-terraform.tf");
  INFO(removed);
  CHECK(occurrences(removed, "removed {") == 5);
  CHECK(occurrences(removed, "destroy = false") == 5);
  for (const char* from : {"from = timescale_vpcs.main\n", "from = timescale_service.orders\n",
                           "from = module.analytics.timescale_service.reports\n", "from = timescale_service.reporting\n",
                           "from = timescale_peering_connection.peer\n"})
    CHECK(contains(removed, from));
  CHECK_FALSE(contains(removed, "aws_"));

  // The reviewed move: imports and nothing else, as Terraform's tools read a plan too.
  RunResult saved = sb.run({"plan", "-f", "manifests/", "--out", "move.plan"});
  INFO(saved.describe());
  REQUIRE(saved.exit_code == 0);
  CHECK(contains(saved.out, "Plan: 5 to import, 0 to create, 0 to update"));
  RunResult shown = sb.run({"show", "move.plan", "--format", "terraform-json"});
  INFO(shown.describe());
  REQUIRE(shown.exit_code == 0);
  const json tf = json::parse(shown.out);
  CHECK(tf["format_version"] == "1.2");
  REQUIRE(tf["resource_changes"].size() == 5);
  for (const auto& rc : tf["resource_changes"]) {
    CHECK(rc["change"]["actions"] == json::array({"no-op"}));
    CHECK(rc["change"].contains("importing"));
  }
  json orders;
  for (const auto& rc : tf["resource_changes"])
    if (rc["address"] == "module.acme-prod.dbform_service.orders") orders = rc;
  INFO(shown.out);
  CHECK(orders["type"] == "dbform_service");
  CHECK(orders["change"]["importing"]["id"] == resources[1]["instances"][0]["attributes"]["id"]);
  // Applied: no call that changes anything, then clean.
  RunResult applied = sb.run({"apply", "-f", "manifests/", "--auto-approve"});
  INFO(applied.describe());
  REQUIRE(applied.exit_code == 0);
  CHECK(contains(applied.out, "5 imported"));
  CHECK(writes_of(sb.counts()) == writes_of(counts));
  RunResult clean = sb.run({"plan", "-f", "manifests/", "--detailed-exitcode"});
  INFO(clean.describe());
  CHECK(clean.exit_code == 0);

  // The passwords Terraform held: recorded, never printed, and given when asked for.
  RunResult passwords = sb.run({"import", "--from-terraform", "terraform.tfstate", "--passwords"});
  INFO(passwords.describe());
  REQUIRE(passwords.exit_code == 0);
  CHECK(contains(passwords.out, "Recorded the password of 1 service(s)"));
  CHECK(contains(passwords.out, "acme-prod/services/orders"));
  CHECK(contains(passwords.out, "holds no password for"));  // reports: null in Terraform's state
  CHECK_FALSE(contains(passwords.all(), kTfPassword));
  RunResult output = sb.run({"output", "orders.password"});
  CHECK(output.out == kTfPassword + "\n");
  CHECK(writes_of(sb.counts()) == writes_of(counts));  // no updatePassword: nobody had to rotate
  RunResult again = sb.run({"import", "--from-terraform", "terraform.tfstate", "--passwords"});
  CHECK(contains(again.out, "Kept the password the state holds already"));
}

TEST_CASE("e2e: import --from-terraform reads terraform show -json with one --project, and lists what has no project") {
  Sandbox sb;
  const json resources = made_by_terraform(sb);
  sb.write("shown.json", tf_show_json(resources));
  RunResult r = sb.run({"import", "--from-terraform", "shown.json", "--project", kProject, "--generate", "moved.yaml"});
  INFO(r.describe());
  REQUIRE(r.exit_code == 0);
  CHECK(contains(r.out, "`terraform show -json` output"));
  CHECK(sb.exists("removed-from-terraform.tf"));
  apply_generated(sb, "moved.yaml", 5);

  // Aliases: show -json does not say which configuration a resource uses; a state does.
  Sandbox other;
  json aliased = made_by_terraform(other);
  aliased[1]["provider"] = kProvider + ".eu";
  other.write("terraform.tfstate", tf_state(aliased));
  RunResult listed = other.run({"import", "--from-terraform", "terraform.tfstate", "--project", kProject, "--generate", "m/"});
  INFO(listed.describe());
  REQUIRE(listed.exit_code == 0);
  CHECK(contains(listed.out, "timescale_service.orders: its provider configuration `eu` has no --project eu=ID"));
  // Its read replica set goes with it, never without it.
  CHECK(contains(listed.out, "timescale_service.reporting: a read replica of service"));
  CHECK_FALSE(contains(other.read("m/removed-from-terraform.tf"), "timescale_service.orders"));
  RunResult both = other.run({"import", "--from-terraform", "terraform.tfstate", "--project", kProject, "--project",
                              "eu=" + kProject, "--generate", "m/", "--force"});
  INFO(both.describe());
  CHECK(both.exit_code == 0);
  CHECK(contains(other.read("m/removed-from-terraform.tf"), "from = timescale_service.orders\n"));
}

TEST_CASE("e2e: a Terraform state that cannot be moved as it is is refused at its place, nothing written, no call") {
  Sandbox sb;
  const json resources = made_by_terraform(sb);
  const json counts = sb.counts();
  auto refused = [&](const std::string& text, const std::vector<std::string>& expected) {
    sb.write("terraform.tfstate", text);
    RunResult r = sb.run({"import", "--from-terraform", "terraform.tfstate", "--project", kProject, "--generate", "manifests/"});
    check_refused_untouched(sb, r, counts);
    for (const auto& e : expected) {
      INFO(e);
      CHECK(contains(r.err, e));
    }
    return r;
  };
  json v3 = json::parse(tf_state(resources));
  v3["version"] = 3;
  refused(v3.dump(), {"terraform.tfstate: version: is 3: dbform reads format version 4"});
  // Truncated mid-password: located, never quoted.
  const std::string whole = tf_state(resources);
  RunResult cut = refused(whole.substr(0, whole.find(kTfPassword) + 6), {"not valid JSON", "line "});
  CHECK_FALSE(contains(cut.err, kTfPassword.substr(0, 6)));
  json twice = resources;
  twice.push_back(tf_resource("timescale_service", "orders_again", twice[1]["instances"][0]["attributes"]));
  refused(tf_state(twice), {"timescale_service.orders_again and timescale_service.orders both name service"});
  json spaced = resources;
  spaced[2]["instances"][0]["attributes"]["name"] = "reports db\nnext";
  refused(tf_state(spaced), {"module.analytics.timescale_service.reports: its name \"reports db\\nnext\" is not one"});
  json elsewhere = resources;
  elsewhere[0]["instances"][0]["attributes"]["project_id"] = "someone-else";
  refused(tf_state(elsewhere), {"timescale_vpcs.main: records project \"someone-else\", not acme-prod"});
  json masked = resources;
  masked[1]["instances"][0]["attributes"]["name"] = "(sensitive value)";
  refused(tf_state(masked), {"timescale_service.orders: its `name` is masked"});
  json shapes = resources;
  shapes[1]["instances"][0]["attributes"] = "not an object";
  refused(tf_state(shapes), {"resources[1].instances[0].attributes: is a string, not an object"});
  refused(R"({"format_version":"1.2","planned_values":{},"resource_changes":[]})", {"is a plan's JSON"});
  json shared_id = resources;  // a read replica is a timescale_service too: one id space
  shared_id[3]["instances"][0]["attributes"]["id"] = shared_id[1]["instances"][0]["attributes"]["id"];
  refused(tf_state(shared_id), {"timescale_service.reporting and timescale_service.orders both name"});
  json shouted = resources;
  shouted[1]["instances"][0]["attributes"]["name"] = " (SENSITIVE VALUE) ";
  refused(tf_state(shouted), {"its `name` is masked"});
  json dotted = resources;  // no more than an address may reach a removed block
  dotted[2]["module"] = "module.a\n}\nresource \"x\" \"y\" {";
  sb.write("terraform.tfstate", tf_state(dotted));
  RunResult odd = sb.run({"import", "--from-terraform", "terraform.tfstate", "--project", kProject, "--generate", "m2/"});
  INFO(odd.describe());
  CHECK(odd.exit_code == 0);
  CHECK(contains(odd.out, "its address is not one a removed block can name"));
  CHECK_FALSE(contains(sb.read("m2/removed-from-terraform.tf"), "resource \"x\""));
  CHECK_FALSE(contains(sb.read("m2/" + kProject + ".yaml"), "\n}"));

  // The Terraform state is never what --generate writes, --force or not; nor without a --project, or
  // with one for a configuration nothing uses.
  sb.write("terraform.tfstate", tf_state(resources));
  const std::string tfstate = sb.read("terraform.tfstate");
  RunResult onto = sb.run({"import", "--from-terraform", "terraform.tfstate", "--project", kProject, "--generate",
                           "terraform.tfstate", "--force"});
  INFO(onto.describe());
  CHECK(onto.exit_code == 1);
  CHECK(contains(onto.err, "the Terraform state it reads"));
  CHECK(sb.read("terraform.tfstate") == tfstate);
  RunResult none = sb.run({"import", "--from-terraform", "terraform.tfstate", "--generate", "m3/"});
  CHECK(none.exit_code == 1);
  CHECK(contains(none.err, "needs --project ID"));
  RunResult typo = sb.run({"import", "--from-terraform", "terraform.tfstate", "--project", kProject, "--project",
                           "ue=" + kProject, "--generate", "m3/"});
  CHECK(typo.exit_code == 1);
  CHECK(contains(typo.err, "no resource of terraform.tfstate uses the provider configuration `ue`"));
  CHECK_FALSE(sb.exists("m3"));
  json tainted = resources;
  for (auto& r : tainted) r["instances"][0]["status"] = "tainted";
  sb.write("tainted.tfstate", tf_state(tainted));
  RunResult all_tainted = sb.run({"import", "--from-terraform", "tainted.tfstate", "--project", kProject, "--generate", "m4/"});
  INFO(all_tainted.describe());
  CHECK(all_tainted.exit_code == 1);  // nothing could be moved
  CHECK(contains(all_tainted.out, "timescale_service.orders: tainted"));
  CHECK_FALSE(sb.exists("m4"));

  // --passwords: a masked password is refused before the lock, and a sealed state needs its key.
  json hidden = resources;
  hidden[1]["instances"][0]["attributes"]["password"] = "(sensitive value)";
  sb.write("hidden.tfstate", tf_state(hidden));
  RunResult masked_password = sb.run({"import", "--from-terraform", "hidden.tfstate", "--passwords"});
  INFO(masked_password.describe());
  CHECK(masked_password.exit_code == 1);
  CHECK(contains(masked_password.err, "the password of timescale_service.orders is masked"));
  hidden[1]["instances"][0]["attributes"]["password"] = " (SENSITIVE VALUE) ";  // as the fields are: any case
  sb.write("hidden.tfstate", tf_state(hidden));
  CHECK(contains(sb.run({"import", "--from-terraform", "hidden.tfstate", "--passwords"}).err, "is masked"));
  CHECK_FALSE(sb.exists("dbform.state.json"));
}

TEST_CASE("e2e: import --from-terraform --passwords on a sealed state needs its key, and seals what it records") {
  Sandbox sb;
  const json resources = made_by_terraform(sb);
  sb.write("terraform.tfstate", tf_state(resources));
  const std::map<std::string, std::string> key = {{"DBFORM_STATE_PASSPHRASE", "a passphrase of the team's"}};
  REQUIRE(sb.run({"import", "--from-terraform", "terraform.tfstate", "--project", kProject, "--generate", "m.yaml"}).exit_code == 0);
  RunResult applied = sb.run({"apply", "-f", "m.yaml", "--auto-approve"}, key);
  INFO(applied.describe());
  REQUIRE(applied.exit_code == 0);
  const std::string before = sb.read("dbform.state.json");
  RunResult keyless = sb.run({"import", "--from-terraform", "terraform.tfstate", "--passwords"});
  INFO(keyless.describe());
  CHECK(keyless.exit_code == 1);
  CHECK(contains(keyless.err, "DBFORM_STATE_PASSPHRASE"));
  CHECK(sb.read("dbform.state.json") == before);
  RunResult sealed = sb.run({"import", "--from-terraform", "terraform.tfstate", "--passwords"}, key);
  INFO(sealed.describe());
  REQUIRE(sealed.exit_code == 0);
  CHECK_FALSE(contains(sb.read("dbform.state.json") + (sb.exists("dbform.state.json.journal") ? sb.read("dbform.state.json.journal") : ""),
                       kTfPassword));
  CHECK(sb.run({"output", "orders.password"}, key).out == kTfPassword + "\n");
}
