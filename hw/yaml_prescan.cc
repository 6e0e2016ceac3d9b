#include "hw/yaml_prescan.h"

#include "hw/user_error.h"
#include "hw/yaml_reader.h"

namespace cs::hw {

size_t utf8_length(std::string_view s, size_t i) {
  const auto b0 = static_cast<unsigned char>(s[i]);
  if (b0 < 0x80) return 1;
  size_t n;
  unsigned char lo = 0x80, hi = 0xBF;  // allowed range of the second byte
  if (b0 >= 0xC2 && b0 <= 0xDF) n = 2;
  else if (b0 == 0xE0) n = 3, lo = 0xA0;
  else if (b0 == 0xED) n = 3, hi = 0x9F;
  else if (b0 >= 0xE1 && b0 <= 0xEF) n = 3;
  else if (b0 == 0xF0) n = 4, lo = 0x90;
  else if (b0 >= 0xF1 && b0 <= 0xF3) n = 4;
  else if (b0 == 0xF4) n = 4, hi = 0x8F;
  else return 0;
  if (i + n > s.size()) return 0;
  const auto b1 = static_cast<unsigned char>(s[i + 1]);
  if (b1 < lo || b1 > hi) return 0;
  for (size_t k = 2; k < n; ++k)
    if ((static_cast<unsigned char>(s[i + k]) & 0xC0) != 0x80) return 0;
  return n;
}

std::pair<int, int> position_of(std::string_view text, size_t at) {
  int line = 1, col = 1;
  for (size_t i = 0; i < at && i < text.size(); ++i) {
    if (text[i] == '\n') {
      ++line;
      col = 1;
    } else {
      ++col;
    }
  }
  return {line, col};
}

namespace {

bool is_blank(char c) { return c == ' ' || c == '\t' || c == '\r'; }
bool is_flow_indicator(char c) { return c == ',' || c == '[' || c == ']' || c == '{' || c == '}'; }

// Why each check: yaml-cpp recurses once per bracket level (runaway nesting overflows the stack),
// takes an unclosed double quote up to the end of the file silently, loops forever on a ',' where
// a token starts outside brackets, and parses only the first of several documents.
class Prescan {
 public:
  Prescan(std::string_view text, const std::string& file) : t_(text), file_(file) {}

  void run() {
    begin_ = t_.substr(0, 3) == "\xEF\xBB\xBF" ? 3 : 0;  // a byte order mark is no content
    for (size_t i = begin_; i < t_.size();) {
      if ((i == begin_ || t_[i - 1] == '\n') && !quote_) {
        const size_t next = line_start(i);
        if (next != i) {
          i = next;
          continue;
        }
      }
      size_t n = checked_length(i);
      if (quote_) n = in_quote(i, n);
      else if (comment_) comment_ = t_[i] != '\n';
      else token(i);
      if (!quote_ && t_[i] == '\n') start_ = true;
      i += n;
    }
    if (quote_) fail(quote_at_, "a quoted string starting here is never closed");
  }

 private:
  [[noreturn]] void fail(size_t at, const std::string& msg) const {
    auto [line, col] = position_of(t_, at);
    throw UserError(file_, line, col, msg);
  }

  // The byte length of the character at i, which must be UTF-8 text.
  size_t checked_length(size_t i) const {
    if (t_[i] == '\0') fail(i, "binary data (a NUL byte): a scenario is UTF-8 text");
    const size_t n = utf8_length(t_, i);
    if (n == 0) fail(i, "invalid UTF-8: a scenario is UTF-8 text");
    return n;
  }

  bool space_or_end(size_t i) const { return i >= t_.size() || is_blank(t_[i]) || t_[i] == '\n'; }

  void begin_content(size_t at) {
    if (ended_) fail(at, "more than one YAML document; a file holds one");
    content_ = true;
  }

  // At the start of a line outside quotes: skips a line of a block scalar, a document marker or a
  // directive, returning where scanning goes on (i itself when the line is to be scanned).
  size_t line_start(size_t i) {
    int indent = 0;
    size_t j = i;
    while (j < t_.size() && t_[j] == ' ') ++j, ++indent;
    while (j < t_.size() && is_blank(t_[j])) ++j;
    const bool blank = j == t_.size() || t_[j] == '\n';
    if (block_indent_ >= 0 && (blank || indent > block_indent_)) return literal_line(i);
    block_indent_ = -1;
    line_indent_ = indent;
    const auto marker = [&](std::string_view m) { return t_.substr(i, 3) == m && space_or_end(i + 3); };
    if (marker("---") && (content_ || ended_)) fail(i, "more than one YAML document; a file holds one");
    if (marker("---") || marker("...")) {
      ended_ = ended_ || marker("...");
      return i + 3;
    }
    if (t_[i] == '%' && !content_) {  // a directive
      const size_t end = t_.find('\n', i);
      return end == std::string_view::npos ? t_.size() : end;
    }
    return i;
  }

