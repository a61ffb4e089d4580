// apply's wait for connections (--wait-connectable) against a fake ConnectionCheck and a fake clock.
#include <catch2/catch.hpp>

#include <mutex>

#include "engine/connectable.h"
#include "engine/test_support.h"
#include "plan/kinds.h"

using namespace dbform;
using namespace dbform::test;
using json = nlohmann::json;
using R = FakeTransport;

namespace {

// Answers from a script: NotYet for the first `refusals` attempts, then `final`. Records what it saw.
class FakeCheck : public ConnectionCheck {
 public:
  FakeCheck(int refusals, ConnectAttempt::Verdict final) : refusals_(refusals), final_(final) {}
  ConnectAttempt attempt(const ConnectTarget& target, Duration) const override {
    std::lock_guard<std::mutex> lock(mu_);
    targets.push_back(target);
    ConnectAttempt a;
    if (static_cast<int>(targets.size()) <= refusals_) {
      a.reason = "connection refused";
      return a;
    }
    a.verdict = final_;
    if (final_ == ConnectAttempt::Verdict::Refused) a.reason = "FATAL: password authentication failed";
    return a;
  }
  int attempts() const {
    std::lock_guard<std::mutex> lock(mu_);
    return static_cast<int>(targets.size());
  }
  mutable std::vector<ConnectTarget> targets;

 private:
  mutable std::mutex mu_;
  int refusals_;
  ConnectAttempt::Verdict final_;
};

const json kEndpoint = {{"endpoint", {{"host", "127.0.0.1"}, {"port", 5432}}}};

// `orders` of p1 declared, and the fake API creating it and answering it READY at kEndpoint.
void declare_and_serve_orders(Harness& h) {
  h.service("p1", "orders");
  h.fake.on("POST", "/projects/p1/services",
            R::response(202, service_json("svc-1", "orders", "QUEUED",
                                          {{"initial_password", "pw-1"}, {"endpoint", kEndpoint["endpoint"]}})));
  h.fake.always("GET", "/projects/p1/services/svc-1", R::response(200, service_json("svc-1", "orders", "READY", kEndpoint)));
}

// The apply of that, p1's services checked by `check` before they count as ready.
ApplyResult apply_orders_checked_by(Harness& h, const FakeCheck& check) {
  declare_and_serve_orders(h);
  h.options.connectable = {&check, {"p1"}};
  return h.apply();
}

}  // namespace

TEST_CASE("connectable: a new service is reported ready only once it accepts a connection") {
  Harness h;
  FakeCheck check(3, ConnectAttempt::Verdict::Accepted);
  ApplyResult result = apply_orders_checked_by(h, check);
  CHECK(result.failures.empty());
  CHECK(result.ready == 1);
  CHECK(check.attempts() == 4);
  REQUIRE(!check.targets.empty());
  CHECK(check.targets[0].host == "127.0.0.1");
  CHECK(check.targets[0].port == 5432);
  CHECK(check.targets[0].password == "pw-1");
  CHECK(check.targets[0].user == "tsdbadmin");
  CHECK(check.targets[0].database == "tsdb");
  CHECK(check.targets[0].sslmode == "require");
  // The progress said what it waited for, and READY came after it.
  auto waiting = h.events.of(EventKind::StatusChanged, "p1/services/orders");
  REQUIRE(!waiting.empty());
  CHECK(waiting.back().message == kCheckingConnections);
  auto kinds = h.events.kinds_for("p1/services/orders");
  CHECK(kinds.back() == EventKind::Ready);
}

TEST_CASE("connectable: a refused login fails the service at once, naming the cause") {
  Harness h;
  FakeCheck check(0, ConnectAttempt::Verdict::Refused);
  ApplyResult result = apply_orders_checked_by(h, check);
  CHECK(check.attempts() == 1);
  CHECK(result.ready == 0);
  REQUIRE(result.failures.size() == 1);
  CHECK_THAT(result.failures[0], Catch::Contains("password authentication failed"));
  CHECK_THAT(result.failures[0], Catch::Contains("refused the login as tsdbadmin"));
}

