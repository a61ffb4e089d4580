#include "util/text.h"

#include <algorithm>
#include <cctype>
#include <numeric>

#include <nlohmann/json.hpp>
#include <openssl/rand.h>

#include <map>
#include <mutex>
#include <shared_mutex>
#include <unordered_set>

#include "util/error.h"

namespace dbform {

size_t edit_distance(std::string_view a, std::string_view b) {
  std::vector<size_t> prev(b.size() + 1), cur(b.size() + 1);
  std::iota(prev.begin(), prev.end(), 0);
  for (size_t i = 1; i <= a.size(); ++i) {
    cur[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      size_t sub = prev[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1);
      cur[j] = std::min({prev[j] + 1, cur[j - 1] + 1, sub});
    }
    std::swap(prev, cur);
  }
  return prev[b.size()];
}

std::string closest_match(std::string_view word, const std::vector<std::string>& candidates) {
  std::string best;
  size_t best_distance = std::max<size_t>(2, word.size() / 3) + 1;
  for (const auto& c : candidates) {
    size_t d = edit_distance(word, c);
    if (d < best_distance) {
      best_distance = d;
      best = c;
    }
  }
  return best;
}

std::string join(const std::vector<std::string>& items, std::string_view sep) {
  std::string out;
  for (size_t i = 0; i < items.size(); ++i) {
    if (i) out += sep;
    out += items[i];
  }
  return out;
}

std::string upper(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return out;
}

std::string trim(std::string_view s) {
  auto space = [](char c) { return std::isspace(static_cast<unsigned char>(c)) != 0; };
  while (!s.empty() && space(s.front())) s.remove_prefix(1);
  while (!s.empty() && space(s.back())) s.remove_suffix(1);
  return std::string(s);
}

std::string lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

std::string one_line(std::string_view text) { return one_line_excerpt(text, std::string::npos); }

std::string project_key_variable(std::string_view project_id) {
  std::string name = "DBFORM_API_KEY_";
  for (char c : project_id) {
    char u = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
    name += ((u >= 'A' && u <= 'Z') || (u >= '0' && u <= '9')) ? u : '_';
  }
  return name;
}

std::string valid_utf8(std::string_view text) {
  if (std::all_of(text.begin(), text.end(), [](unsigned char c) { return c < 0x80; })) return std::string(text);
  // nlohmann's serializer knows UTF-8: its `replace` handler turns each invalid sequence into U+FFFD.
  const nlohmann::json as_json = std::string(text);
  return nlohmann::json::parse(as_json.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace))
      .get<std::string>();
}

std::string one_line_excerpt(std::string_view text, size_t max_chars) {
  std::string line;
  bool pending_space = false;
  for (unsigned char c : valid_utf8(text)) {
    if (std::isspace(c)) {
      pending_space = !line.empty();
      continue;
    }
    if (c < 0x20 || c == 0x7f) continue;
    if (pending_space) line += ' ';
    pending_space = false;
    line += static_cast<char>(c);
    if (line.size() > max_chars) {
      size_t cut = max_chars;
      while (cut > 0 && (static_cast<unsigned char>(line[cut]) & 0xC0) == 0x80) --cut;  // not inside a character
      return line.substr(0, cut) + "...";
    }
  }
  return line;
}

namespace {

// Secrets by length, and which three bytes they start with: a text is checked at each position by
// one bit test, and looked up only where some secret starts with those bytes.
struct SecretRegistry {
  std::shared_mutex mu;  // every text shown is scrubbed, from many threads at once: they share it
  std::map<size_t, std::unordered_set<std::string>, std::greater<>> by_length;  // longest first
  std::vector<bool> starts = std::vector<bool>(size_t{1} << 24);
};

SecretRegistry& secrets() {
  static SecretRegistry registry;
  return registry;
}

size_t first_three(std::string_view s, size_t at) {
  return static_cast<size_t>(static_cast<unsigned char>(s[at])) << 16 |
         static_cast<size_t>(static_cast<unsigned char>(s[at + 1])) << 8 | static_cast<unsigned char>(s[at + 2]);
}

constexpr size_t kShortestSecret = 6;

}  // namespace

