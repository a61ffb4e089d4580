#pragma once
// Bounded JSON decoding for everything that comes from outside (API answers, state, journal and
// plan files): a size cap and a nesting cap checked before nlohmann builds anything (a deeply
// nested value would exhaust the stack of every recursive copy, comparison and dump later), and
// for API answers, fields dbform does not know skipped while parsing, never built.
#include <string>
#include <string_view>
#include <unordered_set>

#include <nlohmann/json.hpp>

namespace dbform {

struct JsonLimits {
  size_t max_bytes;
  size_t max_depth;
  // Object keys kept, at any depth; any other key's value is skipped unbuilt. nullptr keeps all.
  const std::unordered_set<std::string>* known_keys = nullptr;
};

// The deepest nesting of arrays and objects in `text` (strings skipped), counting until it passes
// `stop_after`: a linear scan that builds nothing.
size_t json_depth(std::string_view text, size_t stop_after);

enum class JsonProblem { None, TooLarge, TooDeep, NotJson };

// The parsed value, or a discarded one (is_discarded()) with `problem` saying why, without quoting
// the text (it may hold a secret): "N bytes, more than the M allowed", "nested more than M levels
// deep", "not valid JSON (a syntax error at byte N, line L column C)"; `kind`, when given, tells which.
nlohmann::json parse_json_within(std::string_view text, const JsonLimits& limits, std::string& problem,
                                 JsonProblem* kind = nullptr);

// `text` parsed, or a discarded value (is_discarded()) when it is not JSON: the one place, beside
// parse_json_within, that instantiates nlohmann's parser (each unit that did paid for it).
nlohmann::json parse_json(std::string_view text);

// JSON text for output: every invalid UTF-8 sequence in a string (a file name, an API text)
// becomes U+FFFD instead of failing the whole document.
std::string dump_json(const nlohmann::json& j, int indent = -1);
std::string dump_json(const nlohmann::ordered_json& j, int indent = -1);  // keys in their order

// scrub() (util/text.h) applied to every string value of `j`: for outside JSON kept or shown whole
// (an API answer's `raw`, a plan file), so that no secret it echoes and no control character in it
// reaches a file, a terminal or a log. Keys are left as they are (dump_json escapes them).
void scrub_strings(nlohmann::json& j);

}  // namespace dbform
