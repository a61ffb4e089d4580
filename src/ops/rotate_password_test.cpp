// rotate-password as an operation of the core, driven without the command line: a memory store, the
// fake transport and a fake clock.
#include <catch2/catch.hpp>

#include "ops/test_support.h"
#include "ops/rotate_password.h"

using namespace dbform;
using namespace dbform::test;
using nlohmann::json;
using R = FakeTransport;

TEST_CASE("ops: rotate-password journals the new password before its call and records it once confirmed, in the lock") {
  Harness h;
  MemoryStateStore store(recorded_services());
  std::string pending_when_sent;
  h.fake.set_handler([&](const HttpRequest& r) {
    if (r.method == "POST" && path_of(r).ends_with("/services/svc-orders/updatePassword")) {
      pending_when_sent = store.last_record(kOrders)->pending_password.text();
      return R::response(204, "");
    }
    return R::response(404, R"({"message":"not scripted"})");
  });
  const Manifest none;
  auto api = [&h]() -> ApiClient& { return h.api; };
  const RotatePasswordOutcome out = rotate_password_operation(
      {access_of(store, "rotate-password"), none, api, h.clock, "orders", "new-password-0123456789"});
  CHECK(out.address == kOrders);  // a short address, resolved
  CHECK(pending_when_sent == "new-password-0123456789");
  CHECK(store.read()->find(kOrders)->initial_password == "new-password-0123456789");

  SECTION("a read replica set, an unknown create and a held lock are refused with nothing sent") {
    const size_t calls = h.fake.requests().size();
    CHECK_THAT(message_of([&] {
                 rotate_password_operation({access_of(store, "rotate-password"), none, api, h.clock,
                                            kOrders + "/replicas/reporting", "new-password-0123456789"});
               }),
               Catch::Contains("only services and their login roles have passwords"));
    CHECK_THAT(message_of([&] {
                 rotate_password_operation({access_of(store, "rotate-password"), none, api, h.clock,
                                            "p1/services/billing", "new-password-0123456789"});
               }),
               Catch::Contains("has no id yet"));
    LockedStore locked(recorded_services());
    CHECK_THAT(message_of([&] {
                 rotate_password_operation({access_of(locked, "rotate-password"), none, api, h.clock, kOrders,
                                            "new-password-0123456789"});
               }),
               Catch::Contains("locked by another"));
    CHECK(h.fake.requests().size() == calls);
  }
}
