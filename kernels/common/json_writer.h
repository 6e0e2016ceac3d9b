// A small streaming JSON writer for the kernels' reports: no third-party code, so that every
// program here (host C++ and .cu files alike, C++17) can write its own output.
//
//   std::string out;
//   cs::kernels::JsonWriter w(out);
//   w.begin_object().field("schema_version", 1).key("gpus").begin_array(/*inline=*/true)
//    .value("H100").end_array().end_object();
//
// Strings are escaped as RFC 8259 asks; bytes that are not valid UTF-8 become U+FFFD, so the
// output is always valid JSON. Non-finite doubles are written as null. std::optional values
// that are empty are written as null.
#pragma once

#include <charconv>
#include <cmath>
#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

namespace cs::kernels {

// Appends `s` to `out` as a quoted JSON string.
inline void append_json_string(std::string& out, std::string_view s) {
  static constexpr char kHex[] = "0123456789abcdef";
  out.push_back('"');
  std::size_t i = 0;
  while (i < s.size()) {
    const auto c = static_cast<unsigned char>(s[i]);
    if (c < 0x80) {
      switch (c) {
        case '"': out += "\\\""; break;
        case '\\': out += "\\\\"; break;
        case '\b': out += "\\b"; break;
        case '\f': out += "\\f"; break;
        case '\n': out += "\\n"; break;
        case '\r': out += "\\r"; break;
        case '\t': out += "\\t"; break;
        default:
          if (c < 0x20 || c == 0x7f) {
            out += "\\u00";
            out.push_back(kHex[c >> 4]);
            out.push_back(kHex[c & 0xf]);
          } else {
            out.push_back(static_cast<char>(c));
          }
      }
      ++i;
      continue;
    }
    // A multi-byte UTF-8 sequence: copy it when it is well formed (no overlong forms, no
    // surrogates, nothing past U+10FFFF), else write U+FFFD for its first byte and go on.
    std::size_t len = 0;
    std::uint32_t cp = 0;
    if (c >= 0xc2 && c <= 0xdf) {
      len = 2;
      cp = c & 0x1f;
    } else if (c >= 0xe0 && c <= 0xef) {
      len = 3;
      cp = c & 0x0f;
    } else if (c >= 0xf0 && c <= 0xf4) {
      len = 4;
      cp = c & 0x07;
    }
    bool ok = len != 0 && i + len <= s.size();
    for (std::size_t k = 1; ok && k < len; ++k) {
      const auto cc = static_cast<unsigned char>(s[i + k]);
      ok = (cc & 0xc0) == 0x80;
      cp = (cp << 6) | (cc & 0x3f);
    }
    if (ok) {
      ok = !(len == 3 && cp < 0x800) && !(len == 4 && (cp < 0x10000 || cp > 0x10ffff)) &&
           !(cp >= 0xd800 && cp <= 0xdfff);
    }
    if (ok) {
      out.append(s.data() + i, len);
      i += len;
    } else {
      out += "\xef\xbf\xbd";  // U+FFFD
      ++i;
    }
  }
  out.push_back('"');
}

inline std::string json_quote(std::string_view s) {
  std::string out;
  append_json_string(out, s);
  return out;
}

// Writes one JSON value (normally an object) into a string, pretty-printed with `indent` spaces
// per level (0: everything on one line). Arrays and objects begun with `inline_container` stay on
// one line, which suits short rows of numbers such as a matrix row. Misuse (a value where a key is
// due, an unbalanced end) throws std::logic_error.
class JsonWriter {
 public:
  explicit JsonWriter(std::string& out, int indent = 2) : out_(out), indent_(indent) {}

  JsonWriter& begin_object(bool inline_container = false) { return open('{', inline_container, true); }
  JsonWriter& end_object() { return close('}', true); }
  JsonWriter& begin_array(bool inline_container = false) { return open('[', inline_container, false); }
  JsonWriter& end_array() { return close(']', false); }

  JsonWriter& key(std::string_view k) {
    if (stack_.empty() || !stack_.back().object || key_pending_) {
      throw std::logic_error("JsonWriter: key outside an object or twice in a row");
    }
    separate();
    append_json_string(out_, k);
    out_ += indent_ > 0 ? ": " : ":";
    key_pending_ = true;
    return *this;
  }

