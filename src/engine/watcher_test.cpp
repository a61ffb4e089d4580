// The watcher on its own (engine/watcher.h): when each resource is looked at and how, on a fake
// clock, with no API, no state and no sleep. The engine's tests (watch_test.cpp) drive the same
// rules through whole runs.
#include <catch2/catch.hpp>
#include <set>

#include "engine/watcher.h"

using namespace dbform;
using namespace dbform::scheduling;
using std::chrono::milliseconds;
using std::chrono::seconds;

namespace {

const auto kAll = [](size_t) { return true; };

struct Fixture {
  FakeClock clock;
  PollSchedule polls{seconds(1), seconds(10)};
  Duration wait_timeout = std::chrono::minutes(10);
  Watcher watcher{clock, polls, wait_timeout};
  Clock::TimePoint t0 = clock.now();

  // `n` services, one a project: each checked by id.
  void projects(int n) {
    for (int p = 0; p < n; ++p) watcher.add("p" + std::to_string(p) + "/service/", ResourceKind::Service, true);
  }
  // Every slot's create sent now and answered (not READY): watched from now.
  void created_all(size_t slots) {
    for (size_t i = 0; i < slots; ++i) {
      watcher.start(i, clock.now(), WaitFor::Create);
      watcher.learn(i, Lesson::Created);
      watcher.check_later(i, clock.now());
    }
  }
  // Moves the clock to the next due check and takes the checks due then.
  std::vector<Check> next(const std::function<bool(size_t)>& watching = kAll) {
    auto due = watcher.next_due();
    REQUIRE(due);
    clock.advance(std::chrono::duration_cast<Duration>(*due - clock.now()));
    return watcher.due(watching);
  }
  Duration since_start() const { return std::chrono::duration_cast<Duration>(clock.now() - t0); }
};

std::set<size_t> slots_of(const std::vector<Check>& checks) {
  std::set<size_t> out;
  for (const auto& c : checks) out.insert(c.slots.begin(), c.slots.end());
  return out;
}

}  // namespace

TEST_CASE("watcher: a check is due one interval after the last, never past the wait timeout") {
  Fixture f;
  f.wait_timeout = seconds(3);
  Watcher watcher{f.clock, f.polls, f.wait_timeout};
  watcher.add("p1/service/", ResourceKind::Service, true);
  CHECK(watcher.idle());
  watcher.start(0, f.clock.now(), WaitFor::Status);
  watcher.check_later(0, f.clock.now());
  CHECK_FALSE(watcher.idle());
  CHECK(watcher.due(kAll).empty());  // not yet
  CHECK(watcher.next_due() == f.t0 + seconds(1));
  f.clock.advance(seconds(1));
  auto checks = watcher.due(kAll);
  REQUIRE(checks.size() == 1);
  CHECK(checks[0].kind == Check::Kind::Get);
  CHECK(checks[0].slots == std::vector<size_t>{0});
  CHECK(watcher.idle());  // in flight: no timer until its answer says when
  watcher.answered(0);
  f.clock.advance(milliseconds(1500));  // 2.5 s into a 3 s wait: at the deadline, not a pause later
  watcher.check_later(0, f.clock.now());
  CHECK(watcher.next_due() == watcher.deadline(0));
  CHECK(watcher.deadline(0) == f.t0 + seconds(3));
}

TEST_CASE("watcher: a cancelled check never comes due") {
  Fixture f;
  f.projects(2);
  f.created_all(2);
  f.watcher.cancel(0);
  f.clock.advance(seconds(5));
  CHECK(slots_of(f.watcher.due(kAll)) == std::set<size_t>{1});
  f.watcher.cancel(1);  // cancelling one in flight changes nothing
  CHECK(f.watcher.idle());
}

TEST_CASE("watcher: at most four checks are in flight, and an answer makes room for the next") {
  Fixture f;
  f.projects(6);
  f.created_all(6);
  f.clock.advance(seconds(1));
  auto first = f.watcher.due(kAll);
  CHECK(first.size() == static_cast<size_t>(kPollLane));
  CHECK_FALSE(f.watcher.next_due());  // the lane is full: nothing can be sent
  CHECK(f.watcher.due(kAll).empty());
  f.watcher.answered(first[0].slots[0]);
  auto more = f.watcher.due(kAll);
  REQUIRE(more.size() == 1);
  CHECK_FALSE(slots_of(first).count(more[0].slots[0]));
}

