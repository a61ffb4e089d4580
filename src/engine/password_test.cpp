// rotate-password through the apply engine's scheduler: the new password is journaled as pending
// before its call, recorded as the password once confirmed, and an earlier pending one goes first.
#include <catch2/catch.hpp>

#include "engine/password.h"
#include "engine/test_support.h"

using namespace dbform;
using namespace dbform::test;
using nlohmann::json;
using R = FakeTransport;

namespace {

const std::string kOrders = "p1/services/orders";
const std::string kNew = "new-password-0123456789";

}  // namespace

TEST_CASE("engine: rotate_password journals the new password, sends it once, and records it when confirmed") {
  Harness h;
  h.made("p1", "orders", "svc-1", "READY");
  std::vector<std::string> sent, pending_when_sent;
  h.fake.set_handler([&](const HttpRequest& r) {
    if (r.method == "POST" && path_of(r).ends_with("/services/svc-1/updatePassword")) {
      sent.push_back(json::parse(r.body).at("password"));
      const auto saved = h.store.last_record(kOrders);
      pending_when_sent.push_back(saved ? saved->pending_password.text() : "(no record saved)");
      return R::response(sent.back() == "refused-password-0123" ? 400 : 204,
                         sent.back() == "refused-password-0123" ? R"({"message":"too weak"})" : "");
    }
    return R::response(404, R"({"message":"not scripted"})");
  });

  SECTION("confirmed") {
    rotate_password(h.api, h.store, h.state, kOrders, "key-p1", kNew, h.clock);
    CHECK(sent == std::vector<std::string>{kNew});
    CHECK(pending_when_sent == std::vector<std::string>{kNew});  // on disk before it was sent
    CHECK(h.store.last_record(kOrders)->initial_password == kNew);
    CHECK(h.store.last_record(kOrders)->pending_password.empty());
  }
  SECTION("an earlier pending password is set first, then the new one") {
    h.state.find(kOrders)->pending_password = "earlier-password-0123";
    h.store.write(h.state);  // a pending password is always on disk: an earlier run saved it
    rotate_password(h.api, h.store, h.state, kOrders, "key-p1", kNew, h.clock);
    CHECK(sent == std::vector<std::string>{"earlier-password-0123", kNew});
    CHECK(h.store.last_record(kOrders)->initial_password == kNew);
  }
  SECTION("an earlier pending password that cannot be set stops it: nothing else is sent or recorded") {
    h.state.find(kOrders)->pending_password = "refused-password-0123";
    h.store.write(h.state);
    CHECK_THAT(message_of([&] { rotate_password(h.api, h.store, h.state, kOrders, "key-p1", kNew, h.clock); }),
               Catch::Contains("still pending") && Catch::Contains("too weak"));
    CHECK(sent == std::vector<std::string>{"refused-password-0123"});
    CHECK(h.state.find(kOrders)->pending_password == "refused-password-0123");
  }
  SECTION("refused: it stays recorded as pending") {
    CHECK_THAT(message_of([&] {
                 rotate_password(h.api, h.store, h.state, kOrders, "key-p1", "refused-password-0123", h.clock);
               }),
               Catch::Contains("could not be set") && Catch::Contains("too weak") && Catch::Contains("pending"));
    CHECK(h.store.last_record(kOrders)->pending_password == "refused-password-0123");
    CHECK(h.store.last_record(kOrders)->initial_password.empty());
  }
}
