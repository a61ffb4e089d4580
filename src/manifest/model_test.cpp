// The walk of the declarations and the kinds' rows of the manifest side (model.h): what every
// reader of the declarations takes them from.
#include "manifest/model.h"

#include <algorithm>

#include <catch2/catch.hpp>

#include "manifest/loader.h"

using namespace dbform;

namespace {

const char* kTree = R"(version: 1
projects:
  - id: acme
    vpcs:
      - name: main
        cidr: 10.0.0.0/16
        region_code: us-east-1
        peerings:
          - peer_account_id: "123456789012"
            peer_region_code: us-east-1
            peer_vpc_id: vpc-0abc
            import_id: pr-1
    services:
      - name: orders
        vpc: main
        renamed_from: old-orders
        deletion_protection: true
        read_replicas:
          - name: reporting
            nodes: 2
            cpu_millis: 1000
            memory_gbs: 4
      - name: billing
)";

Manifest tree() {
  Diagnostics diags;
  Manifest m = load_manifest_text("m.yaml", kTree, [](const std::string&) { return std::nullopt; }, diags);
  INFO(diags.str());
  REQUIRE_FALSE(diags.has_errors());
  return m;
}

}  // namespace

TEST_CASE("model: the walk shows each declaration before what lives in it, VPCs first, with its own fields") {
  const Manifest m = tree();
  std::vector<std::string> seen;
  for_each_declaration(m.projects.at(0), [&](const Declaration& d) {
    seen.push_back(resource_address("acme", d.kind, d.name, d.parent));
    if (d.kind == ResourceKind::Service && d.name == "orders") {
      CHECK(d.renamed_from == std::optional<std::string>("old-orders"));
      CHECK(d.deletion_protection);
      CHECK(d.settings() == settings_json(m.projects[0].services[0]));
    }
    if (d.kind == ResourceKind::Peering) {
      CHECK(d.import_id == std::optional<std::string>("pr-1"));
      CHECK_FALSE(d.renamed_from);  // a kind that is not renamed
      CHECK(d.settings() == settings_json(m.projects[0].vpcs[0].peerings[0]));
    }
  });
  CHECK(seen == std::vector<std::string>{"acme/vpcs/main", "acme/vpcs/main/peerings/vpc-0abc", "acme/services/orders",
                                         "acme/services/orders/replicas/reporting", "acme/services/billing"});
  CHECK(declares_any(m.projects[0]));
  CHECK_FALSE(declares_any(DesiredProject{}));
}

TEST_CASE("model: moving declarations keeps what is accepted, and what lives in a refused one goes unasked") {
  Manifest m = tree();
  DesiredProject into;
  std::vector<std::string> asked;
  move_declarations(m.projects[0], into, [&](const Declaration& d) {
    asked.push_back(d.name);
    return d.name != "main" && d.name != "reporting";
  });
  CHECK(asked == std::vector<std::string>{"main", "orders", "reporting", "billing"});  // not the peering of main
  CHECK(into.vpcs.empty());
  REQUIRE(into.services.size() == 2);
  CHECK(into.services[0].name == "orders");
  CHECK(into.services[0].read_replicas.empty());
}

TEST_CASE("model: every kind has one row, its parent's row before it, and its addresses read back") {
  std::vector<ResourceKind> rows;
  for (const KindForm& form : kind_forms()) {
    if (form.parent) CHECK(std::find(rows.begin(), rows.end(), *form.parent) != rows.end());
    rows.push_back(form.kind);
    CHECK(&kind_form(form.kind) == &form);
    CHECK(kind_named(form.name) == form.kind);
    // A grant's name is its (role, object): ROLE/SCHEMA, then tables or sequences, then one's name.
    const std::string name = form.kind == ResourceKind::Grant ? "app/orders/tables" : "x";
    const std::string address = resource_address("acme", form.kind, name, form.parent ? "p" : "");
    const auto parts = parse_address(address);
    REQUIRE(parts);
    CHECK(parts->kind == form.kind);
    CHECK(parts->name == name);
    CHECK(parts->parent == (form.parent ? "p" : ""));
  }
  CHECK(parse_address("acme/services/orders/grants/app/orders")->name == "app/orders");
  CHECK(parse_address("acme/services/orders/grants/app/orders/sequences/ids")->name == "app/orders/sequences/ids");
  CHECK_FALSE(parse_address("acme/services/orders/grants/app"));
  CHECK_FALSE(parse_address("acme/services/orders/grants/app/orders/views"));
  CHECK_FALSE(parse_address("acme/services/orders/grants/app/orders/tables/a/b"));
  CHECK_FALSE(parse_address("acme/vpcs/orders/grants/app/orders"));
  for (ResourceKind k : {ResourceKind::Service, ResourceKind::Vpc, ResourceKind::ReplicaSet, ResourceKind::Peering})
    CHECK(std::count(rows.begin(), rows.end(), k) == 1);
}