TEST_CASE("watcher: three or more waited for in one project share a list, and one not listed goes by id") {
  Fixture f;
  for (int n = 0; n < 4; ++n) f.watcher.add("p1/service/", ResourceKind::Service, true);
  f.watcher.add("p2/service/", ResourceKind::Service, true);
  f.created_all(5);
  // Slot 3's operation is no longer watched (the run says so, and cancels its check): it does not
  // ride along in its project's list.
  f.watcher.cancel(3);
  const auto watching = [](size_t i) { return i != 3; };
  auto checks = f.next(watching);
  REQUIRE(checks.size() == 2);  // one list of p1, one GET in p2
  std::vector<size_t> list;
  for (const auto& c : checks) {
    if (c.kind == Check::Kind::List) list = c.slots;
    else CHECK(c.slots == std::vector<size_t>{4});
  }
  CHECK(std::set<size_t>(list.begin(), list.end()) == std::set<size_t>{0, 1, 2});
  f.watcher.listed({0, 1, 2}, /*quiet=*/false);
  f.watcher.answered(4);
  f.watcher.ask_by_id(1);  // the list did not show it
  for (size_t i : {0, 1, 2}) f.watcher.check_later(i, f.clock.now());
  checks = f.next(watching);
  // Slot 1 goes by id; slots 0 and 2 are too few for a list.
  REQUIRE(checks.size() == 3);
  for (const auto& c : checks) CHECK(c.kind == Check::Kind::Get);
  CHECK(slots_of(checks) == std::set<size_t>{0, 1, 2});
}

TEST_CASE("watcher: the forecast brings forward the checks of creates due as soon as the fastest") {
  Fixture f;
  f.polls = {seconds(10), seconds(10)};  // a long pause: the forecast is sooner
  Watcher watcher{f.clock, f.polls, f.wait_timeout};
  for (int p = 0; p < 2; ++p) watcher.add("p" + std::to_string(p) + "/service/", ResourceKind::Service, true);
  watcher.start(0, f.clock.now(), WaitFor::Create);
  watcher.learn(0, Lesson::Created);
  watcher.check_later(0, f.clock.now());
  f.clock.advance(seconds(2));
  watcher.start(1, f.clock.now(), WaitFor::Create);  // sent 2 s after the first, answered half a second later
  f.clock.advance(milliseconds(500));
  watcher.learn(1, Lesson::Created);
  watcher.check_later(1, f.clock.now());
  CHECK(watcher.next_due() == f.t0 + seconds(10));
  // Slot 0 is seen READY 3 s after its create: slot 1's is due 3 s after its create's answer came
  // back (the API may have made it only then), not at its usual 12.5 s, nor 3 s after its send,
  // nor an eighth of the interval after that.
  f.clock.advance(milliseconds(500));
  watcher.learn(0, Lesson::SawReady);
  watcher.cancel(0);  // done
  CHECK(watcher.due(kAll).empty());
  CHECK(watcher.next_due() == f.t0 + milliseconds(2500) + seconds(3));
  // A wait that is not of a create neither teaches nor uses it.
  watcher.start(1, f.clock.now(), WaitFor::Status);
  watcher.check_later(1, f.clock.now());
  CHECK(watcher.next_due() == f.clock.now() + seconds(10));
}

TEST_CASE("watcher: a check sent just before the forecast's time and answered after it is followed by one more at once") {
  Fixture f;
  f.polls = {seconds(10), seconds(10)};
  Watcher watcher{f.clock, f.polls, f.wait_timeout};
  for (int p = 0; p < 2; ++p) watcher.add("p" + std::to_string(p) + "/service/", ResourceKind::Service, true);
  watcher.start(0, f.clock.now(), WaitFor::Create);  // slot 0's create, answered at once
  watcher.learn(0, Lesson::Created);
  watcher.check_later(0, f.clock.now());
  f.clock.advance(seconds(1));
  watcher.start(1, f.clock.now(), WaitFor::Create);  // slot 1's, a second later
  watcher.learn(1, Lesson::Created);
  watcher.check_later(1, f.clock.now());
  f.clock.advance(seconds(2));
  watcher.learn(0, Lesson::SawReady);  // 3 s after its send: slot 1 is due at 4 s
  watcher.cancel(0);
  CHECK(watcher.due(kAll).empty());
  CHECK(watcher.next_due() == f.t0 + seconds(4));
  // Slot 1 is checked 100 ms before then (its own schedule, or the list of another), and the
  // answer, which may show the API as it was before 4 s, comes back 100 ms after: one more check
  // at once, since none was sent after 4 s.
  f.clock.advance(milliseconds(900));
  watcher.check_now(1);
  auto checks = watcher.due(kAll);
  REQUIRE(checks.size() == 1);
  f.clock.advance(milliseconds(200));
  watcher.answered(1);
  watcher.check_later(1, f.clock.now());
  CHECK(watcher.next_due() == f.clock.now());
  // That one is sent after 4 s: after its answer, the usual schedule.
  REQUIRE(watcher.due(kAll).size() == 1);
  f.clock.advance(milliseconds(50));
  watcher.answered(1);
  watcher.check_later(1, f.clock.now());
  CHECK(watcher.next_due() == f.clock.now() + seconds(10));
}

