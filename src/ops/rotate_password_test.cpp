// rotate-password as an operation of the core, driven without the command line: a memory store, the
// fake transport and a fake clock.
#include <catch2/catch.hpp>

#include "engine/test_support.h"
#include "ops/rotate_password.h"

using namespace dbform;
using namespace dbform::test;
using nlohmann::json;
using R = FakeTransport;

namespace {

const std::string kOrders = "p1/services/orders";

EnvLookup env_with_key() {
  return [](const std::string& name) -> std::optional<std::string> {
    if (name == "DBFORM_API_KEY") return "key-p1";
    return std::nullopt;
  };
}

StateAccess access_of(StateStore& store, const char* operation) {
  return {store, operation, Duration(0), {}, env_with_key()};
}

// A store whose lock is held by another run.
class LockedStore : public MemoryStateStore {
 public:
  using MemoryStateStore::MemoryStateStore;
  std::unique_ptr<StateLock> lock(const std::string&, Duration) override {
    throw Error("the state is locked by another apply (pid 4242 on ci-runner)");
  }
};

// `orders` recorded READY with its read replica set `reporting`, and `billing` whose create's
// outcome is unknown.
State recorded_services() {
  State s = new_state();
  ResourceRecord orders;
  orders.address = kOrders;
  orders.project_id = "p1";
  orders.name = "orders";
  orders.id = "svc-orders";
  orders.status = "READY";
  s.upsert(orders);
  ResourceRecord replicas;
  replicas.kind = ResourceKind::ReplicaSet;
  replicas.address = kOrders + "/replicas/reporting";
  replicas.project_id = "p1";
  replicas.parent = "orders";
  replicas.name = "reporting";
  replicas.id = "rs-1";
  replicas.status = "active";
  s.upsert(replicas);
  ResourceRecord billing;
  billing.address = "p1/services/billing";
  billing.project_id = "p1";
  billing.name = "billing";
  billing.create_pending = true;
  s.upsert(billing);
  return s;
}

}  // namespace

TEST_CASE("ops: rotate-password journals the new password before its call and records it once confirmed, in the lock") {
  Harness h;
  MemoryStateStore store(recorded_services());
  std::string pending_when_sent;
  h.fake.set_handler([&](const HttpRequest& r) {
    if (r.method == "POST" && path_of(r).ends_with("/services/svc-orders/updatePassword")) {
      pending_when_sent = store.last_record(kOrders)->pending_password;
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
               Catch::Contains("only services have passwords"));
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
