#include "util/escape.h"

#include <algorithm>
#include <cstdio>

#include "util/text.h"

namespace dbform {

namespace {

size_t longest_backtick_run(std::string_view text) {
  size_t longest = 0, run = 0;
  for (char c : text) longest = std::max(longest, run = c == '`' ? run + 1 : 0);
  return longest;
}

// The code point of the two- or three-byte UTF-8 sequence at `s[i]` when it is one a renderer acts
// on (C1 controls; line and paragraph separators; bidirectional marks, embeddings, overrides and
// isolates, which reorder what is shown), with its length; 0 otherwise.
unsigned invisible_control(std::string_view s, size_t i, size_t& length) {
  const auto b = [&](size_t k) { return static_cast<unsigned char>(s[i + k]); };
  if (b(0) == 0xC2 && i + 1 < s.size() && b(1) >= 0x80 && b(1) < 0xA0) {
    length = 2;
    return b(1);  // U+0080 to U+009F
  }
  if (b(0) == 0xE2 && i + 2 < s.size()) {
    const unsigned cp = 0x2000u | (static_cast<unsigned>(b(1) & 0x3F) << 6) | (b(2) & 0x3F);
    if (b(1) >= 0x80 && b(1) <= 0x81 &&
        ((cp >= 0x200E && cp <= 0x200F) || (cp >= 0x2028 && cp <= 0x202E) || (cp >= 0x2066 && cp <= 0x2069))) {
      length = 3;
      return cp;
    }
  }
  return 0;
}

}  // namespace

std::string shown_text(std::string_view raw) {
  const std::string text = valid_utf8(raw);
  std::string out;
  out.reserve(text.size());
  for (size_t i = 0; i < text.size(); ++i) {
    const unsigned char c = text[i];
    char buf[16];
    size_t length = 0;
    if (c == '\n') out += "\\n";
    else if (c == '\r') out += "\\r";
    else if (c == '\t') out += "\\t";
    else if (c < 0x20 || c == 0x7f) {
      std::snprintf(buf, sizeof buf, "\\x%02x", c);
      out += buf;
    } else if (const unsigned cp = c >= 0xC2 ? invisible_control(text, i, length) : 0; cp != 0) {
      std::snprintf(buf, sizeof buf, "\\u{%x}", cp);
      out += buf;
      i += length - 1;
    } else {
      out += static_cast<char>(c);
    }
  }
  return scrub(out);  // only secrets are left for it to change
}

std::string markdown_code(std::string_view text) {
  const std::string shown = shown_text(text);
  if (shown.empty()) return "` `";
  const std::string fence(longest_backtick_run(shown) + 1, '`');
  // A span that starts or ends with a backtick needs a space inside each end (which CommonMark
  // strips); one that starts and ends with a space gets one more, so that its own are kept.
  const bool pad = shown.front() == '`' || shown.back() == '`' || (shown.front() == ' ' && shown.back() == ' ');
  return fence + (pad ? " " : "") + shown + (pad ? " " : "") + fence;
}

std::string markdown_cell(std::string_view text) {
  const std::string code = markdown_code(text);
  std::string out;
  out.reserve(code.size());
  size_t backslashes = 0;
  for (char c : code) {
    if (c == '|') out += std::string(backslashes, '\\') + "\\|";
    else out += c;
    backslashes = c == '\\' ? backslashes + 1 : 0;
  }
  return out;
}

std::string markdown_fence(std::string_view block) {
  return std::string(std::max<size_t>(3, longest_backtick_run(block) + 1), '`');
}

}  // namespace dbform
