#include "manifest/value_reader.h"

#include "util/clock.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <unordered_set>

#include "manifest/cidr.h"
#include "manifest/interpolate.h"
#include "util/text.h"

namespace dbform {

namespace {

constexpr std::string_view kShared = "shared";
constexpr double kLargestExactInteger = 9007199254740992.0;  // 2^53

bool is_alnum(char c) { return std::isalnum(static_cast<unsigned char>(c)) != 0; }

bool is_valid_region(std::string_view s) {
  if (s.empty() || s.size() > kMaxRegionLength) return false;
  auto lower_or_digit = [](char c) { return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9'); };
  if (!lower_or_digit(s[0])) return false;
  return std::all_of(s.begin(), s.end(), [&](char c) { return lower_or_digit(c) || c == '-'; });
}

bool is_env_var_name(std::string_view s) {
  if (s.empty() || std::isdigit(static_cast<unsigned char>(s[0]))) return false;
  return std::all_of(s.begin(), s.end(), [](char c) { return is_alnum(c) || c == '_'; });
}

// "1000": digits without a leading zero; what the API's string form of cpu_millis looks like.
bool is_api_integer_text(std::string_view s) {
  return !s.empty() && s.size() <= 18 && s[0] != '0' &&
         std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; });
}

// "4", "0.5", "12.25": a positive decimal without exponent or sign.
bool is_positive_decimal_text(std::string_view s) {
  size_t dot = s.find('.');
  std::string_view whole = s.substr(0, dot);
  std::string_view fraction = dot == std::string_view::npos ? std::string_view() : s.substr(dot + 1);
  auto digits = [](std::string_view d) {
    return !d.empty() && std::all_of(d.begin(), d.end(), [](char c) { return c >= '0' && c <= '9'; });
  };
  if (!digits(whole) || (dot != std::string_view::npos && !digits(fraction))) return false;
  if (whole.size() > 1 && whole[0] == '0') return false;
  return s.find_first_not_of("0.") != std::string_view::npos;  // not zero
}

std::string excerpt(const std::string& s) { return s.size() <= 60 ? s : s.substr(0, 57) + "..."; }

const char* scalar_type_noun(ScalarType t) {
  switch (t) {
    case ScalarType::Null: return "an empty value";
    case ScalarType::Bool: return "the boolean";
    case ScalarType::Int: return "the integer";
    case ScalarType::Float: return "the number";
    case ScalarType::String: return "the text";
  }
  return "the value";
}

}  // namespace

ValueReader::ValueReader(std::string file, const EnvLookup& env, Diagnostics& diags)
    : file_(std::move(file)), env_(env), diags_(diags) {}

Location ValueReader::location(const YamlNode& node) const {
  const YAML::Mark& mark = node.mark;
  if (mark.is_null()) return {file_, 0, 0};
  return {file_, mark.line + 1, mark.column + 1};
}

Entry ValueReader::entry(const YamlNode& key, const YamlNode& value, std::string path) const {
  return {&value, std::move(path), location(value.is_null() ? key : value)};
}

Entry ValueReader::item(const YamlNode& value, std::string path) const {
  return {&value, std::move(path), location(value)};
}

void ValueReader::error(const Location& where, const std::string& field, std::string message, std::string hint) {
  diags_.error(where, field, std::move(message), std::move(hint));
}

void ValueReader::warning(const Location& where, const std::string& field, std::string message,
                          std::string hint) {
  diags_.warning(where, field, std::move(message), std::move(hint));
}

std::string ValueReader::describe(const YamlNode& node) const {
  if (node.is_map()) return "a mapping";
  if (node.is_sequence()) return "a list";
  if (!node.is_scalar()) return "an empty value";
  ScalarType type = node.tag == "?" ? resolve_plain_scalar(node.scalar) : ScalarType::String;
  return std::string(scalar_type_noun(type)) + " `" + excerpt(node.scalar) + "`";
}

std::string ValueReader::describe_without_text(const YamlNode& node) const {
  if (!node.is_scalar()) return describe(node);
  return "a value of " + std::to_string(node.scalar.size()) + " bytes";
}

