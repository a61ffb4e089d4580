#include <catch2/catch.hpp>

#include "util/duration.h"
#include "util/text.h"

using namespace dbform;
using std::chrono::minutes;
using std::chrono::seconds;

TEST_CASE("util: durations parse like Terraform's and kubectl's") {
  CHECK(parse_duration("30m") == minutes(30));
  CHECK(parse_duration("1h30m") == minutes(90));
  CHECK(parse_duration("500ms") == Duration(500));
  CHECK(parse_duration("45") == seconds(45));
  CHECK(parse_duration("2h") == std::chrono::hours(2));
  CHECK_FALSE(parse_duration(""));
  CHECK_FALSE(parse_duration("10x"));
  CHECK_FALSE(parse_duration("m"));
  CHECK_FALSE(parse_duration("-5s"));
  CHECK_FALSE(parse_duration("1.5h"));
}

TEST_CASE("util: durations print short") {
  CHECK(format_duration(Duration(850)) == "850ms");
  CHECK(format_duration(seconds(12)) == "12s");
  CHECK(format_duration(seconds(185)) == "3m05s");
  CHECK(format_duration(minutes(62)) == "1h02m");
}

TEST_CASE("util: closest match suggests plausible typos only") {
  std::vector<std::string> keys = {"name", "region_code", "cpu_millis", "memory_gbs"};
  CHECK(closest_match("regoin_code", keys) == "region_code");
  CHECK(closest_match("cpu_milis", keys) == "cpu_millis");
  CHECK(closest_match("colour", keys).empty());
}

TEST_CASE("util: project key variables are upper-cased with non-alphanumerics as underscores") {
  CHECK(project_key_variable("prod-eu.1") == "DBFORM_API_KEY_PROD_EU_1");
  CHECK(project_key_variable("abc123") == "DBFORM_API_KEY_ABC123");
}