TEST_CASE("connectable: a service that never accepts connections fails after --wait-timeout") {
  Harness h;
  FakeCheck check(1'000'000, ConnectAttempt::Verdict::Accepted);
  h.options.wait_timeout = std::chrono::seconds(30);
  ApplyResult result = apply_orders_checked_by(h, check);
  CHECK(result.ready == 0);
  REQUIRE(result.failures.size() == 1);
  CHECK_THAT(result.failures[0], Catch::Contains("not accepting connections within 30s"));
  CHECK_THAT(result.failures[0], Catch::Contains("connection refused"));
  CHECK(check.attempts() > 10);  // polled, on the fake clock
}

TEST_CASE("connectable: only the projects asked for, and never without a check") {
  Harness h;
  declare_and_serve_orders(h);
  FakeCheck check(0, ConnectAttempt::Verdict::Accepted);
  SECTION("another project") { h.options.connectable = {&check, {"p2"}}; }
  SECTION("no check") { h.options.connectable = {nullptr, {"p1"}}; }
  ApplyResult result = h.apply();
  CHECK(result.ready == 1);
  CHECK(check.attempts() == 0);
}

TEST_CASE("connectable: which services are waited for") {
  FakeCheck check(0, ConnectAttempt::Verdict::Accepted);
  ConnectableOptions options{&check, {"p1"}};
  PlannedAction a;
  a.project_id = "p1";
  a.kind = ResourceKind::Service;
  ResourceRecord rec;
  rec.status = "READY";
  a.action = Action::Create;
  CHECK(wants_connection(options, a, rec, false));
  a.action = Action::Update;
  CHECK_FALSE(wants_connection(options, a, rec, false));  // a resize: it never stopped accepting
  CHECK(wants_connection(options, a, rec, true));          // a new password
  a.calls.push_back(PlannedCall{});
  a.calls.back().call = "start";
  CHECK(wants_connection(options, a, rec, false));
  a.calls.back().call = "rename";
  CHECK(wants_connection(options, a, rec, false));
  rec.status = "PAUSED";
  CHECK_FALSE(wants_connection(options, a, rec, false));
  rec.status = "READY";
  a.kind = ResourceKind::Vpc;
  CHECK_FALSE(wants_connection(options, a, rec, false));
  // A read replica set is reached with its service's password, which is checked at the service.
  a.kind = ResourceKind::ReplicaSet;
  a.action = Action::Create;
  rec.status = "active";
  CHECK(type_of(a.kind).verdict(rec.status) == StatusVerdict::Ready);
  CHECK_FALSE(wants_connection(options, a, rec, false));
}

TEST_CASE("connectable: a service without a known password or endpoint cannot be checked") {
  ResourceRecord rec;
  rec.address = "p1/services/orders";
  CHECK(connection_problem(rec).value_or("").find("no endpoint") != std::string::npos);
  rec.endpoint_host = "h";
  rec.endpoint_port = 5432;
  CHECK(connection_problem(rec).value_or("").find("rotate-password p1/services/orders") != std::string::npos);
  rec.initial_password = "pw";
  CHECK_FALSE(connection_problem(rec));
}

TEST_CASE("connectable: libpq's messages of a refused login are told from a server not there yet") {
  for (const char* refused : {"FATAL:  password authentication failed for user \"tsdbadmin\"",
                               "FATAL:  database \"tsdb\" does not exist"}) {
    INFO(refused);
    CHECK(login_refused(refused));
  }
  for (const char* not_yet : {"connection to server at \"127.0.0.1\", port 5 failed: Connection refused",
                              "FATAL:  the database system is starting up",
                              "FATAL:  pg_hba.conf rejects connection for host \"127.0.0.1\""}) {
    INFO(not_yet);
    CHECK_FALSE(login_refused(not_yet));
  }
}