std::string ValueReader::found(const ScalarValue& v) const {
  // Whole, not an excerpt: the loader hides a secret by finding its whole value in the message.
  if (v.from_env)
    return v.text.size() <= 200 ? "found `" + v.text + "` (after ${...} interpolation)"
                                : "found a text of " + std::to_string(v.text.size()) + " characters (after ${...} interpolation)";
  if (v.type == ScalarType::Null) return "found an empty value";
  if (v.text.empty()) return "found an empty text";
  if (v.text.size() > kMaxNameLength) return "found a text of " + std::to_string(v.text.size()) + " characters";
  return "found " + std::string(scalar_type_noun(v.type)) + " `" + excerpt(v.text) + "`";
}

void ValueReader::wrong(const Entry& e, std::string_view expected, const ScalarValue& v, std::string hint) {
  if (hint.empty() && v.type != ScalarType::String && v.type != ScalarType::Null &&
      expected.find("text") != std::string_view::npos)
    hint = "quote it to use it as text: \"" + excerpt(v.text) + "\"";
  error(e.where, e.path, "expected " + std::string(expected) + ", " + found(v), std::move(hint));
}

std::optional<ScalarValue> ValueReader::scalar(const Entry& e, std::string_view expected) {
  const YamlNode& n = *e.value;
  if (n.is_null()) return ScalarValue{ScalarType::Null, "", false};
  if (!n.is_scalar()) {
    error(e.where, e.path, "expected " + std::string(expected) + ", found " + describe(n));
    return std::nullopt;
  }
  const std::string& tag = n.tag;
  ScalarValue v;
  if (tag == "?") {
    v.type = resolve_plain_scalar(n.scalar);
  } else if (tag == "!" || tag == "tag:yaml.org,2002:str") {  // quoted, block, or !!str
    v.type = ScalarType::String;
  } else {
    error(e.where, e.path, "unsupported YAML tag `" + tag + "`", "remove the tag; write the value plainly");
    return std::nullopt;
  }
  if (!has_interpolation(n.scalar)) {
    v.text = n.scalar;
    return v;
  }
  Interpolated result = interpolate(n.scalar, env_);
  for (auto& problem : result.problems) error(e.where, e.path, problem.message, problem.hint);
  if (!result.problems.empty()) return std::nullopt;
  v.text = std::move(result.text);
  v.from_env = result.substituted;
  if (v.from_env) interpolated_.push_back({e.where, v.text});
  return v;
}

void ValueReader::version(const Entry& e) {
  auto v = scalar(e, "`version: 1`");
  if (!v) return;
  ScalarType t = v->numeric_type();
  std::optional<double> number;
  if (t == ScalarType::Int) number = parse_yaml_int(v->text);
  if (t == ScalarType::Float) number = parse_yaml_float(v->text);
  if (number && *number == 1) return;
  if (number) {
    error(e.where, e.path, "unsupported manifest version `" + v->text + "`: this dbform reads version 1",
          "upgrade dbform, or write the manifest in the version 1 format");
    return;
  }
  wrong(e, "`version: 1`", *v, v->type == ScalarType::String ? "write it without quotes" : "");
}

std::optional<std::string> ValueReader::text(const Entry& e, std::string_view expected) {
  auto v = scalar(e, expected);
  if (!v) return std::nullopt;
  if (v->type != ScalarType::String && !v->from_env) {
    wrong(e, expected, *v);
    return std::nullopt;
  }
  return std::move(v->text);
}

std::optional<std::string> ValueReader::name(const Entry& e) {
  constexpr std::string_view expected =
      "a name (text of 1-128 letters, digits, '-' and '_', starting with a letter or digit)";
  auto v = scalar(e, expected);
  if (!v) return std::nullopt;
  if ((v->type != ScalarType::String && !v->from_env) || !is_valid_name(v->text)) {
    std::string hint;
    if (v->type == ScalarType::String && !v->text.empty() && v->text.size() <= kMaxNameLength)
      hint = "names appear in addresses like PROJECT/services/NAME and NAME.FIELD, so '/', '.' and spaces "
             "are not allowed";
    wrong(e, expected, *v, hint);
    return std::nullopt;
  }
  return std::move(v->text);
}

