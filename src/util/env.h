#pragma once
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace dbform {

// Environment lookups go through this seam so tests can pass a map instead of mutating the
// process environment.
using EnvLookup = std::function<std::optional<std::string>(const std::string& name)>;

// Reads the real process environment; unset and empty variables both read as nullopt.
EnvLookup process_env();

// The names of the process environment's variables (to look for those that may hold a secret; their
// values are read through an EnvLookup).
std::vector<std::string> process_env_names();

// Whether `text` holds a control character (below U+0020, or DEL): a line break, a tab, an escape.
bool has_control_character(std::string_view text);

// `name`'s value (nullopt when unset or empty), refused with a UsageError that names the variable
// and never quotes the value when it holds a control character: a trailing newline from a secret
// file must never reach an HTTP header, a connection string or a file name (docs/using.md).
std::optional<std::string> checked_env(const EnvLookup& env, const std::string& name);

// The first executable `program` in the directories of $PATH (/usr/bin:/bin when it is unset), as
// a path; nullopt when there is none.
std::optional<std::string> find_on_path(const std::string& program);

}  // namespace dbform