void remember_secret(std::string_view secret) {
  if (secret.size() < kShortestSecret) return;
  const std::string quoted =
      nlohmann::json(std::string(secret)).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  auto& r = secrets();
  std::unique_lock lock(r.mu);
  for (std::string_view form : {secret, std::string_view(quoted).substr(1, quoted.size() - 2)}) {
    r.by_length[form.size()].emplace(form);
    r.starts[first_three(form, 0)] = true;
  }
}

std::string scrub(std::string_view raw) {
  // Most texts are printable ASCII: valid UTF-8 without a control character, taken as they are.
  const bool printable = std::all_of(raw.begin(), raw.end(), [](unsigned char c) { return c >= 0x20 && c < 0x7f; });
  std::string text;
  if (printable) {
    text = raw;
  } else {
    const std::string valid = valid_utf8(raw);
    text.reserve(valid.size());
    for (size_t i = 0; i < valid.size(); ++i) {
      const unsigned char c = valid[i];
      if (c == 0xC2 && i + 1 < valid.size() && static_cast<unsigned char>(valid[i + 1]) < 0xA0) {
        ++i;  // U+0080 to U+009F, the C1 controls (CSI among them)
        continue;
      }
      if ((c >= 0x20 && c != 0x7f) || c == '\n' || c == '\t') text += static_cast<char>(c);
    }
  }
  auto& r = secrets();
  std::shared_lock lock(r.mu);
  if (r.by_length.empty()) return text;
  std::string out;  // built from the first secret found on: a text holding none is returned as it is
  size_t copied = 0;
  for (size_t i = 0; i + kShortestSecret <= text.size();) {
    size_t matched = 0;
    if (r.starts[first_three(text, i)]) {
      for (const auto& [n, forms] : r.by_length) {
        if (i + n <= text.size() && forms.count(text.substr(i, n))) {
          matched = n;
          break;
        }
      }
    }
    if (!matched) {
      ++i;
      continue;
    }
    out.append(text, copied, i - copied).append("***");
    i += matched;
    copied = i;
  }
  if (copied == 0) return text;
  return out.append(text, copied);
}

std::string shell_quote(std::string_view value) {
  std::string out = "'";
  for (char c : value) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

std::string pgpass_field(std::string_view value) {
  std::string out;
  for (char c : value) {
    if (c == '\\' || c == ':' || c == '*') out += '\\';
    out += c;
  }
  return out;
}

std::string redact_url(const std::string& url) {
  const size_t scheme_end = url.find("://");
  if (scheme_end == std::string::npos) return url;
  const size_t auth_begin = scheme_end + 3;
  size_t auth_end = url.find_first_of("/?#", auth_begin);
  if (auth_end == std::string::npos) auth_end = url.size();
  std::string authority = url.substr(auth_begin, auth_end - auth_begin);
  const size_t at = authority.rfind('@');
  const size_t colon = authority.find(':');
  if (at != std::string::npos && colon < at) authority.erase(colon, at - colon);

  std::string rest = url.substr(auth_end);
  const size_t q = rest.find('?');
  if (q != std::string::npos) {
    std::string kept;
    size_t start = q + 1;
    while (start <= rest.size()) {
      size_t end = std::min(rest.find('&', start), rest.size());
      std::string param = rest.substr(start, end - start);
      if (!param.empty() && param.rfind("password=", 0) != 0 && param != "password")
        kept += (kept.empty() ? "" : "&") + param;
      start = end + 1;
    }
    rest = rest.substr(0, q) + (kept.empty() ? "" : "?" + kept);
  }
  return url.substr(0, auth_begin) + authority + rest;
}

std::string random_password(size_t length) {
  static constexpr std::string_view kAlphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
  // Bytes of 248 or more are dropped, so that each of the 62 characters is equally likely.
  constexpr unsigned kUnbiased = 256 - 256 % kAlphabet.size();
  std::string out;
  while (out.size() < length) {
    unsigned char bytes[64];
    if (RAND_bytes(bytes, sizeof bytes) != 1) throw Error("no cryptographic randomness is available for a password");
    for (unsigned char b : bytes)
      if (b < kUnbiased && out.size() < length) out += kAlphabet[b % kAlphabet.size()];
  }
  return out;
}

}  // namespace dbform
