#pragma once
// How a plain YAML scalar is typed. yaml-cpp hands every scalar over as text, so the manifest
// reader types plain scalars itself, following the YAML 1.2 core schema (what yaml-language-server
// and tests/schema_agreement.py use too): `true` is a boolean, `1000` an integer, `0.5` a float,
// `~`/`null`/empty are null, and everything else, including `yes`, `on` and `2024-01-01`, is text.
// Quoted and block scalars are always text.
#include <optional>
#include <string>
#include <string_view>

namespace dbform {

enum class ScalarType { Null, Bool, Int, Float, String };

ScalarType resolve_plain_scalar(std::string_view text);

// Parse text that resolve_plain_scalar() typed Int ("42", "-7", "0x1F", "0o17") or Float ("0.5",
// "1e3", ".inf"). nullopt when the text is not of that type or the integer does not fit.
std::optional<long long> parse_yaml_int(std::string_view text);
std::optional<double> parse_yaml_float(std::string_view text);

// The shortest plain decimal that reads back as the same double: 4.0 -> "4", 0.5 -> "0.5",
// 1e6 -> "1000000". Never exponent notation, so the API receives an ordinary number string.
std::string canonical_decimal(double value);

}  // namespace dbform
