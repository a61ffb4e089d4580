#include "manifest/yaml_tree.h"

#include <algorithm>
#include <sstream>

#include <yaml-cpp/eventhandler.h>
#include <yaml-cpp/exceptions.h>
#include <yaml-cpp/parser.h>

#include "util/text.h"

namespace dbform {

class YamlTreeBuilder : public YAML::EventHandler {
 public:
  struct TooLarge {};
  struct Runaway {};

  YamlTreeBuilder(YamlText& out, size_t text_bytes, size_t max_values, size_t max_aliases)
      : out_(out), max_events_(16 * text_bytes + 1024), max_values_(max_values), max_aliases_(max_aliases) {}

  void OnDocumentStart(const YAML::Mark&) override {
    anchors_.clear();  // anchors belong to their document
    root_ = nullptr;
  }
  void OnDocumentEnd() override {
    if (root_) out_.documents_.push_back(root_);
  }
  void OnNull(const YAML::Mark& mark, YAML::anchor_t anchor) override {
    close_leaf(make(YamlNode::Kind::Null, mark, ""), anchor);
  }
  void OnScalar(const YAML::Mark& mark, const std::string& tag, YAML::anchor_t anchor,
                const std::string& value) override {
    YamlNode* node = make(YamlNode::Kind::Scalar, mark, tag);
    node->scalar = value;
    close_leaf(node, anchor);
  }
  void OnAlias(const YAML::Mark& mark, YAML::anchor_t anchor) override {
    if (++aliases_ > max_aliases_) throw TooLarge{};
    if (anchor >= anchors_.size() || !anchors_[anchor].node)  // the parser refuses an unknown anchor first
      return close_leaf(make(YamlNode::Kind::Null, mark, ""), YAML::NullAnchor);
    if (++events_ > max_events_) throw Runaway{};
    // The same node again, as yaml-cpp's own nodes do; an alias inside its own anchor (`&a [*a]`)
    // counts as one value, the reader never walking a document deeper than a manifest goes.
    const Anchored& target = anchors_[anchor];
    count(target.values);
    attach(target.node, target.values);
  }
  void OnSequenceStart(const YAML::Mark& mark, const std::string& tag, YAML::anchor_t anchor,
                       YAML::EmitterStyle::value) override {
    open(make(YamlNode::Kind::Sequence, mark, tag), anchor);
  }
  void OnMapStart(const YAML::Mark& mark, const std::string& tag, YAML::anchor_t anchor,
                  YAML::EmitterStyle::value) override {
    open(make(YamlNode::Kind::Map, mark, tag), anchor);
  }
  void OnSequenceEnd() override { close(); }
  void OnMapEnd() override { close(); }

 private:
  struct Open {
    YamlNode* node;
    YAML::anchor_t anchor;
    size_t values;                  // with every alias in it expanded
    const YamlNode* key = nullptr;  // a mapping's key waiting for its value
  };
  struct Anchored {
    const YamlNode* node = nullptr;
    size_t values = 1;
  };

  YamlNode* make(YamlNode::Kind kind, const YAML::Mark& mark, const std::string& tag) {
    if (++events_ > max_events_) throw Runaway{};
    count(1);
    YamlNode& node = out_.nodes_.emplace_back();
    node.kind = kind;
    node.mark = mark;
    node.tag = tag;
    return &node;
  }
  void count(size_t values) {
    total_ += values;
    if (total_ > max_values_) throw TooLarge{};
  }
  void remember(const YamlNode* node, YAML::anchor_t anchor, size_t values) {
    if (anchor == YAML::NullAnchor) return;
    if (anchors_.size() <= anchor) anchors_.resize(anchor + 1);
    anchors_[anchor] = {node, values};
  }
  // `node` (of `values` values) is the next child of the innermost open collection, or the root.
  void attach(const YamlNode* node, size_t values) {
    if (open_.empty()) {
      if (!root_) root_ = node;
      return;
    }
    Open& parent = open_.back();
    parent.values += values;
    if (parent.node->kind == YamlNode::Kind::Sequence) {
      parent.node->items.push_back(node);
    } else if (!parent.key) {
      parent.key = node;
    } else {
      parent.node->pairs.emplace_back(parent.key, node);
      parent.key = nullptr;
    }
  }
  void close_leaf(YamlNode* node, YAML::anchor_t anchor) {
    remember(node, anchor, 1);
    attach(node, 1);
  }
  void open(YamlNode* node, YAML::anchor_t anchor) {
    remember(node, anchor, 1);  // its size is known once it is complete
    open_.push_back({node, anchor, 1});
  }
  void close() {
    Open done = open_.back();
    open_.pop_back();
    remember(done.node, done.anchor, done.values);
    attach(done.node, done.values);
  }

