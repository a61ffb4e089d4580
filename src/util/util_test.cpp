#include <catch2/catch.hpp>

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <mutex>
#include <set>
#include <stdexcept>
#include <thread>

#include "util/atomic_file.h"
#include "util/clock.h"
#include "util/duration.h"
#include "util/env.h"
#include "util/error.h"
#include "util/json_limits.h"
#include "util/parallel.h"
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
  // Past the longest a deadline may be: one step beyond it, never an overflow.
  CHECK(parse_duration("87840h") == kMaxDuration);
  CHECK(parse_duration("999999999h") == kMaxDuration + Duration(1));
  std::string many;  // 3,000 terms of 10^9 hours: their sum would overflow 64 bits of milliseconds
  for (int i = 0; i < 3000; ++i) many += "999999999h";
  CHECK(parse_duration(many) == kMaxDuration + Duration(1));
}

TEST_CASE("util: durations print short") {
  CHECK(format_duration(Duration(850)) == "850ms");
  CHECK(format_duration(seconds(12)) == "12s");
  CHECK(format_duration(seconds(185)) == "3m05s");
  CHECK(format_duration(minutes(62)) == "1h02m");
}

TEST_CASE("util: an age reads as ago, and a stamp more than a minute ahead as in the future") {
  CHECK(format_ago(45) == "45s ago");
  CHECK(format_ago(3 * 3600 + 12 * 60) == "3h 12m ago");
  CHECK(format_ago(-30) == "0s ago");  // two clocks a little apart
  CHECK(format_ago(-2 * 86400) == "in the future by 2d (a clock ahead of this one, or a hand edit)");
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

TEST_CASE("util: URLs lose their password in messages") {
  CHECK(redact_url("postgres://alice:s3cret@db.example:5432/dbform?sslmode=require") ==
        "postgres://alice@db.example:5432/dbform?sslmode=require");
  CHECK(redact_url("postgresql://alice:p@ss@db/x") == "postgresql://alice@db/x");
  CHECK(redact_url("postgres://db/x?password=s3cret&sslmode=verify-full") ==
        "postgres://db/x?sslmode=verify-full");
  CHECK(redact_url("postgres://alice@db/x?password=s3cret") == "postgres://alice@db/x");
  CHECK(redact_url("postgres:///x") == "postgres:///x");
  CHECK(redact_url("postgres://[::1]:5432/x") == "postgres://[::1]:5432/x");
  CHECK(redact_url("https://user:url-secret@127.0.0.1:8080/x") == "https://user@127.0.0.1:8080/x");
}

TEST_CASE("util: text from outside becomes one line of valid UTF-8, cut on a character boundary") {
  CHECK(valid_utf8("plain") == "plain");
  CHECK(valid_utf8("caf\xc3\xa9") == "caf\xc3\xa9");
  CHECK(valid_utf8("bad \xff\xfe end") == "bad \xef\xbf\xbd\xef\xbf\xbd end");
  CHECK(valid_utf8("cut \xe2\x82") == "cut \xef\xbf\xbd");
  CHECK(one_line_excerpt("a\n  b\tc\x01\x7f") == "a b c");
  // "é" is two bytes: a cut at 2 bytes must not split it.
  CHECK(one_line_excerpt("a\xc3\xa9\xc3\xa9", 2) == "a...");
  CHECK(one_line_excerpt("\xff\xff\xff", 3) == "\xef\xbf\xbd...");
}

TEST_CASE("util: scrub removes every remembered secret (longest first, and its JSON-quoted form) and control characters") {
  remember_secret("abc");  // too short to remove safely: it would mangle words
  remember_secret("s3cret-password");
  remember_secret("s3cret-password-longer");
  remember_secret("with\"quote");
  CHECK(scrub("abc s3cret-password and s3cret-password-longer.") == "abc *** and ***.");
  CHECK(scrub(R"({"message":"bad with\"quote"})") == R"({"message":"bad ***"})");
  CHECK(scrub("with\"quote") == "***");
  CHECK(scrub("\x1b]0;owned\x07\x1b[2JREADY\xc2\x9b" "31m\r\n") == "]0;owned[2JREADY31m\n");
  CHECK(scrub("caf\xe9 \xc3\xa9") == "caf\xef\xbf\xbd \xc3\xa9");
}


TEST_CASE("util: private files are new, 0600 and unpredictably named, atomic writes leave no temporary file") {
  auto dir = std::filesystem::temp_directory_path() / ("dbform-util-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  const mode_t old_umask = ::umask(0);  // a permissive umask must not widen the mode
  const std::string a = write_new_private_file(dir.string(), "rec-", ".json", "secret-a");
  const std::string b = write_new_private_file(dir.string(), "rec-", ".json", "secret-b");
  ::umask(old_umask);
  CHECK(a != b);
  CHECK(std::filesystem::path(a).filename().string().rfind("rec-", 0) == 0);
  CHECK(std::filesystem::path(a).extension() == ".json");
  struct stat st {};
  REQUIRE(::stat(a.c_str(), &st) == 0);
  CHECK((st.st_mode & 07777) == 0600);
  CHECK(read_file_if_exists(a) == std::optional<std::string>("secret-a"));

  write_file_atomically((dir / "plan.json").string(), "{}", 0644);
  REQUIRE(::stat((dir / "plan.json").c_str(), &st) == 0);
  CHECK((st.st_mode & 07777) == 0644);
  size_t files = 0;
  for ([[maybe_unused]] const auto& entry : std::filesystem::directory_iterator(dir)) ++files;
  CHECK(files == 3);
  CHECK_THROWS_WITH(write_new_private_file((dir / "missing").string(), "rec-", ".json", "x"),
                    Catch::Contains("cannot create") && Catch::Contains("missing"));
  std::filesystem::remove_all(dir);
}

TEST_CASE("util: only regular files are read, without blocking on a FIFO, and links are refused where asked") {
  auto dir = std::filesystem::temp_directory_path() / ("dbform-util-read-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  const std::string file = (dir / "file").string(), fifo = (dir / "fifo").string(), link = (dir / "link").string();
  write_file_atomically(file, "0123456789");
  REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
  std::filesystem::create_symlink(file, link);
  CHECK(read_file_if_exists(file) == std::optional<std::string>("0123456789"));
  CHECK(read_file_if_exists(link) == std::optional<std::string>("0123456789"));
  CHECK_FALSE(read_file_if_exists((dir / "absent").string()));
  CHECK_THROWS_WITH(read_file_if_exists(link, Links::Refuse), Catch::Contains("is a symbolic link, not a regular file"));
  CHECK_THROWS_WITH(read_file_if_exists(fifo), Catch::Contains("is a named pipe (FIFO), not a regular file"));
  CHECK_THROWS_WITH(read_file_if_exists(dir.string()), Catch::Contains("is a directory"));
  CHECK_THROWS_WITH(read_file_if_exists("/dev/zero"), Catch::Contains("is a device"));
  CHECK_THROWS_AS(read_file_if_exists(file, Links::Follow, 9), FileTooLarge);
  CHECK(read_file_if_exists(file, Links::Follow, 10));
  CHECK_NOTHROW(require_regular_or_absent(file, Links::Refuse));
  CHECK_NOTHROW(require_regular_or_absent((dir / "absent").string(), Links::Refuse));
  CHECK_NOTHROW(require_regular_or_absent(link, Links::Follow));
  CHECK_THROWS_WITH(require_regular_or_absent(link, Links::Refuse), Catch::Contains("symbolic link"));
  CHECK_THROWS_WITH(require_regular_or_absent(fifo, Links::Follow), Catch::Contains("named pipe"));
  std::filesystem::remove_all(dir);
}

TEST_CASE("util: environment values with a control character are refused naming the variable, never quoting it") {
  const EnvLookup env = [](const std::string& name) -> std::optional<std::string> {
    if (name == "GOOD") return "a-key_1.2/3=+";
    if (name == "NEWLINE") return "s3cr3t-value\n";
    if (name == "HEADER") return "s3cr3t-value\r\nX-Other: 1";
    if (name == "ESCAPE") return "s3cr3t\x1b[2J";
    return std::nullopt;
  };
  CHECK(checked_env(env, "GOOD") == std::optional<std::string>("a-key_1.2/3=+"));
  CHECK_FALSE(checked_env(env, "UNSET"));
  for (const char* name : {"NEWLINE", "HEADER", "ESCAPE"}) {
    CHECK_THROWS_AS(checked_env(env, name), UsageError);
    CHECK_THROWS_WITH(checked_env(env, name), Catch::StartsWith(std::string(name) + " holds a control character") &&
                                                  !Catch::Contains("s3cr3t"));
  }
}

TEST_CASE("util: shortages are named as such, other exceptions keep their message") {
  CHECK(describe_exception(std::bad_alloc()) == "the system is out of memory");
  CHECK_THAT(describe_exception(std::system_error(std::make_error_code(std::errc::resource_unavailable_try_again))),
             Catch::StartsWith("the system is short of threads or memory"));
  CHECK(describe_exception(std::runtime_error("plain")) == "plain");
}

TEST_CASE("util: generated passwords are long, alphanumeric and never repeat") {
  const std::string a = random_password(), b = random_password();
  CHECK(a.size() == 32);
  CHECK(a != b);
  CHECK(std::all_of(a.begin(), a.end(), [](unsigned char c) { return std::isalnum(c) != 0; }));
  CHECK(random_password(100).size() == 100);
}

TEST_CASE("util: bounded JSON: size and depth caps before parsing, unknown keys skipped, brackets in strings ignored") {
  std::string problem;
  JsonProblem kind;
  CHECK(json_depth(R"({"a": "[[[[{{{{", "b": [[1]]})", 100) == 3);
  CHECK(json_depth(R"({"a": "\"[[[["})", 100) == 1);
  CHECK(parse_json_within(std::string(100, ' '), JsonLimits{10, 8}, problem, &kind).is_discarded());
  CHECK(kind == JsonProblem::TooLarge);
  CHECK(parse_json_within(std::string(100000, '[') + std::string(100000, ']'), JsonLimits{1 << 20, 32}, problem, &kind)
            .is_discarded());
  CHECK(kind == JsonProblem::TooDeep);
  CHECK(problem == "nested more than 32 levels deep");
  CHECK(parse_json_within(R"({"password": "hunter2")", JsonLimits{1 << 20, 32}, problem, &kind).is_discarded());
  CHECK(kind == JsonProblem::NotJson);
  CHECK(problem.find("hunter2") == std::string::npos);
  const std::unordered_set<std::string> known = {"name", "endpoint", "host"};
  auto j = parse_json_within(R"({"name": "a", "junk": {"deep": [1, 2, 3]}, "endpoint": {"host": "h", "x": 1}})",
                             JsonLimits{1 << 20, 32, &known}, problem, &kind);
  CHECK(kind == JsonProblem::None);
  CHECK(j == nlohmann::json::parse(R"({"name": "a", "endpoint": {"host": "h"}})"));
  // A list's items too (an answer is often an array of objects).
  j = parse_json_within(R"([{"name": "a", "junk": 1}, {"endpoint": [{"host": "h", "x": {"y": 1}}]}])",
                        JsonLimits{1 << 20, 32, &known}, problem, &kind);
  CHECK(j == nlohmann::json::parse(R"([{"name": "a"}, {"endpoint": [{"host": "h"}]}])"));
  CHECK(dump_json(nlohmann::json("caf\xe9")) == "\"caf\xef\xbf\xbd\"");
}

TEST_CASE("util: in_parallel runs every piece once on several threads and returns the results in order") {
  std::mutex mu;
  std::set<std::thread::id> threads;
  auto squares = in_parallel<size_t>(200, 4, [&](size_t i) {
    std::lock_guard<std::mutex> lock(mu);
    threads.insert(std::this_thread::get_id());
    return i * i;
  });
  REQUIRE(squares.size() == 200);
  for (size_t i = 0; i < squares.size(); ++i) CHECK(squares[i] == i * i);
  CHECK(threads.size() <= 4);
  CHECK(in_parallel<int>(0, 4, [](size_t) { return 1; }).empty());

  // Every piece runs although some throw; the first failure by index is the one rethrown.
  std::atomic<int> ran{0};
  try {
    for_each_in_parallel(50, 3, [&](size_t i) {
      ++ran;
      if (i == 7 || i == 30) throw std::runtime_error("piece " + std::to_string(i));
    });
    FAIL("no exception");
  } catch (const std::runtime_error& e) {
    CHECK(std::string(e.what()) == "piece 7");
  }
  CHECK(ran == 50);
}

TEST_CASE("util: UTC times from 1970 to 9999 are read and written back - past system_clock's 2262 too") {
  using dbform::format_utc;
  using dbform::parse_utc;
  for (const char* text : {"1970-01-01T00:00:00Z", "2026-02-28T23:59:59Z", "2262-04-11T23:47:17Z",
                           "2300-01-01T00:00:00Z", "2400-02-29T12:00:00Z", "9999-12-31T23:59:59Z"}) {
    INFO(text);
    const auto t = parse_utc(text);
    REQUIRE(t);
    CHECK(format_utc(*t) == text);
  }
  CHECK(*parse_utc("2300-01-01T00:00:00Z") > *parse_utc("2262-04-11T23:47:16Z"));
  CHECK(*parse_utc("9999-12-31T23:59:59Z") > dbform::utc_time(std::chrono::system_clock::now()));
  CHECK(format_utc(std::chrono::system_clock::time_point(std::chrono::seconds(1767225600))) == "2026-01-01T00:00:00Z");
  for (const char* text : {"1969-12-31T23:59:59Z", "2026-02-30T00:00:00Z", "2100-02-29T00:00:00Z",
                           "2026-01-01T24:00:00Z", "2026-01-01T00:60:00Z", "2026-01-01T00:00:60Z",
                           "10000-01-01T00:00:00Z", "2026-01-01 00:00:00Z", "2026-01-01T00:00:00", "+026-01-01T00:00:00Z",
                           "2026-1-01T00:00:00Z", ""}) {
    INFO(text);
    CHECK(!parse_utc(text));
  }
}
