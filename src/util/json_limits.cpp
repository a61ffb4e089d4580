#include "util/json_limits.h"

#include "util/text.h"

namespace dbform {

using nlohmann::json;

size_t json_depth(std::string_view text, size_t stop_after) {
  size_t depth = 0, deepest = 0;
  bool in_string = false;
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (in_string) {
      if (c == '\\') ++i;
      else if (c == '"') in_string = false;
    } else if (c == '"') {
      in_string = true;
    } else if (c == '[' || c == '{') {
      if (++depth > deepest && (deepest = depth) > stop_after) return deepest;
    } else if ((c == ']' || c == '}') && depth > 0) {
      --depth;
    }
  }
  return deepest;
}

namespace {

void drop_unknown_keys(json& j, const std::unordered_set<std::string>& known) {
  if (j.is_object()) {
    for (auto it = j.begin(); it != j.end();) {
      if (!known.count(it.key())) {
        it = j.erase(it);
      } else {
        drop_unknown_keys(*it, known);
        ++it;
      }
    }
  } else if (j.is_array()) {
    for (auto& item : j) drop_unknown_keys(item, known);
  }
}

}  // namespace

json parse_json_within(std::string_view text, const JsonLimits& limits, std::string& problem, JsonProblem* kind) {
  auto refuse = [&](JsonProblem what, std::string why) {
    problem = std::move(why);
    if (kind) *kind = what;
    return json(json::value_t::discarded);
  };
  problem.clear();
  if (kind) *kind = JsonProblem::None;
  if (text.size() > limits.max_bytes)
    return refuse(JsonProblem::TooLarge,
                  std::to_string(text.size()) + " bytes, more than the " + std::to_string(limits.max_bytes) + " allowed");
  if (json_depth(text, limits.max_depth) > limits.max_depth)
    return refuse(JsonProblem::TooDeep, "nested more than " + std::to_string(limits.max_depth) + " levels deep");
  try {
    // Parsed whole, then pruned: nlohmann's parser with a callback (which could drop each key as it
    // is read) takes half as long again over a list of thousands of services.
    json parsed = json::parse(text, nullptr, /*allow_exceptions=*/true);
    if (limits.known_keys) drop_unknown_keys(parsed, *limits.known_keys);
    return parsed;
  } catch (const json::parse_error& e) {
    // Only where: the parser's own message quotes the text it read.
    // nlohmann's byte is 1-based: the line and column of the byte it stopped at.
    size_t line = 1, column = 1;
    for (size_t i = 0; i + 1 < e.byte && i < text.size(); ++i) {
      if (text[i] == '\n') ++line, column = 1;
      else ++column;
    }
    return refuse(JsonProblem::NotJson, "not valid JSON (a syntax error at byte " + std::to_string(e.byte) + ", line " +
                                            std::to_string(line) + " column " + std::to_string(column) + ")");
  } catch (const json::exception&) {
    return refuse(JsonProblem::NotJson, "not valid JSON");
  }
}

json parse_json(std::string_view text) { return json::parse(text, nullptr, /*allow_exceptions=*/false); }

std::string dump_json(const json& j, int indent) { return j.dump(indent, ' ', false, json::error_handler_t::replace); }
std::string dump_json(const nlohmann::ordered_json& j, int indent) {
  return j.dump(indent, ' ', false, json::error_handler_t::replace);
}

void scrub_strings(nlohmann::json& j) {
  if (j.is_string()) {
    std::string& text = j.get_ref<std::string&>();
    text = scrub(text);
  } else if (j.is_structured()) {
    for (auto& value : j) scrub_strings(value);
  }
}

}  // namespace dbform
