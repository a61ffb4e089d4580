#pragma once
// The one escaping of text that someone other than dbform wrote (a pull request's file names,
// table and column names, column defaults, waiver reasons, rule messages; an API's answers) before
// it is shown, one function per format it is shown in:
//
//   text      shown_text(): on one line, every control character visible as an escape (`\n`, `\r`,
//             `\t`, `\x1b`, `\x07`...; the C1 controls and the Unicode line, paragraph and
//             direction controls as `\u{2028}`), invalid UTF-8 as U+FFFD, every known secret as
//             `***`. A terminal never acts on it and it never starts a line of its own. It is for
//             reading, not decoding: a backslash is shown as it is.
//   markdown  markdown_code(): shown_text() inside a code span whose fence is longer than any run of
//             backticks in it, so that nothing in it closes the span. GitHub renders nothing inside
//             a code span (no HTML, link, image, emphasis, @mention, #reference or emoji), which
//             backslash escapes or HTML entities do not promise (a mention is found in the text
//             after entities are decoded). So every outside text in a comment is a code span, never
//             prose. markdown_cell() is the same for a table cell, where a `|` would end the cell
//             even inside a span; markdown_fence() the fence of a code block of such lines.
//   json      nlohmann's serializer escapes every control character (`\u001b`) and the caller's
//             scrub() has removed secrets: values keep their real text for programs to read.
#include <string>
#include <string_view>

namespace dbform {

std::string shown_text(std::string_view text);

std::string markdown_code(std::string_view text);

// markdown_code() fit for a GFM table cell: each `|` escaped as `\|` (and a backslash run right
// before one doubled, so that it does not escape the escape).
std::string markdown_cell(std::string_view text);

// A fence of backticks (at least three) longer than any run of backticks in `block`.
std::string markdown_fence(std::string_view block);

}  // namespace dbform
