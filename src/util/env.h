#pragma once
#include <functional>
#include <optional>
#include <string>

namespace dbform {

// Environment lookups go through this seam so tests can pass a map instead of mutating the
// process environment.
using EnvLookup = std::function<std::optional<std::string>(const std::string& name)>;

// Reads the real process environment; unset and empty variables both read as nullopt.
EnvLookup process_env();

}  // namespace dbform
