#include "hw/yaml_reader.h"

#include <yaml-cpp/depthguard.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <filesystem>
#include <cstdlib>
#include <fstream>
#include <map>
#include <sstream>

#include "hw/yaml_prescan.h"

namespace cs::hw {

namespace {

std::string describe(const YAML::Node& n) {
  switch (n.Type()) {
    case YAML::NodeType::Map: return "a map";
    case YAML::NodeType::Sequence: return "a list";
    case YAML::NodeType::Null: return "an empty value";
    case YAML::NodeType::Scalar: {
      // One line of valid UTF-8 whatever the value holds: control characters are escaped and a
      // long value is cut at a character boundary.
      const std::string& v = n.Scalar();
      std::string out;
      size_t chars = 0;
      for (size_t i = 0; i < v.size() && chars < 40; ++chars) {
        const auto c = static_cast<unsigned char>(v[i]);
        if (c < 0x20 || c == 0x7F) {
          out += c == '\n' ? "\\n" : c == '\t' ? "\\t" : "?";
          ++i;
          continue;
        }
        size_t len = 1;
        if (c >= 0xF0) len = 4;
        else if (c >= 0xE0) len = 3;
        else if (c >= 0xC0) len = 2;
        out.append(v, i, len);
        i += len;
      }
      if (chars == 40 && out.size() < v.size()) out += "...";
      return "'" + out + "'";
    }
    default: return "nothing";
  }
}

std::string where(const std::string& path) { return path.empty() ? "the top level" : "'" + path + "'"; }

std::string join(const std::vector<std::string>& v) {
  std::string out;
  for (size_t i = 0; i < v.size(); ++i) out += (i ? ", " : "") + v[i];
  return out;
}

}  // namespace

YamlNode::YamlNode(YAML::Node node, std::shared_ptr<const YamlSource> src, std::string path, int depth)
    : node_(std::move(node)), src_(std::move(src)), path_(std::move(path)), depth_(depth) {
  if (!node_.Mark().is_null()) {
    line_ = node_.Mark().line + 1;
    col_ = node_.Mark().column + 1;
  } else if (depth_ == 0) {
    line_ = col_ = 1;  // an empty document: its start
  }
  if (depth_ > kMaxYamlDepth)
    fail("nesting deeper than " + std::to_string(kMaxYamlDepth) + " levels");
}

YamlNode& YamlNode::operator=(const YamlNode& o) {
  if (this == &o) return *this;
  node_.reset(o.node_);
  src_ = o.src_;
  path_ = o.path_;
  depth_ = o.depth_;
  line_ = o.line_;
  col_ = o.col_;
  return *this;
}

YamlNode YamlNode::merged_with(const YamlNode& over) const {
  if (!is_map()) fail("expected a map");
  if (!over.is_map()) over.fail("expected a map");
  const auto key_of = [](const YAML::Node& k) { return k.IsScalar() ? k.Scalar() : std::string(); };
  std::vector<std::string> replaced;
  for (const auto& kv : over.node_) replaced.push_back(key_of(kv.first));
  YAML::Node merged(YAML::NodeType::Map);
  for (const auto& kv : node_)
    if (std::find(replaced.begin(), replaced.end(), key_of(kv.first)) == replaced.end()) merged.force_insert(kv.first, kv.second);
  for (const auto& kv : over.node_) merged.force_insert(kv.first, kv.second);
  YamlNode out = *this;
  out.node_.reset(merged);  // rebind: assigning would rewrite this map, which `out` still shares
  return out;
}

void YamlNode::fail(const std::string& message) const { throw UserError(src_->file, line(), col(), message); }

bool YamlNode::is_plain_scalar() const { return node_.IsScalar() && node_.Tag() == "?"; }

void YamlNode::place_empty_item() {
  // yaml-cpp marks an empty item with the next token's position. Walk back to the '-' that opened
  // it: a '-' followed by white space and preceded on its line only by spaces and other '- '.
  const auto& t = src_->text;
  if (node_.Mark().is_null()) return;
  size_t i = std::min(static_cast<size_t>(node_.Mark().pos), t.size());
  for (size_t steps = 0; i > 0 && steps < 65536; ++steps) {
    --i;
    if (t[i] != '-') continue;
    if (i + 1 < t.size() && t[i + 1] != ' ' && t[i + 1] != '\n' && t[i + 1] != '\t' && t[i + 1] != '\r') continue;
    size_t j = i;
    while (j > 0 && (t[j - 1] == ' ' || t[j - 1] == '-')) --j;
    if (j > 0 && t[j - 1] != '\n') continue;
    auto [l, c] = position_of(t, i);
    line_ = l;
    col_ = c;
    return;
  }
}

std::string YamlNode::as_string() const {
  if (!node_.IsScalar()) fail(where(path_) + " must be a string, found " + describe(node_));
  return node_.Scalar();
}

std::string YamlNode::as_enum(const std::vector<std::string>& choices) const {
  const std::string v = as_string();
  if (std::find(choices.begin(), choices.end(), v) != choices.end()) return v;
  std::string msg = where(path_) + " must be one of " + join(choices) + ", found '" + v + "'";
  const std::string near = nearest(v, choices);
  if (!near.empty()) msg += "; did you mean '" + near + "'?";
  fail(msg);
}

bool YamlNode::as_bool() const {
  if (is_plain_scalar()) {
    if (node_.Scalar() == "true") return true;
    if (node_.Scalar() == "false") return false;
  }
  fail(where(path_) + " must be true or false, found " + describe(node_));
}

int64_t YamlNode::as_int(int64_t min, int64_t max) const {
  const std::string& s = node_.Scalar();
  const bool digits = !s.empty() && s.find_first_not_of("0123456789", s[0] == '-' || s[0] == '+') == std::string::npos &&
                      s.size() > static_cast<size_t>(s[0] == '-' || s[0] == '+');
  if (!is_plain_scalar() || !digits) fail(where(path_) + " must be an integer, found " + describe(node_));
  errno = 0;
  const long long v = std::strtoll(s.c_str(), nullptr, 10);
  if (errno == ERANGE || v < min || v > max)
    fail(where(path_) + " must be between " + std::to_string(min) + " and " + std::to_string(max) +
         ", found " + s);
  return v;
}

double YamlNode::as_double(double min, double max, bool min_exclusive) const {
  const std::string& s = node_.Scalar();
  const bool numeric = !s.empty() && s.find_first_not_of("0123456789+-.eE") == std::string::npos;
  errno = 0;
  char* end = nullptr;
  double v = numeric ? std::strtod(s.c_str(), &end) : 0.0;
  if (!is_plain_scalar() || !numeric || *end != '\0')
    fail(where(path_) + " must be a number, found " + describe(node_));
  if (errno == ERANGE && std::fabs(v) < 1.0) v = 0.0;  // underflow: as good as zero
  // Overflow (1e999) falls through to the range checks as +-infinity.
  std::ostringstream range;
  range << (min_exclusive ? "greater than " : "at least ") << min;
  if (min_exclusive ? !(v > min) : !(v >= min)) fail(where(path_) + " must be " + range.str() + ", found " + s);
  if (!(v <= max)) {
    std::ostringstream m;
    m << where(path_) << " must be at most " << max << ", found " << s;
    fail(m.str());
  }
  return v;
}

std::vector<YamlNode> YamlNode::items() const {
  if (!node_.IsSequence()) fail(where(path_) + " must be a list, found " + describe(node_));
  std::vector<YamlNode> out;
  size_t i = 0;
  for (const auto& child : node_) {
    out.emplace_back(child, src_, path_ + "[" + std::to_string(i) + "]", depth_ + 1);
    if (child.IsNull()) out.back().place_empty_item();
    ++i;
  }
  return out;
}

YamlMap::YamlMap(const YamlNode& node, const std::vector<std::string>& allowed)
    : YamlMap(node, &allowed, "keys " + join(allowed)) {}

YamlMap YamlMap::with_any_keys(const YamlNode& node, const std::string& what) {
  return YamlMap(node, nullptr, what);
}

YamlMap::YamlMap(const YamlNode& node, const std::vector<std::string>* allowed_keys,
                 const std::string& what)
    : node_(node) {
  if (!node.node_.IsMap())
    node.fail(where(node.path_) + " must be a map with " + what + ", found " + describe(node.node_));
  std::map<std::string, std::pair<int, int>> seen;
  for (const auto& kv : node.node_) {
    const YamlNode key(kv.first, node.src_, node.path_, node.depth_ + 1);
    if (!kv.first.IsScalar()) key.fail("a key in " + where(node.path_) + " must be a plain name, found " + describe(kv.first));
    const std::string name = kv.first.Scalar();
    if (auto it = seen.find(name); it != seen.end())
      key.fail("duplicate key '" + name + "' in " + where(node.path_) + " (first at line " +
               std::to_string(it->second.first) + ", column " + std::to_string(it->second.second) + ")");
    seen.emplace(name, std::make_pair(key.line(), key.col()));
    if (allowed_keys && std::find(allowed_keys->begin(), allowed_keys->end(), name) == allowed_keys->end()) {
      std::string msg = "unknown key '" + name + "' in " + where(node.path_);
      const std::string near = nearest(name, *allowed_keys);
      msg += near.empty() ? "; valid keys: " + join(*allowed_keys) : "; did you mean '" + near + "'?";
      key.fail(msg);
    }
    const std::string child_path = node.path_.empty() ? name : node.path_ + "." + name;
    YamlNode value(kv.second, node.src_, child_path, node.depth_ + 1);
    // yaml-cpp marks an empty value with the next token's position: point at the key instead.
    if (kv.second.IsNull()) {
      value.line_ = key.line_;
      value.col_ = key.col_;
    }
    entries_.emplace_back(name, std::move(value));
  }
}

bool YamlMap::has(std::string_view key) const {
  return std::any_of(entries_.begin(), entries_.end(), [&](const auto& e) { return e.first == key; });
}

std::optional<YamlNode> YamlMap::optional(std::string_view key) const {
  for (const auto& e : entries_)
    if (e.first == key) return e.second;
  return std::nullopt;
}

YamlNode YamlMap::required(std::string_view key) const {
  if (auto v = optional(key)) return *v;
  node_.fail("missing required key '" + std::string(key) + "' in " + where(node_.path()));
}

std::vector<std::string> YamlMap::keys() const {
  std::vector<std::string> out;
  for (const auto& e : entries_) out.push_back(e.first);
  return out;
}

std::string YamlMap::exactly_one_of(const std::vector<std::string>& keys) const {
  std::string found;
  for (const auto& e : entries_) {
    if (std::find(keys.begin(), keys.end(), e.first) == keys.end()) continue;
    if (!found.empty())
      e.second.fail("'" + found + "' and '" + e.first + "' cannot both be given in " + where(node_.path()));
    found = e.first;
  }
  if (found.empty()) node_.fail(where(node_.path()) + " needs one of " + join(keys));
  return found;
}

YamlNode parse_yaml(std::string_view text, const std::string& file) {
  if (text.size() > kMaxYamlBytes)
    throw UserError(file, 1, 1, "file is " + std::to_string(text.size()) + " bytes; at most " +
                                    std::to_string(kMaxYamlBytes) + " (8 MiB) are read");
  prescan_yaml(text, file);
  // yaml-cpp gets LF line ends only: 0.7 stumbles on a '\r' that ends the file (a CRLF text whose
  // last "\n" was cut: after a flow collection it reports "end of map not found"). A '\r' ends its
  // line, so removing it changes no line or column.
  std::string lf;
  lf.reserve(text.size());
  for (size_t i = 0; i < text.size(); ++i)
    if (text[i] != '\r' || (i + 1 < text.size() && text[i + 1] != '\n')) lf += text[i];
  auto src = std::make_shared<const YamlSource>(YamlSource{file, std::move(lf)});
  YAML::Node doc;
  try {
    // Load, not LoadAll: the prescan has refused a second document, and LoadAll can loop forever
    // on input after the first.
    doc = YAML::Load(src->text);
  } catch (const YAML::DeepRecursion& e) {
    throw UserError(file, e.mark.line + 1, e.mark.column + 1, "nesting too deep for the YAML parser");
  } catch (const YAML::Exception& e) {
    const int line = e.mark.is_null() ? 1 : e.mark.line + 1;
    const int col = e.mark.is_null() ? 1 : e.mark.column + 1;
    // yaml-cpp can quote a raw byte of a multi-byte character: keep the message valid UTF-8.
    std::string msg;
    for (size_t i = 0; i < e.msg.size();) {
      const size_t n = utf8_length(e.msg, i);
      msg += n ? e.msg.substr(i, n) : "?";
      i += n ? n : 1;
    }
    throw UserError(file, line, col, "YAML syntax error: " + msg);
  }
  return YamlNode(doc, src, "", 0);
}

YamlNode load_yaml_file(const std::string& path) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) throw UserError(path, 0, 0, "is a directory, not a scenario file");
  std::ifstream in(path, std::ios::binary);
  if (!in) throw UserError(path, 0, 0, "cannot open the file");
  in.seekg(0, std::ios::end);
  const auto size = static_cast<size_t>(in.tellg());
  if (in.fail()) throw UserError(path, 0, 0, "cannot read the file (is it a directory?)");
  if (size > kMaxYamlBytes)
    throw UserError(path, 1, 1, "file is " + std::to_string(size) + " bytes; at most " +
                                    std::to_string(kMaxYamlBytes) + " (8 MiB) are read");
  in.seekg(0);
  std::string text(size, '\0');
  in.read(text.data(), static_cast<std::streamsize>(size));
  if (!in) throw UserError(path, 0, 0, "cannot read the file");
  return parse_yaml(text, path);
}

std::string nearest(std::string_view word, const std::vector<std::string>& candidates) {
  std::string best;
  size_t best_d = SIZE_MAX;
  for (const auto& c : candidates) {
    // Levenshtein distance, one row at a time.
    std::vector<size_t> row(c.size() + 1);
    for (size_t j = 0; j <= c.size(); ++j) row[j] = j;
    for (size_t i = 1; i <= word.size(); ++i) {
      size_t diag = row[0];
      row[0] = i;
      for (size_t j = 1; j <= c.size(); ++j) {
        const size_t up = row[j];
        const bool same = std::tolower(static_cast<unsigned char>(word[i - 1])) ==
                          std::tolower(static_cast<unsigned char>(c[j - 1]));
        row[j] = std::min({row[j] + 1, row[j - 1] + 1, diag + (same ? 0 : 1)});
        diag = up;
      }
    }
    if (row[c.size()] < best_d) {
      best_d = row[c.size()];
      best = c;
    }
  }
  const size_t limit = std::max<size_t>(2, word.size() / 3);
  return best_d <= limit ? best : "";
}

}  // namespace cs::hw
