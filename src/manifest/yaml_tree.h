#pragma once
// A YAML text as the manifest reader sees it, built from yaml-cpp's parser events in one pass (no
// yaml-cpp nodes), within caps that keep a hostile file from costing more than its size would:
//  - aliases let a few lines stand for a huge document ("billion laughs"); the reader walks every
//    alias as a copy, so the values with every alias expanded are counted as they come, and the
//    parse stops past the cap;
//  - yaml-cpp 0.7's parser, on some malformed input (found by fuzz_manifest), emits events without
//    end: more events than the text could hold stop it.
// Internal to the manifest module.
#include <deque>
#include <string>
#include <utility>
#include <vector>

#include <yaml-cpp/mark.h>

namespace dbform {

struct YamlNode {
  enum class Kind { Null, Scalar, Sequence, Map };
  Kind kind = Kind::Null;
  YAML::Mark mark = YAML::Mark::null_mark();
  std::string tag;     // as yaml-cpp reports it: "?" for a plain scalar, "!" for a quoted one
  std::string scalar;  // a scalar's text
  std::vector<const YamlNode*> items;                               // a sequence's
  std::vector<std::pair<const YamlNode*, const YamlNode*>> pairs;  // a mapping's, in order (repeats kept)

  bool is_null() const { return kind == Kind::Null; }
  bool is_scalar() const { return kind == Kind::Scalar; }
  bool is_sequence() const { return kind == Kind::Sequence; }
  bool is_map() const { return kind == Kind::Map; }
};

// The error and hint for a file that is not text (Problem::NotText), naming what it should have been.
std::string not_text_message();
std::string not_text_hint(const std::string& what);

class YamlText {
 public:
  // NotText: a NUL byte, or bytes that are not UTF-8 (a binary file, /proc/self/environ): the
  // text is not parsed, and syntax_error_at() is where the first such byte is.
  enum class Problem { None, NotText, Syntax, TooLarge, Runaway };

  YamlText(const std::string& text, size_t max_values, size_t max_aliases);
  YamlText(const YamlText&) = delete;
  YamlText& operator=(const YamlText&) = delete;

  Problem problem() const { return problem_; }
  // yaml-cpp's message, without the text it quotes (an escape, a version, a code point): a file
  // that is not YAML is not shown.
  const std::string& syntax_error() const { return syntax_error_; }
  const YAML::Mark& syntax_error_at() const { return syntax_error_at_; }
  // The root of every document of the text (none for an empty text), when there is no problem.
  const std::vector<const YamlNode*>& documents() const { return documents_; }

 private:
  friend class YamlTreeBuilder;
  std::deque<YamlNode> nodes_;  // never moves a node: the tree points into it
  std::vector<const YamlNode*> documents_;
  Problem problem_ = Problem::None;
  std::string syntax_error_;
  YAML::Mark syntax_error_at_ = YAML::Mark::null_mark();
};

}  // namespace dbform
