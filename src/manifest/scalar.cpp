#include "manifest/scalar.h"

#include <charconv>
#include <cmath>
#include <limits>
#include <initializer_list>

namespace dbform {

namespace {

// The YAML 1.2 core schema (spec section 10.3.2), written out by hand rather than with
// std::regex, which is far too slow for manifests of ten thousand services.

bool is_one_of(std::string_view text, std::initializer_list<std::string_view> words) {
  for (auto w : words)
    if (text == w) return true;
  return false;
}

bool all_of_class(std::string_view text, bool (*member)(char)) {
  if (text.empty()) return false;
  for (char c : text)
    if (!member(c)) return false;
  return true;
}

bool is_digit(char c) { return c >= '0' && c <= '9'; }
bool is_octal(char c) { return c >= '0' && c <= '7'; }
bool is_hex(char c) { return is_digit(c) || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F'); }

std::string_view without_sign(std::string_view text) {
  if (!text.empty() && (text[0] == '-' || text[0] == '+')) text.remove_prefix(1);
  return text;
}

// [-+]?[0-9]+ | 0o[0-7]+ | 0x[0-9a-fA-F]+
bool is_core_int(std::string_view text) {
  if (text.substr(0, 2) == "0o") return all_of_class(text.substr(2), is_octal);
  if (text.substr(0, 2) == "0x") return all_of_class(text.substr(2), is_hex);
  return all_of_class(without_sign(text), is_digit);
}

size_t count_digits(std::string_view text, size_t from) {
  size_t i = from;
  while (i < text.size() && is_digit(text[i])) ++i;
  return i - from;
}

// [-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)? | [-+]?\.(inf|Inf|INF) | \.(nan|NaN|NAN)
bool is_core_float(std::string_view text) {
  if (is_one_of(text, {".nan", ".NaN", ".NAN"})) return true;
  std::string_view body = without_sign(text);
  if (is_one_of(body, {".inf", ".Inf", ".INF"})) return true;
  size_t i = 0;
  size_t integer_digits = count_digits(body, i);
  i += integer_digits;
  if (i < body.size() && body[i] == '.') {
    size_t fraction_digits = count_digits(body, i + 1);
    if (integer_digits == 0 && fraction_digits == 0) return false;
    i += 1 + fraction_digits;
  } else if (integer_digits == 0) {
    return false;
  }
  if (i < body.size() && (body[i] == 'e' || body[i] == 'E')) {
    ++i;
    if (i < body.size() && (body[i] == '-' || body[i] == '+')) ++i;
    size_t exponent_digits = count_digits(body, i);
    if (exponent_digits == 0) return false;
    i += exponent_digits;
  }
  return i == body.size();
}

// Only text starting with one of these characters can be null, a boolean or a number; most
// scalars in a manifest (names, regions) are settled by this first look.
bool may_be_typed(std::string_view text) {
  if (text.empty()) return true;
  char c = text[0];
  return is_digit(c) || c == '-' || c == '+' || c == '.' || c == '~' || c == 'n' || c == 'N' ||
         c == 't' || c == 'T' || c == 'f' || c == 'F';
}

}  // namespace

ScalarType resolve_plain_scalar(std::string_view text) {
  if (!may_be_typed(text)) return ScalarType::String;
  if (is_one_of(text, {"", "~", "null", "Null", "NULL"})) return ScalarType::Null;
  if (is_one_of(text, {"true", "True", "TRUE", "false", "False", "FALSE"})) return ScalarType::Bool;
  if (is_core_int(text)) return ScalarType::Int;
  if (is_core_float(text)) return ScalarType::Float;
  return ScalarType::String;
}

std::optional<long long> parse_yaml_int(std::string_view text) {
  if (!is_core_int(text)) return std::nullopt;
  int base = 10;
  bool negative = false;
  if (text.substr(0, 2) == "0x") {
    base = 16;
    text.remove_prefix(2);
  } else if (text.substr(0, 2) == "0o") {
    base = 8;
    text.remove_prefix(2);
  } else if (text[0] == '+' || text[0] == '-') {
    negative = text[0] == '-';
    text.remove_prefix(1);
  }
  unsigned long long magnitude = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), magnitude, base);
  if (ec != std::errc() || end != text.data() + text.size()) return std::nullopt;
  const auto max = static_cast<unsigned long long>(std::numeric_limits<long long>::max());
  if (magnitude > max) return std::nullopt;
  long long value = static_cast<long long>(magnitude);
  return negative ? -value : value;
}

std::optional<double> parse_yaml_float(std::string_view text) {
  if (!is_core_float(text)) return std::nullopt;
  bool negative = !text.empty() && text[0] == '-';
  std::string_view unsigned_text = text;
  if (!text.empty() && (text[0] == '-' || text[0] == '+')) unsigned_text.remove_prefix(1);
  if (unsigned_text.size() == 4 && unsigned_text[0] == '.') {
    char c = unsigned_text[1];
    if (c == 'i' || c == 'I') {
      double inf = std::numeric_limits<double>::infinity();
      return negative ? -inf : inf;
    }
    if (c == 'n' || c == 'N') return std::numeric_limits<double>::quiet_NaN();
  }
  // std::from_chars wants no leading '+' and accepts ".5" and "5." as YAML does.
  double value = 0;
  auto [end, ec] = std::from_chars(unsigned_text.data(), unsigned_text.data() + unsigned_text.size(), value);
  if (ec == std::errc::result_out_of_range) {
    // Too large or too small for a double: the exponent's sign says which.
    bool tiny = unsigned_text.find("e-") != std::string_view::npos ||
                unsigned_text.find("E-") != std::string_view::npos;
    value = tiny ? 0.0 : std::numeric_limits<double>::infinity();
  } else if (ec != std::errc() || end != unsigned_text.data() + unsigned_text.size()) {
    return std::nullopt;
  }
  return negative ? -value : value;
}

std::string canonical_decimal(double value) {
  char buf[400];  // enough for any double in fixed notation
  auto [end, ec] = std::to_chars(buf, buf + sizeof buf, value, std::chars_format::fixed);
  if (ec != std::errc()) return std::to_string(value);
  return std::string(buf, end);
}

}  // namespace dbform
