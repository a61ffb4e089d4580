// Preview records (state/previews.h) through the state's codec and journal.
#include <catch2/catch.hpp>

#include "state/codec.h"
#include "state/previews.h"
#include "state/test_support.h"

using namespace dbform;

namespace {

ResourceRecord fork_record(const std::string& preview, const std::string& service, const std::string& created,
                           const std::string& expires) {
  return test::preview_fork("acme", preview, service, created, expires);
}

}  // namespace

TEST_CASE("state: preview records round-trip through the codec and a journal entry - and are grouped by preview") {
  State s = new_state();
  s.upsert(fork_record("pr-2", "orders", "2026-01-02T00:00:00Z", "2026-01-05T00:00:00Z"));
  s.upsert(fork_record("pr-1", "orders", "2026-01-01T00:00:00Z", "2026-01-04T00:00:00Z"));
  s.upsert(fork_record("pr-1", "billing", "2026-01-01T00:00:01Z", "2026-01-04T00:00:01Z"));
  const State back = parse_state(serialize_state(s), "t");
  REQUIRE(back.resources.size() == 3);
  CHECK(back.find("acme/previews/pr-1/services/billing")->name == "billing-pr-1");
  const auto previews = recorded_previews(back);
  REQUIRE(previews.size() == 2);
  CHECK(previews[0].name == "pr-1");  // oldest first
  CHECK(previews[0].forks.size() == 2);
  CHECK(previews[0].expires_at == "2026-01-04T00:00:00Z");
  CHECK(previews[1].name == "pr-2");
  State replayed = new_state();
  replayed.lineage = s.lineage;
  apply_journal_entry(replayed, journal_entry(s, {"acme/previews/pr-2/services/orders"}), "j");
  CHECK(preview_mark(*replayed.find("acme/previews/pr-2/services/orders"))->service == "orders");
}

TEST_CASE("state: a preview record whose address or name is not its mark's is refused - naming the field") {
  State s = new_state();
  ResourceRecord r = fork_record("pr-1", "orders", "2026-01-01T00:00:00Z", "2026-01-04T00:00:00Z");
  r.address = "acme/previews/pr-9/services/orders";
  s.upsert(r);
  CHECK_THROWS_WITH(parse_state(serialize_state(s), "t"),
                    Catch::Contains("settings.preview: expected the address \"acme/previews/pr-1/services/orders\""));
  r = fork_record("pr-1", "orders", "2026-01-01T00:00:00Z", "2026-01-04T00:00:00Z");
  r.name = "orders";
  State t = new_state();
  t.upsert(r);
  CHECK_THROWS_WITH(parse_state(serialize_state(t), "t"), Catch::Contains("the name \"orders-pr-1\""));
  CHECK(is_valid_preview_name("pr-123"));
  CHECK(!is_valid_preview_name("PR-1"));
  CHECK(!is_valid_preview_name(std::string(33, 'a')));
  CHECK(!is_valid_preview_name(""));
}

TEST_CASE("state: a preview record whose expires_at or created_at is not a UTC time is refused - naming the field") {
  for (const std::string expires : {"2026-01-04", "2026-01-04 00:00:00", "2026-02-30T00:00:00Z", "tomorrow", ""}) {
    INFO(expires);
    State s = new_state();
    s.upsert(fork_record("pr-1", "orders", "2026-01-01T00:00:00Z", expires));
    CHECK_THROWS_WITH(parse_state(serialize_state(s), "t"),
                      Catch::Contains("settings.preview: expected an expires_at that is a UTC time"));
  }
  for (const std::string created : {"2026-01-01T00:00:00", "", "2026-01-01T00:00:00+01:00"}) {
    INFO(created);
    State s = new_state();
    s.upsert(fork_record("pr-1", "orders", created, "2026-01-04T00:00:00Z"));
    CHECK_THROWS_WITH(parse_state(serialize_state(s), "t"), Catch::Contains("created_at: expected a UTC time"));
  }
}

TEST_CASE("state: a preview's times up to 9999 are read - past system_clock's 2262 - and it is not expired") {
  State s = new_state();
  s.upsert(fork_record("pr-1", "orders", "2300-01-01T00:00:00Z", "9999-12-31T23:59:59Z"));
  s.upsert(fork_record("pr-2", "orders", "2026-01-01T00:00:00Z", "2300-01-01T00:00:00Z"));
  const State back = parse_state(serialize_state(s), "t");
  const auto previews = recorded_previews(back);
  REQUIRE(previews.size() == 2);
  CHECK(previews[0].name == "pr-2");  // 2026 before 2300: compared as times
  const auto now = std::chrono::system_clock::now();
  CHECK(!preview_expired(previews[0], now));
  CHECK(!preview_expired(previews[1], now));
  CHECK(preview_created(previews[1]) > preview_created(previews[0]));
  // Before 1970 is no time dbform writes: refused, naming the years it takes.
  State old = new_state();
  old.upsert(fork_record("pr-1", "orders", "2026-01-01T00:00:00Z", "1969-12-31T23:59:59Z"));
  CHECK_THROWS_WITH(parse_state(serialize_state(old), "t"),
                    Catch::Contains("expected an expires_at that is a UTC time from 1970 to 9999"));
}
