#pragma once
// What the operations' unit tests share (besides engine/test_support.h's harness and
// state/test_support.h's records): the project key from the environment, a state access for an
// operation, a store locked by another run and a state of recorded services.
#include <optional>
#include <string>

#include "engine/test_support.h"
#include "ops/locked_state.h"
#include "state/memory_store.h"
#include "state/test_support.h"

namespace dbform::test {

inline const std::string kOrders = "p1/services/orders";

// Every project's key from DBFORM_API_KEY, and nothing else in the environment.
inline EnvLookup env_with_key() {
  return [](const std::string& name) -> std::optional<std::string> {
    if (name == "DBFORM_API_KEY") return "key-p1";
    return std::nullopt;
  };
}

inline StateAccess access_of(StateStore& store, const char* operation) {
  return {store, operation, Duration(0), {}, env_with_key()};
}

// A store whose lock another run of the same operation holds.
class LockedStore : public MemoryStateStore {
 public:
  using MemoryStateStore::MemoryStateStore;
  std::unique_ptr<StateLock> lock(const std::string& operation, Duration) override {
    throw Error("the state is locked by another " + operation + " (pid 4242 on ci-runner)");
  }
};

// `orders` of project p1, recorded READY with the id svc-orders.
inline ResourceRecord ready_orders() { return recorded_service("p1", "orders", "svc-orders", "READY"); }

// `orders` recorded READY with its read replica set `reporting`, and `billing` whose create's
// outcome is unknown.
inline State recorded_services() {
  State s = new_state();
  s.upsert(ready_orders());
  ResourceRecord replicas = record_of(ResourceKind::ReplicaSet, "p1", "reporting", "orders");
  replicas.id = "rs-1";
  replicas.status = "active";
  s.upsert(replicas);
  ResourceRecord billing = recorded_service("p1", "billing", "", "");
  billing.create_pending = true;
  s.upsert(billing);
  return s;
}

}  // namespace dbform::test
