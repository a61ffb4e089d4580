#include "manifest/scalar.h"

#include <catch2/catch.hpp>
#include <cmath>

#include "manifest/cidr.h"
#include "manifest/interpolate.h"

using namespace dbform;

TEST_CASE("manifest: plain scalars are typed by the YAML 1.2 core schema") {
  CHECK(resolve_plain_scalar("") == ScalarType::Null);
  CHECK(resolve_plain_scalar("~") == ScalarType::Null);
  CHECK(resolve_plain_scalar("null") == ScalarType::Null);
  CHECK(resolve_plain_scalar("true") == ScalarType::Bool);
  CHECK(resolve_plain_scalar("FALSE") == ScalarType::Bool);
  CHECK(resolve_plain_scalar("1000") == ScalarType::Int);
  CHECK(resolve_plain_scalar("-5") == ScalarType::Int);
  CHECK(resolve_plain_scalar("0x1F") == ScalarType::Int);
  CHECK(resolve_plain_scalar("0o17") == ScalarType::Int);
  CHECK(resolve_plain_scalar("1.5") == ScalarType::Float);
  CHECK(resolve_plain_scalar(".5") == ScalarType::Float);
  CHECK(resolve_plain_scalar("5.") == ScalarType::Float);
  CHECK(resolve_plain_scalar("1e3") == ScalarType::Float);
  CHECK(resolve_plain_scalar("-.inf") == ScalarType::Float);
  CHECK(resolve_plain_scalar(".NaN") == ScalarType::Float);
  // YAML 1.1 booleans and other look-alikes are text in 1.2.
  CHECK(resolve_plain_scalar("yes") == ScalarType::String);
  CHECK(resolve_plain_scalar("on") == ScalarType::String);
  CHECK(resolve_plain_scalar("1_000") == ScalarType::String);
  CHECK(resolve_plain_scalar("1e") == ScalarType::String);
  CHECK(resolve_plain_scalar(".") == ScalarType::String);
  CHECK(resolve_plain_scalar("2024-01-01") == ScalarType::String);
  CHECK(resolve_plain_scalar("us-east-1") == ScalarType::String);
  CHECK(resolve_plain_scalar("-") == ScalarType::String);
}

TEST_CASE("manifest: YAML numbers parse to their values") {
  CHECK(parse_yaml_int("1000") == 1000);
  CHECK(parse_yaml_int("+7") == 7);
  CHECK(parse_yaml_int("-5") == -5);
  CHECK(parse_yaml_int("0x1F") == 31);
  CHECK(parse_yaml_int("0o17") == 15);
  CHECK(parse_yaml_int("99999999999999999999") == std::nullopt);  // does not fit
  CHECK(parse_yaml_int("1.5") == std::nullopt);
  CHECK(parse_yaml_float("0.5") == 0.5);
  CHECK(parse_yaml_float("+1e3") == 1000.0);
  CHECK(parse_yaml_float("-2.5") == -2.5);
  CHECK(parse_yaml_float("1e-400") == 0.0);
  CHECK(std::isinf(*parse_yaml_float("1e400")));
  CHECK(std::isinf(*parse_yaml_float(".inf")));
  CHECK(std::isnan(*parse_yaml_float(".nan")));
  CHECK(parse_yaml_float("abc") == std::nullopt);
}

TEST_CASE("manifest: canonical decimals are the shortest plain form") {
  CHECK(canonical_decimal(4.0) == "4");
  CHECK(canonical_decimal(0.5) == "0.5");
  CHECK(canonical_decimal(0.1) == "0.1");
  CHECK(canonical_decimal(1e6) == "1000000");
  CHECK(canonical_decimal(12.25) == "12.25");
}

TEST_CASE("manifest: CIDR blocks are checked strictly") {
  CHECK(check_cidr("10.0.0.0/16").valid);
  CHECK(check_cidr("0.0.0.0/0").valid);
  CHECK(check_cidr("255.255.255.255/32").valid);
  CHECK(check_cidr("fd00::/8").valid);
  CHECK(check_cidr("2001:db8::/32").valid);
  CHECK(check_cidr("::ffff:10.0.0.0/104").valid);
  CHECK(check_cidr("::/0").valid);

  CHECK_FALSE(check_cidr("10.0.0.256/16").valid);
  CHECK_FALSE(check_cidr("10.0.0.01/16").valid);  // leading zeros read as octal by some tools
  CHECK_FALSE(check_cidr("10.0.0/16").valid);
  CHECK_FALSE(check_cidr("10.0.0.0.0/16").valid);
  CHECK_FALSE(check_cidr("10.0.0.0/33").valid);
  CHECK_FALSE(check_cidr("10.0.0.0/016").valid);
  CHECK_FALSE(check_cidr("10.0.0.0/").valid);
  CHECK_FALSE(check_cidr("10.0.0.0").valid);
  CHECK_FALSE(check_cidr(" 10.0.0.0/16").valid);
  CHECK_FALSE(check_cidr("fd00::/129").valid);
  CHECK_FALSE(check_cidr("fd00:g::/8").valid);
  CHECK_FALSE(check_cidr("1::2::3/64").valid);

  auto problem = check_cidr("10.0.0.256/16").problem;
  CHECK_THAT(problem, Catch::Contains("`10.0.0.256` is not an IPv4 address"));
  CHECK_THAT(check_cidr("10.0.0.0/33").problem, Catch::Contains("0 to 32"));
  CHECK_THAT(check_cidr("fd00::/129").problem, Catch::Contains("0 to 128"));
}

