// import ADDRESS ID as an operation of the core, driven without the command line: a memory store,
// the fake transport and a fake clock.
#include <catch2/catch.hpp>

#include "ops/test_support.h"
#include "ops/import.h"

using namespace dbform;
using namespace dbform::test;
using nlohmann::json;
using R = FakeTransport;

TEST_CASE("ops: import records the resource read by id in one journal write - one recorded already is refused before any call") {
  Harness h;
  h.service("p1", "orders");
  h.service("p1", "billing");
  MemoryStateStore store;
  h.fake.on("GET", "/projects/p1/services/svc-9", R::response(200, service_json("svc-9", "orders", "READY")));
  h.fake.set_handler([](const HttpRequest&) { return R::response(404, R"({"message":"not scripted"})"); });
  auto api = [&h]() -> ApiClient& { return h.api; };
  const ImportOutcome out = import_operation({access_of(store, "import"), h.manifest, api, h.clock, kOrders, "svc-9"});
  CHECK(out.record.id == "svc-9");
  CHECK(store.writes() == 1);
  REQUIRE(store.read()->find(kOrders));
  CHECK(store.read()->find(kOrders)->id == "svc-9");
  const size_t calls = h.fake.requests().size();
  CHECK_THAT(message_of([&] { import_operation({access_of(store, "import"), h.manifest, api, h.clock, kOrders, "svc-10"}); }),
             Catch::Contains("is recorded already"));
  CHECK(h.fake.requests().size() == calls);
  CHECK(store.writes() == 1);
}
