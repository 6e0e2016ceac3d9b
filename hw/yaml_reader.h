// Strict YAML reading with positions. yaml-cpp 0.7 keeps duplicate keys silently and reports a
// missing key without a location; this layer rejects unknown keys (suggesting the nearest valid
// one), duplicate keys, wrong types and out-of-range values, each as a UserError at FILE:LINE:COL.
// A missing required key is reported at the position of the map that lacks it.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <yaml-cpp/yaml.h>

#include "hw/user_error.h"

namespace cs::hw {

inline constexpr size_t kMaxYamlBytes = 8u << 20;  // larger inputs are refused before parsing
inline constexpr int kMaxYamlDepth = 64;           // deeper nesting is refused (also stops alias cycles)

// The document a node belongs to: its file name (for messages) and its text (to place nodes that
// yaml-cpp gives no mark of their own, such as an empty list item).
struct YamlSource {
  std::string file;
  std::string text;
};

class YamlNode {
 public:
  YamlNode(YAML::Node node, std::shared_ptr<const YamlSource> src, std::string path, int depth);
  YamlNode(const YamlNode&) = default;
  // Rebinds this handle to `o`'s node. (A yaml-cpp handle's own assignment rewrites the node it
  // refers to, in every handle sharing it: a phase's merged workload would become the base's.)
  YamlNode& operator=(const YamlNode& o);

  int line() const { return line_; }  // 1-based; 0 for a node made by code, not read from the text
  int col() const { return col_; }
  const std::string& file() const { return src_->file; }
  // Where the node sits in the document, e.g. `workload.streams[1].ops[0]`, for messages.
  const std::string& path() const { return path_; }
  [[noreturn]] void fail(const std::string& message) const;

  bool is_map() const { return node_.IsMap(); }
  bool is_seq() const { return node_.IsSequence(); }
  bool is_scalar() const { return node_.IsScalar(); }
  bool is_null() const { return node_.IsNull(); }
  bool is_plain() const { return is_plain_scalar(); }  // an unquoted, untagged scalar

  std::string as_string() const;
  // One of `choices`, else an error listing them.
  std::string as_enum(const std::vector<std::string>& choices) const;
  bool as_bool() const;
  int64_t as_int(int64_t min, int64_t max) const;
  // A finite number in [min, max]; `min_exclusive` makes the lower bound strict (e.g. > 0).
  double as_double(double min, double max, bool min_exclusive = false) const;
  std::vector<YamlNode> items() const;  // requires a sequence
  // This map with `over`'s entries put in place of its own of the same key (and added where it has
  // none): a scenario section changed by another one. Entries keep their own positions; the result
  // sits where this map does. Both must be maps (else fail at the one that is not).
  YamlNode merged_with(const YamlNode& over) const;

 private:
  friend class YamlMap;
  bool is_plain_scalar() const;  // unquoted and untagged: the only form numbers and booleans take
  void place_empty_item();       // moves the position of an empty list item onto its '-'

  YAML::Node node_;
  std::shared_ptr<const YamlSource> src_;
  std::string path_;
  int depth_;
  int line_ = 0, col_ = 0;
};

// A map whose keys were checked against the allowed set when it was opened.
class YamlMap {
 public:
  YamlMap(const YamlNode& node, const std::vector<std::string>& allowed);
  // A map whose keys are the user's own names (e.g. SM partitions): any plain key, each once.
  static YamlMap with_any_keys(const YamlNode& node, const std::string& what);
  const YamlNode& node() const { return node_; }
  bool has(std::string_view key) const;
  YamlNode required(std::string_view key) const;
  std::optional<YamlNode> optional(std::string_view key) const;
  // The keys present, in document order.
  std::vector<std::string> keys() const;
  // Exactly one of `keys` must be present; returns its name.
  std::string exactly_one_of(const std::vector<std::string>& keys) const;

 private:
  YamlMap(const YamlNode& node, const std::vector<std::string>* allowed, const std::string& what);
  YamlNode node_;
  std::vector<std::pair<std::string, YamlNode>> entries_;
};

// Parses a document from text; `file` names it in messages. Refuses oversized input, NUL bytes,
// invalid UTF-8 and syntax errors with their positions. Lines may end in LF or CRLF.
YamlNode parse_yaml(std::string_view text, const std::string& file);
// Reads and parses a file (unreadable files are user errors too).
YamlNode load_yaml_file(const std::string& path);

// The candidate closest to `word` by edit distance, or "" when none is reasonably close.
std::string nearest(std::string_view word, const std::vector<std::string>& candidates);

}  // namespace cs::hw