TEST_CASE("watcher: with many projects, the first created is the probe, and its failure ends probing") {
  Fixture f;
  f.projects(50);  // a spread of 2: two intervals between a quiet project's rounds
  f.created_all(50);
  auto checks = f.next();
  // The probe (the first project created) is looked at every quarter interval; the others' first
  // rounds wait for what it learns (twice the spread's pause).
  CHECK(f.since_start() == milliseconds(250));
  CHECK(slots_of(checks) == std::set<size_t>{0});
  f.watcher.answered(0);
  f.watcher.check_later(0, f.clock.now());
  checks = f.next();
  CHECK(f.since_start() == milliseconds(500));
  CHECK(slots_of(checks) == std::set<size_t>{0});
  f.watcher.answered(0);
  f.watcher.learn(0, Lesson::CreateFailed);  // it fails: the others go back to their usual schedule from their next pause
  f.watcher.cancel(0);
  f.watcher.check_later(1, f.clock.now());
  CHECK(f.watcher.next_due() == f.clock.now() + seconds(2));
  CHECK(slots_of(f.next()).count(1));
}

TEST_CASE("watcher: with many projects, a quiet project's pause doubles up to the spread's") {
  Fixture f;
  // 100 projects of three services (a spread of 4): each round is one list.
  for (int p = 0; p < 100; ++p)
    for (int n = 0; n < 3; ++n) f.watcher.add("p" + std::to_string(p) + "/service/", ResourceKind::Service, true);
  for (size_t i = 0; i < 3; ++i) {  // only p0's are watched (updates: no forecast, no probe)
    f.watcher.start(i, f.clock.now(), WaitFor::Status);
    f.watcher.check_later(i, f.clock.now());
  }
  const auto round = [&](bool quiet) {
    auto checks = f.next();
    REQUIRE(checks.size() == 1);
    CHECK(checks[0].kind == Check::Kind::List);
    f.watcher.listed(checks[0].slots, quiet);
    for (size_t i : checks[0].slots) f.watcher.check_later(i, f.clock.now());
    return f.since_start();
  };
  CHECK(round(false) == seconds(2));   // the first round after two intervals; a change: the pause stays
  CHECK(round(true) == seconds(4));    // quiet: doubled...
  CHECK(round(true) == seconds(8));    // ...up to the spread's 4 intervals
  CHECK(round(false) == seconds(12));  // a change keeps it
  CHECK(round(false) == seconds(16));
}

TEST_CASE("watcher: a connection wait retries refusals until the wait timeout") {
  Fixture f;
  f.projects(1);
  f.watcher.start(0, f.clock.now(), WaitFor::Create);
  f.watcher.start(0, f.clock.now(), WaitFor::Connection);
  CHECK(f.watcher.connecting(0));
  auto checks = f.watcher.due(kAll);  // checked at once
  REQUIRE(checks.size() == 1);
  CHECK(checks[0].kind == Check::Kind::Connect);
  CHECK(f.watcher.connection_answered(0, false, /*transient=*/true) == ConnectVerdict::TryAgain);
  CHECK(f.watcher.next_due() == f.clock.now() + milliseconds(250));
  CHECK(f.watcher.connecting(0));
  f.next();
  f.clock.advance(std::chrono::minutes(10));
  CHECK(f.watcher.connection_answered(0, false, true) == ConnectVerdict::TimedOut);
  CHECK_FALSE(f.watcher.connecting(0));
  CHECK(f.watcher.idle());

  f.watcher.start(0, f.clock.now(), WaitFor::Connection);  // past its deadline: a whole wait timeout from now
  f.watcher.due(kAll);
  CHECK(f.watcher.connection_answered(0, false, /*transient=*/false) == ConnectVerdict::Refused);
  f.watcher.start(0, f.clock.now(), WaitFor::Connection);
  f.watcher.due(kAll);
  f.clock.advance(std::chrono::minutes(9));
  CHECK(f.watcher.connection_answered(0, true, false) == ConnectVerdict::Accepted);
  CHECK_FALSE(f.watcher.connecting(0));
}