std::optional<std::string> ValueReader::peer_id(const Entry& e) {
  constexpr std::string_view expected = "an id (text of 1-128 letters, digits, '-' and '_')";
  auto v = scalar(e, expected);
  if (!v) return std::nullopt;
  if (is_valid_name(v->text) && (v->type == ScalarType::String || v->type == ScalarType::Int || v->from_env))
    return std::move(v->text);  // an account id written as a number is still its digits
  wrong(e, expected, *v);
  return std::nullopt;
}

std::optional<std::string> ValueReader::api_key_env(const Entry& e) {
  constexpr std::string_view expected =
      "the name of an environment variable (text of letters, digits and _, not starting with a digit)";
  auto value = text(e, expected);
  if (!value) return std::nullopt;
  if (!is_env_var_name(*value)) {
    // Never echo the value: a person who got this wrong may have pasted the key itself here.
    error(e.where, e.path, "expected " + std::string(expected) + ", found a value that is not one (not shown)",
          "name the variable that holds the key, e.g. `api_key_env: DBFORM_PROD_DB_KEY`, and put the key in "
          "that variable, never in the manifest");
    return std::nullopt;
  }
  // A pull request's manifest may not make dbform send any variable of the pipeline (a runner's
  // token) as an API key: only a DBFORM_ variable, which the pipeline set for dbform, and none of
  // dbform's own settings. A conventional name (upper case) is shown; another might be a key.
  const bool conventional = std::all_of(value->begin(), value->end(), [](char c) {
    return (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
  });
  const std::string shown = conventional ? "`" + *value + "`" : "a variable (not shown)";
  if (value->rfind("DBFORM_", 0) != 0) {
    error(e.where, e.path, "api_key_env names " + shown + ", which does not begin with DBFORM_: a manifest may name only DBFORM_ variables",
          conventional ? "rename the variable to DBFORM_" + *value + " where the pipeline sets it, and write `api_key_env: DBFORM_" + *value + "`"
                       : "name a variable beginning with DBFORM_, e.g. `api_key_env: DBFORM_PROD_DB_KEY`");
    return std::nullopt;
  }
  static const std::unordered_set<std::string> kSettings = {
      "DBFORM_API_URL", "DBFORM_AUTH_SCHEME", "DBFORM_ALLOW_HTTP", "DBFORM_STATE", "DBFORM_WORKSPACE",
      "DBFORM_STATE_PASSPHRASE", "DBFORM_STATE_KEY_FILE", "DBFORM_STATE_NEW_PASSPHRASE", "DBFORM_STATE_NEW_KEY_FILE",
      "DBFORM_POLICY", "DBFORM_LOG"};
  if (kSettings.count(*value)) {
    error(e.where, e.path, "api_key_env names `" + *value + "`, one of dbform's own settings, which holds no API key",
          "name the variable that holds the project's key, e.g. `api_key_env: DBFORM_PROD_DB_KEY`");
    return std::nullopt;
  }
  return value;
}

std::optional<std::string> ValueReader::region_code(const Entry& e) {
  constexpr std::string_view expected = "a region code (text of lower-case letters, digits and '-', like us-east-1)";
  auto v = scalar(e, expected);
  if (!v) return std::nullopt;
  if ((v->type != ScalarType::String && !v->from_env) || !is_valid_region(v->text)) {
    std::string suggestion = v->text;
    for (auto& c : suggestion) {
      c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
      if (c == ' ' || c == '_') c = '-';
    }
    std::string hint;
    // Not for an interpolated value: the suggestion is a changed copy of it, which scrubbing a
    // secret value out of the message would not find.
    if (v->type == ScalarType::String && !v->from_env && is_valid_region(suggestion) && suggestion != v->text)
      hint = "did you mean `" + suggestion + "`?";
    wrong(e, expected, *v, hint);
    return std::nullopt;
  }
  return std::move(v->text);
}

std::optional<std::string> ValueReader::cidr(const Entry& e) {
  constexpr std::string_view expected = "a CIDR block as text, like 10.0.0.0/16 or fd00::/8";
  auto value = text(e, expected);
  if (!value) return std::nullopt;
  CidrCheck check = check_cidr(*value);
  if (!check.valid) {
    error(e.where, e.path, "expected " + std::string(expected) + ": " + check.problem);
    return std::nullopt;
  }
  if (!check.network_if_host_bits.empty())
    warning(e.where, e.path, "`" + *value + "` has bits set beyond its prefix length",
            "did you mean `" + check.network_if_host_bits + "`?");
  return value;
}

std::optional<std::string> ValueReader::environment_tag(const Entry& e) {
  constexpr std::string_view expected = "DEV or PROD";
  auto v = scalar(e, expected);
  if (!v) return std::nullopt;
  if (v->type == ScalarType::String || v->from_env) {
    if (v->text == "DEV" || v->text == "PROD") return std::move(v->text);
    std::string guess = closest_match(upper(v->text), {"DEV", "PROD"});
    wrong(e, expected, *v, guess.empty() ? "" : "did you mean `" + guess + "`? tags are upper-case");
    return std::nullopt;
  }
  wrong(e, expected, *v);
  return std::nullopt;
}

std::optional<std::string> ValueReader::fork_strategy(const Entry& e, bool pitr) {
  const std::string_view expected = pitr ? "LAST_SNAPSHOT, NOW or PITR" : "LAST_SNAPSHOT or NOW";
  const std::vector<std::string> accepted =
      pitr ? std::vector<std::string>{"LAST_SNAPSHOT", "NOW", "PITR"} : std::vector<std::string>{"LAST_SNAPSHOT", "NOW"};
  auto v = scalar(e, expected);
  if (!v) return std::nullopt;
  // PITR where it is not accepted is returned: the caller says why that place takes none.
  if (v->text == "LAST_SNAPSHOT" || v->text == "NOW" || v->text == "PITR") return std::move(v->text);
  std::string guess = closest_match(upper(v->text), accepted);
  wrong(e, expected, *v, guess.empty() ? "" : "did you mean `" + guess + "`?");
  return std::nullopt;
}

std::optional<std::string> ValueReader::utc_time(const Entry& e) {
  constexpr std::string_view expected = kUtcTimeExpected;
  auto v = scalar(e, expected);
  if (!v) return std::nullopt;
  if (parse_utc(v->text)) return std::move(v->text);
  wrong(e, expected, *v);
  return std::nullopt;
}

std::optional<std::string> ValueReader::cpu_millis(const Entry& e) {
  constexpr std::string_view expected = "a positive whole number of milli-cores (like 1000) or \"shared\"";
  auto v = scalar(e, expected);
  if (!v) return std::nullopt;
  ScalarType t = v->numeric_type();
  if (t == ScalarType::String && v->text == kShared) return std::string(kShared);
  if (t == ScalarType::String && is_api_integer_text(v->text)) return std::move(v->text);  // "1000"
  if (t == ScalarType::Int) {
    auto n = parse_yaml_int(v->text);
    if (n && *n >= 1) return std::to_string(*n);
  }
  if (t == ScalarType::Float) {
    // JSON Schema counts 1000.0 as an integer; so do we, to agree with editors.
    auto x = parse_yaml_float(v->text);
    if (x && *x >= 1 && *x <= kLargestExactInteger && std::floor(*x) == *x)
      return std::to_string(static_cast<long long>(*x));
  }
  std::string hint;
  if (t == ScalarType::String && upper(v->text) == "SHARED") hint = "did you mean `shared`?";
  wrong(e, expected, *v, hint);
  return std::nullopt;
}

std::optional<std::string> ValueReader::memory_gbs(const Entry& e) {
  constexpr std::string_view expected = "a positive number of gigabytes (like 4 or 0.5) or \"shared\"";
  auto v = scalar(e, expected);
  if (!v) return std::nullopt;
  ScalarType t = v->numeric_type();
  if (t == ScalarType::String && v->text == kShared) return std::string(kShared);
  std::optional<double> x;
  if (t == ScalarType::String && is_positive_decimal_text(v->text)) x = parse_yaml_float(v->text);
  if (t == ScalarType::Int) {
    auto n = parse_yaml_int(v->text);
    if (n && *n >= 1) return std::to_string(*n);
  }
  if (t == ScalarType::Float) x = parse_yaml_float(v->text);
  if (x && std::isfinite(*x) && *x > 0) return canonical_decimal(*x);
  std::string hint;
  if (t == ScalarType::String && upper(v->text) == "SHARED") hint = "did you mean `shared`?";
  wrong(e, expected, *v, hint);
  return std::nullopt;
}

std::optional<long long> ValueReader::replica_count(const Entry& e) {
  return whole_number(e, 0, "a whole number of replicas, 0 or more");
}

std::optional<long long> ValueReader::whole_number(const Entry& e, long long least, std::string_view expected) {
  auto v = scalar(e, expected);
  if (!v) return std::nullopt;
  ScalarType t = v->numeric_type();
  if (t == ScalarType::Int) {
    auto n = parse_yaml_int(v->text);
    if (n && *n >= least) return n;
  }
  if (t == ScalarType::Float) {
    auto x = parse_yaml_float(v->text);
    if (x && *x >= static_cast<double>(least) && *x <= kLargestExactInteger && std::floor(*x) == *x)
      return static_cast<long long>(*x);
  }
  std::string hint;
  if (v->type == ScalarType::String && !v->from_env && parse_yaml_int(v->text))
    hint = "write the number without quotes";
  wrong(e, expected, *v, hint);
  return std::nullopt;
}

std::optional<bool> ValueReader::boolean(const Entry& e) {
  constexpr std::string_view expected = "true or false";
  auto v = scalar(e, expected);
  if (!v) return std::nullopt;
  if (v->numeric_type() == ScalarType::Bool) return v->text == "true" || v->text == "True" || v->text == "TRUE";
  std::string hint;
  if (v->type == ScalarType::String && !v->from_env && resolve_plain_scalar(v->text) == ScalarType::Bool)
    hint = "write it without quotes";
  else if (v->type == ScalarType::String && (v->text == "yes" || v->text == "on" || v->text == "no" || v->text == "off"))
    hint = "did you mean `" + std::string(v->text == "yes" || v->text == "on" ? "true" : "false") + "`?";
  wrong(e, expected, *v, hint);
  return std::nullopt;
}

std::optional<std::vector<std::string>> ValueReader::addons(const Entry& e) {
  static const std::vector<std::string> known = {"time-series", "ai"};
  if (!e.value->is_sequence()) {
    error(e.where, e.path, "expected a list of addons like [time-series, ai], found " + describe(*e.value));
    return std::nullopt;
  }
  std::vector<std::string> out;
  std::unordered_set<std::string> seen;
  bool ok = true;
  for (size_t i = 0; i < e.value->items.size(); ++i) {
    Entry it = item(*e.value->items[i], e.path + "[" + std::to_string(i) + "]");
    auto addon = text(it, "an addon: time-series or ai");
    if (!addon) {
      ok = false;
    } else if (std::find(known.begin(), known.end(), *addon) == known.end()) {
      std::string guess = closest_match(*addon, known);
      error(it.where, it.path, "unknown addon `" + excerpt(*addon) + "`: expected time-series or ai",
            guess.empty() ? "" : "did you mean `" + guess + "`?");
      ok = false;
    } else if (!seen.insert(*addon).second) {
      error(it.where, it.path, "addon `" + *addon + "` is listed twice", "list each addon once");
      ok = false;
    } else {
      out.push_back(*addon);
    }
  }
  if (!ok) return std::nullopt;
  return out;
}

std::optional<std::string> ValueReader::setting(const Entry& e) {
  constexpr std::string_view expected = "a setting's value (text, a number or true/false)";
  auto v = scalar(e, expected);
  if (!v) return std::nullopt;
  if (v->type == ScalarType::Null || v->text.empty()) {
    wrong(e, expected, *v, "remove the setting to use the server's value");
    return std::nullopt;
  }
  return std::move(v->text);
}

}  // namespace dbform