  JsonWriter& null() { return scalar("null"); }
  JsonWriter& value(std::nullptr_t) { return null(); }
  JsonWriter& value(bool b) { return scalar(b ? "true" : "false"); }
  JsonWriter& value(const char* s) { return s == nullptr ? null() : value(std::string_view(s)); }
  JsonWriter& value(const std::string& s) { return value(std::string_view(s)); }
  JsonWriter& value(std::string_view s) {
    before_value();
    append_json_string(out_, s);
    return *this;
  }
  template <typename T, std::enable_if_t<std::is_integral_v<T> && !std::is_same_v<T, bool> &&
                                             !std::is_same_v<T, char>, int> = 0>
  JsonWriter& value(T v) {
    char buf[32];
    const auto r = std::to_chars(buf, buf + sizeof buf, v);
    return scalar(std::string_view(buf, static_cast<std::size_t>(r.ptr - buf)));
  }
  JsonWriter& value(double v) {
    if (!std::isfinite(v)) return null();
    char buf[64];
    const auto r = std::to_chars(buf, buf + sizeof buf, v);  // shortest round-trip form
    return scalar(std::string_view(buf, static_cast<std::size_t>(r.ptr - buf)));
  }
  JsonWriter& value(float v) { return value(static_cast<double>(v)); }
  template <typename T>
  JsonWriter& value(const std::optional<T>& v) {
    return v ? value(*v) : null();
  }
  template <typename T>
  JsonWriter& value(const std::vector<T>& v, bool inline_container = true) {
    begin_array(inline_container);
    for (const auto& e : v) value(e);
    return end_array();
  }

  template <typename T>
  JsonWriter& field(std::string_view k, const T& v) {
    key(k);
    return value(v);
  }
  JsonWriter& field(std::string_view k, const char* v) {
    key(k);
    return value(v);
  }

  // True once the top-level value is complete.
  bool done() const { return stack_.empty() && wrote_top_; }

 private:
  struct Level {
    bool object;
    bool inline_container;
    std::size_t count;
  };

  void newline_and_indent(std::size_t depth) {
    if (indent_ <= 0) return;
    out_.push_back('\n');
    out_.append(depth * static_cast<std::size_t>(indent_), ' ');
  }

  // Writes the comma and line break due before the next element of the innermost container.
  void separate() {
    Level& l = stack_.back();
    if (l.count++ > 0) out_.push_back(',');
    if (l.inline_container) {
      if (l.count > 1 && indent_ > 0) out_.push_back(' ');
    } else {
      newline_and_indent(stack_.size());
    }
  }

  void before_value() {
    if (stack_.empty()) {
      if (wrote_top_) throw std::logic_error("JsonWriter: a second top-level value");
      wrote_top_ = true;
      return;
    }
    if (stack_.back().object) {
      if (!key_pending_) throw std::logic_error("JsonWriter: value in an object without a key");
      key_pending_ = false;
      return;
    }
    separate();
  }

  JsonWriter& scalar(std::string_view text) {
    before_value();
    out_.append(text);
    return *this;
  }

  JsonWriter& open(char c, bool inline_container, bool object) {
    before_value();
    out_.push_back(c);
    // A container inside an inline one is inline too.
    const bool in_inline = !stack_.empty() && stack_.back().inline_container;
    stack_.push_back(Level{object, inline_container || in_inline, 0});
    return *this;
  }

  JsonWriter& close(char c, bool object) {
    if (stack_.empty() || stack_.back().object != object || key_pending_) {
      throw std::logic_error("JsonWriter: unbalanced end of a container");
    }
    const Level l = stack_.back();
    stack_.pop_back();
    if (l.count > 0 && !l.inline_container) newline_and_indent(stack_.size());
    out_.push_back(c);
    return *this;
  }

  std::string& out_;
  int indent_;
  std::vector<Level> stack_;
  bool key_pending_ = false;
  bool wrote_top_ = false;
};

}  // namespace cs::kernels
