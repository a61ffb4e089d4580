#pragma once
#include <string>
#include <string_view>
#include <vector>

namespace dbform {

// The candidate closest to `word` by edit distance, or "" when none is close enough to be a
// plausible typo (distance greater than a third of the word's length, at least 2).
std::string closest_match(std::string_view word, const std::vector<std::string>& candidates);

size_t edit_distance(std::string_view a, std::string_view b);

std::string join(const std::vector<std::string>& items, std::string_view sep);

// `s` with its ASCII letters upper-cased, or lower-cased.
std::string upper(std::string_view s);
std::string lower(std::string_view s);

// `s` without the whitespace at either end.
std::string trim(std::string_view s);

// A message that may span lines (libpq's end with a newline: "...failed: Connection refused\n\tIs the
// server running..."): one_line_excerpt() without a length limit.
std::string one_line(std::string_view text);

// "DBFORM_API_KEY_" + id upper-cased with every character outside A-Z0-9 turned into '_'.
std::string project_key_variable(std::string_view project_id);

// The one sanitizer of text that came from outside (API answers, files) before it reaches a
// terminal, a log or a JSON document: every invalid UTF-8 sequence becomes U+FFFD.
std::string valid_utf8(std::string_view text);

// A single line of at most `max_chars` bytes of valid UTF-8 (whitespace runs collapsed, control
// characters dropped), cut on a character boundary with "..." when longer.
std::string one_line_excerpt(std::string_view text, size_t max_chars = 200);

// The process's secrets: API keys in use and every password read from or written to the state
// (with their JSON-escaped form). Shorter than 6 characters is ignored: it would mangle words.
void remember_secret(std::string_view secret);

// The one filter between outside text (API answers, files) and a terminal, a log or JSON output:
// every remembered secret replaced by "***", control characters but newline and tab removed
// (a terminal escape sequence cannot act), and invalid UTF-8 replaced by U+FFFD.
std::string scrub(std::string_view text);

// A new password of `length` letters and digits from the operating system's cryptographic
// generator (OpenSSL RAND_bytes), each character uniform. Throws Error when no randomness is had.
std::string random_password(size_t length = 32);

// `value` as one word of a POSIX shell: in single quotes, each ' written as '\''.
std::string shell_quote(std::string_view value);

// `value` as one field of a pgpass line (`host:port:database:user:password`): `\`, `:` and `*`
// escaped by a backslash as libpq reads them, so that a `*` matches only `*`, never every value.
// A line break cannot be held: the caller refuses it.
std::string pgpass_field(std::string_view value);

// A URL fit to show: the password of its user info and any `password=` query parameter removed
// ("postgres://alice:s3cret@db/x?password=p" -> "postgres://alice@db/x").
std::string redact_url(const std::string& url);

}  // namespace dbform
