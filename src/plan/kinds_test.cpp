// The kinds' rows (kinds.h) as the differ and the engine rely on them: one row per kind, each with
// every call, a routed kind's with its route and create body.
#include "plan/kinds.h"

#include <algorithm>

#include <catch2/catch.hpp>

using namespace dbform;

TEST_CASE("kinds: one row per kind, what others live in first, every call set") {
  std::vector<ResourceKind> seen;
  for (const ResourceType* type : resource_types()) {
    INFO(kind_name(type->kind));
    CHECK(&type_of(type->kind) == type);
    if (const auto outer = parent_kind(type->kind))
      CHECK(std::find(seen.begin(), seen.end(), *outer) != seen.end());
    seen.push_back(type->kind);
    CHECK(type->verdict);
    CHECK(type->needs_replacement);
    CHECK(type->created_with);
    CHECK(type->needs);
    CHECK(type->observe);
    CHECK(type->took_effect);
    CHECK(type->create);
    CHECK(type->list);
    CHECK(type->get);
    CHECK(type->update);
    CHECK(type->remove);
    if (type->route.collection) CHECK(type->create_body);
  }
  // The objects inside a database have no API calls: not among them, and a row of their own.
  size_t api_kinds = 0;
  for (const KindForm& form : kind_forms()) {
    const bool api = !form.in_database;
    api_kinds += api;
    CHECK(std::count(seen.begin(), seen.end(), form.kind) == (api ? 1 : 0));
    CHECK(type_of(form.kind).kind == form.kind);
    if (!api) CHECK_FALSE(type_of(form.kind).create);
  }
  CHECK(seen.size() == api_kinds);
}

TEST_CASE("kinds: an object read by a route is shown with its row's name and status fields") {
  const Shown peering = shown_at(type_of(ResourceKind::Peering),
                                 {"pr1", {{"id", "pr1"}, {"peer_vpc_id", "vpc-0abc"}, {"status", "pending"}}});
  CHECK(peering.id == "pr1");
  CHECK(peering.name == "vpc-0abc");
  CHECK(peering.status == "pending");
  const Shown vpc = shown_at(type_of(ResourceKind::Vpc), {"v1", {{"id", "v1"}, {"name", "main"}, {"status", "x"}}});
  CHECK(vpc.name == "main");
  CHECK(vpc.status.empty());  // a VPC has no status
}