TEST_CASE("manifest: CIDR blocks with host bits name the network meant") {
  CHECK(check_cidr("10.0.0.0/16").network_if_host_bits.empty());
  CHECK(check_cidr("10.0.0.1/16").network_if_host_bits == "10.0.0.0/16");
  CHECK(check_cidr("10.1.255.0/15").network_if_host_bits == "10.0.0.0/15");
  CHECK(check_cidr("fd00::1/64").network_if_host_bits == "fd00::/64");
  CHECK(check_cidr("fd00::/64").network_if_host_bits.empty());
}

TEST_CASE("manifest: interpolation replaces ${VAR} and keeps $${ literal") {
  EnvLookup env = [](const std::string& name) -> std::optional<std::string> {
    if (name == "DBFORM_VAR_ENV") return "prod";
    if (name == "ENV") return "bare";  // never read: ${ENV} reads DBFORM_VAR_ENV
    if (name == "EMPTYISH") return std::nullopt;
    return std::nullopt;
  };
  auto r = interpolate("db-${ENV}-${ENV}", env);
  CHECK(r.problems.empty());
  CHECK(r.text == "db-prod-prod");
  CHECK(r.substituted);

  r = interpolate("cost $5 and $${ENV} and $", env);
  CHECK(r.problems.empty());
  CHECK(r.text == "cost $5 and ${ENV} and $");
  CHECK_FALSE(r.substituted);

  r = interpolate("${MISSING}-${ENV}-${OTHER}", env);
  REQUIRE(r.problems.size() == 2);
  CHECK(r.problems[0].message == "environment variable `DBFORM_VAR_MISSING` (read by `${MISSING}`) is not set (or is empty)");
  CHECK_THAT(r.problems[1].message, Catch::Contains("`DBFORM_VAR_OTHER`"));

  r = interpolate("${ENV:-dev}", env);
  REQUIRE(r.problems.size() == 1);
  CHECK_THAT(r.problems[0].message, Catch::Contains("defaults like ${X:-y} are not supported"));

  r = interpolate("x${ENV", env);
  REQUIRE(r.problems.size() == 1);
  CHECK_THAT(r.problems[0].message, Catch::Contains("unterminated"));

  CHECK(interpolate("${1ABC}", env).problems.size() == 1);

  // Only NAME set: the error says what to set, and NAME's value goes nowhere.
  EnvLookup bare = [](const std::string& name) -> std::optional<std::string> {
    if (name == "SECRET_TOKEN") return "ghp_abcdef123456";
    return std::nullopt;
  };
  r = interpolate("${SECRET_TOKEN}", bare);
  REQUIRE(r.problems.size() == 1);
  CHECK(r.problems[0].message ==
        "`${SECRET_TOKEN}` reads `DBFORM_VAR_SECRET_TOKEN`, which is not set (or is empty); `SECRET_TOKEN` is set, "
        "but a manifest reads only DBFORM_VAR_ variables");
  CHECK_THAT(r.problems[0].hint, Catch::Contains("set DBFORM_VAR_SECRET_TOKEN"));
  CHECK(r.text.find("ghp_") == std::string::npos);

  // dbform's own variables are never read, not even as DBFORM_VAR_DBFORM_...
  EnvLookup all = [](const std::string& name) -> std::optional<std::string> { return "value-of-" + name; };
  r = interpolate("${DBFORM_API_KEY}", all);
  REQUIRE(r.problems.size() == 1);
  CHECK_THAT(r.problems[0].message, Catch::Contains("dbform's own variable `DBFORM_API_KEY`"));
  r = interpolate("${DBFORM_VAR_CPU}", all);
  REQUIRE(r.problems.size() == 1);
  CHECK_THAT(r.problems[0].hint, Catch::Contains("write ${CPU}"));
  CHECK(interpolate("${}", env).problems.size() == 1);
}