  // A line of a block scalar is text: only its bytes are checked. Returns the next line's start.
  size_t literal_line(size_t i) const {
    while (i < t_.size() && t_[i] != '\n') i += checked_length(i);
    return i < t_.size() ? i + 1 : i;
  }

  // Whether the '|' or '>' at i is a block scalar header: indentation and chomping indicators,
  // then only white space and a comment up to the end of the line.
  bool block_header(size_t i) const {
    size_t j = i + 1;
    for (int k = 0; k < 2 && j < t_.size() && (t_[j] == '+' || t_[j] == '-' || (t_[j] >= '1' && t_[j] <= '9')); ++k)
      ++j;
    const size_t indicators_end = j;
    while (j < t_.size() && is_blank(t_[j])) ++j;
    if (j < t_.size() && t_[j] == '#' && j > indicators_end) return true;
    return j == t_.size() || t_[j] == '\n';
  }

  // The character at i (n bytes) inside a quoted string; returns how many bytes it takes.
  size_t in_quote(size_t i, size_t n) {
    const char c = t_[i];
    if (quote_ == '"' && c == '\\' && i + 1 < t_.size())
      return 1 + checked_length(i + 1);  // an escape: the next character belongs to the string
    if (c != quote_) return n;
    if (quote_ == '\'' && i + 1 < t_.size() && t_[i + 1] == '\'') return 2;  // '' is a quote in the string
    quote_ = 0;
    after_quote_ = true;
    return n;
  }

  // A character outside quotes, comments and block scalars.
  void token(size_t i) {
    const char c = t_[i];
    if (is_blank(c) || c == '\n') {
      if (property_) start_ = true;
      property_ = after_quote_ = false;
      return;
    }
    if (c == '#' && (i == begin_ || is_blank(t_[i - 1]) || t_[i - 1] == '\n')) {
      comment_ = true;
      property_ = false;
      return;
    }
    const bool flow = depth_ > 0;
    if (property_ && !(flow && is_flow_indicator(c))) return;  // the rest of a tag or an anchor
    property_ = false;
    const bool after_quote = after_quote_, after_flow = closed_flow_;
    after_quote_ = closed_flow_ = false;
    begin_content(i);
    const bool at_start = start_;
    start_ = false;
    switch (c) {
      case '"':
      case '\'':
        if (at_start) quote_ = c, quote_at_ = i;
        break;
      case '[':
      case '{':
        if (!at_start && !flow) break;  // text inside a plain scalar
        if (++depth_ > kMaxYamlDepth) fail(i, "nesting deeper than " + std::to_string(kMaxYamlDepth) + " levels");
        start_ = true;
        break;
      case ']':
      case '}':
        if (flow) closed_flow_ = --depth_ == 0;
        break;
      case ',':
        if (flow) start_ = true;
        else if (at_start || after_flow) fail(i, "YAML syntax error: ',' outside [ ] or { }");
        break;
      case ':':  // a value indicator, or text inside a plain scalar (as in a URL)
        start_ = space_or_end(i + 1) || (flow && (after_quote || is_flow_indicator(t_[i + 1])));
        break;
      case '-':
      case '?':  // a block entry or a complex key, or the first character of a plain scalar
        start_ = at_start && space_or_end(i + 1);
        break;
      case '|':
      case '>':
        if (at_start && !flow && block_header(i)) block_indent_ = line_indent_;
        break;
      case '!':
      case '&':  // a tag or an anchor comes before the node it belongs to
        if (at_start) property_ = start_ = true;
        break;
      default: break;
    }
  }

  std::string_view t_;
  const std::string& file_;
  size_t begin_ = 0;          // where the text starts, after a byte order mark
  int depth_ = 0;             // open flow collections
  char quote_ = 0;            // the quote of the open quoted string, if any
  size_t quote_at_ = 0;       // where it opened
  bool comment_ = false;
  bool start_ = true;         // a node may start here: only white space since an indicator
  bool property_ = false;     // inside a tag or an anchor
  bool after_quote_ = false;  // right after a closing quote (a JSON-like key)
  bool closed_flow_ = false;  // the last token closed a top-level flow collection
  bool content_ = false;      // a document has begun (anything but comments, directives, markers)
  bool ended_ = false;        // a '...' closed the document: any further content is a second one
  int line_indent_ = 0;       // spaces that indent the current line
  int block_indent_ = -1;     // indent of the line holding a block scalar's header, while in it
};

}  // namespace

void prescan_yaml(std::string_view text, const std::string& file) { Prescan(text, file).run(); }

}  // namespace cs::hw
