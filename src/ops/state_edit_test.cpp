// state rm | mv | push | encrypt as operations of the core, on a memory store: each in the state's
// lock, one whole write through the helper (ops/locked_state.h).
#include <catch2/catch.hpp>

#include "ops/test_support.h"
#include "ops/state_edit.h"

using namespace dbform;
using namespace dbform::test;
using nlohmann::json;
using R = FakeTransport;

namespace {

std::optional<State> as_read(StateStore& store) { return store.read(); }

}  // namespace

TEST_CASE("ops: state rm forgets a service with its read replica sets in one whole write - an unknown create only with force") {
  MemoryStateStore store(recorded_services());
  const StateRmOutcome out = state_rm_operation({access_of(store, "state rm"), as_read, {"orders"}, false});
  CHECK(out.removed == std::vector<std::string>{kOrders, kOrders + "/replicas/reporting"});
  CHECK(store.writes() == 1);
  CHECK_FALSE(store.read()->find(kOrders + "/replicas/reporting"));
  CHECK_THAT(message_of([&] { state_rm_operation({access_of(store, "state rm"), as_read, {"billing"}, false}); }),
             Catch::Contains("nothing was removed"));
  CHECK(store.writes() == 1);
  const StateRmOutcome forced = state_rm_operation({access_of(store, "state rm"), as_read, {"billing"}, true});
  CHECK(forced.unknown == std::vector<std::string>{"p1/services/billing"});
  CHECK(store.read()->resources.empty());
}

TEST_CASE("ops: state mv moves a record to a new name of the same project and kind - a name taken is refused") {
  MemoryStateStore store(recorded_services());
  const StateMvOutcome out = state_mv_operation({access_of(store, "state mv"), as_read, "orders", "orders-2"});
  CHECK(out.from == kOrders);
  CHECK(out.to == "p1/services/orders-2");
  CHECK(store.read()->find("p1/services/orders-2"));
  CHECK(store.read()->find("p1/services/orders-2/replicas/reporting"));
  CHECK_THAT(message_of([&] { state_mv_operation({access_of(store, "state mv"), as_read, "orders-2", "billing"}); }),
             Catch::Contains("is recorded already"));
  CHECK(store.writes() == 1);
}

TEST_CASE("ops: state push refuses an older serial or another lineage, writes over what it read, and says when nothing changes") {
  State stored = recorded_services();
  stored.serial = 5;
  MemoryStateStore store(stored);
  State older = stored;
  older.serial = 4;
  CHECK_THAT(message_of([&] { state_push_operation({access_of(store, "state push"), as_read, older, "old.json", false}); }),
             Catch::Contains("is newer"));
  State other = stored;
  other.lineage = "another-lineage";
  CHECK_THAT(message_of([&] { state_push_operation({access_of(store, "state push"), as_read, other, "x.json", false}); }),
             Catch::Contains("holds another state"));
  CHECK(store.writes() == 0);
  CHECK_FALSE(state_push_operation({access_of(store, "state push"), as_read, stored, "same.json", false}).pushed);
  State changed = stored;
  changed.remove("p1/services/billing");
  const StatePushOutcome out = state_push_operation({access_of(store, "state push"), as_read, changed, "new.json", false});
  CHECK(out.pushed);
  CHECK(out.state.serial == 6);
  CHECK(store.writes() == 1);
  CHECK_FALSE(store.read()->find("p1/services/billing"));
}

TEST_CASE("ops: state encrypt rewrites the whole state once with the key - no state is refused") {
  MemoryStateStore store(recorded_services());
  const StateKey key = StateKey::raw(std::string(32, 'k'), "key file test.key");
  const StateRewriteOutcome out = state_rewrite_operation({access_of(store, "state encrypt"), key, key});
  CHECK(out.rewritten);
  CHECK(out.before.empty());
  CHECK(out.after.size() == 16);
  CHECK(out.serial == 1);
  CHECK_FALSE(out.backup_too);
  CHECK(store.writes() == 1);
  MemoryStateStore empty;
  CHECK_THAT(message_of([&] { state_rewrite_operation({access_of(empty, "state encrypt"), key, key}); }),
             Catch::Contains("nothing to encrypt"));
}