  YamlText& out_;
  const size_t max_events_, max_values_, max_aliases_;
  std::vector<Open> open_;
  std::vector<Anchored> anchors_;
  const YamlNode* root_ = nullptr;
  size_t total_ = 0, aliases_ = 0, events_ = 0;
};

namespace {

// Where the first byte is that makes `text` no UTF-8 text (a NUL, a byte of no valid sequence),
// as a mark; the null mark when there is none.
YAML::Mark first_byte_not_text(const std::string& text) {
  const std::string valid = valid_utf8(text);
  size_t at = text.find('\0');
  if (valid != text) {
    size_t same = 0;
    while (same < text.size() && same < valid.size() && text[same] == valid[same]) ++same;
    at = std::min(at, same);
  }
  if (at == std::string::npos) return YAML::Mark::null_mark();
  YAML::Mark mark;
  mark.pos = static_cast<int>(at);
  const size_t line_start = text.rfind('\n', at == 0 ? 0 : at - 1);
  mark.line = static_cast<int>(std::count(text.begin(), text.begin() + static_cast<std::ptrdiff_t>(at), '\n'));
  mark.column = static_cast<int>(line_start == std::string::npos || at == 0 ? at : at - line_start - 1);
  return mark;
}

// yaml-cpp's message without what it quotes of the text: "unknown escape character: C" is a byte of
// a file that may be no manifest at all.
std::string without_quoted_text(std::string message) {
  for (const char* quoting : {YAML::ErrorMsg::INVALID_ESCAPE, YAML::ErrorMsg::INVALID_UNICODE, YAML::ErrorMsg::YAML_VERSION}) {
    const std::string prefix = quoting;
    if (message.rfind(prefix, 0) == 0) return prefix.substr(0, prefix.find_last_not_of(": ") + 1);
  }
  return message;
}

}  // namespace

std::string not_text_message() {
  return "the file is not text: it holds a NUL byte or bytes that are not UTF-8 here";
}

std::string not_text_hint(const std::string& what) {
  return "what it holds is not shown; a " + what + " is UTF-8 text (is this the file you meant?)";
}

YamlText::YamlText(const std::string& text, size_t max_values, size_t max_aliases) {
  if (YAML::Mark bad = first_byte_not_text(text); !bad.is_null()) {
    problem_ = Problem::NotText;
    syntax_error_at_ = bad;
    return;
  }
  std::istringstream in(text);
  YAML::Parser parser(in);
  YamlTreeBuilder builder(*this, text.size(), max_values, max_aliases);
  try {
    while (parser.HandleNextDocument(builder)) {
    }
    return;
  } catch (const YamlTreeBuilder::TooLarge&) {
    problem_ = Problem::TooLarge;
  } catch (const YamlTreeBuilder::Runaway&) {
    problem_ = Problem::Runaway;
  } catch (const YAML::Exception& e) {
    problem_ = Problem::Syntax;
    syntax_error_ = without_quoted_text(e.msg);
    syntax_error_at_ = e.mark;
  }
  documents_.clear();
  nodes_.clear();
}

}  // namespace dbform
